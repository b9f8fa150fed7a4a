/*
 * Comch client context (host side). doca_ctx_start returns DOCA_ERROR_IN_PROGRESS; progress keeps trying to reach
 * the server whose representor is this device's PCI function (a real client also waits for its server), sends a
 * HELLO and becomes RUNNING on the server's HELLO_ACK. Losing the server moves the context to IDLE through
 * STOPPING, failing queued sends with DOCA_ERROR_NOT_CONNECTED.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "comch_internal.h"
#include "accessors.h"

static doca_error_t client_start(struct doca_ctx *ctx);
static doca_error_t client_stop(struct doca_ctx *ctx);
static int client_progress(struct doca_ctx *ctx);
static bool client_waits_on_fd(const struct doca_ctx *ctx);

static const struct sim_ctx_ops client_ops =
	COMCH_ENDPOINT_CTX_OPS("comch_client", client_start, client_stop, client_progress, client_waits_on_fd);

static struct doca_comch_client *as_client(struct doca_ctx *ctx)
{
	return (struct doca_comch_client *)ctx;
}

/* While connecting, a periodic timer in the pe's epoll set wakes callers that sleep on the notification handle */
static void retry_timer_start(struct doca_comch_client *c)
{
	struct itimerspec period = {.it_interval = {.tv_nsec = COMCH_CONNECT_RETRY_NS},
				    .it_value = {.tv_nsec = COMCH_CONNECT_RETRY_NS}};

	c->retry_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->retry_fd < 0)
		return; /* busy-polling callers still work */
	(void)timerfd_settime(c->retry_fd, 0, &period, NULL);
	comch_watch(&c->ep.ctx, c->retry_fd);
}

static void retry_timer_stop(struct doca_comch_client *c)
{
	if (c->retry_fd < 0)
		return;
	comch_unwatch(&c->ep.ctx, c->retry_fd);
	close(c->retry_fd);
	c->retry_fd = -1;
}

static void retry_timer_drain(struct doca_comch_client *c)
{
	uint64_t ticks;

	if (c->retry_fd >= 0)
		(void)!read(c->retry_fd, &ticks, sizeof(ticks));
}

static doca_error_t client_start(struct doca_ctx *ctx)
{
	struct doca_comch_client *c = as_client(ctx);
	doca_error_t err;

	if (sim_dir() == NULL) /* the reason was logged: runtime_dir.c */
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "comch client: the runtime folder was refused");
	if (comch_server_path(c->path, sizeof(c->path), sim_dir(), c->ep.dev->info->pci_addr, c->name) != 0)
		return sim_fail(DOCA_ERROR_INITIALIZATION, "comch client: socket path too long in %s", sim_dir());
	if (c->conn != NULL && !comch_conn_release_if_unused(c->conn))
		return sim_fail(DOCA_ERROR_IN_USE, "comch client: previous connection still used by producers/consumers");
	c->conn = NULL;
	err = comch_send_pool_create(&c->ep);
	if (err != DOCA_SUCCESS)
		return err;
	c->conn = comch_conn_new(&c->ep, -1);
	if (c->conn == NULL) {
		comch_send_pool_destroy(&c->ep);
		return DOCA_ERROR_NO_MEMORY;
	}
	c->next_attempt_ns = 0;
	retry_timer_start(c);
	return DOCA_ERROR_IN_PROGRESS;
}

static doca_error_t client_stop(struct doca_ctx *ctx)
{
	struct doca_comch_client *c = as_client(ctx);

	retry_timer_stop(c);
	/* An orderly stop tells the server (DISCONNECT frame) before closing */
	if (c->conn != NULL)
		comch_conn_kill(c->conn, true, SIM_TASK_FLUSHED_STATUS);
	return DOCA_SUCCESS;
}

/* One connection attempt; quietly retried later while no server listens */
static int try_connect(struct doca_comch_client *c)
{
	struct comch_hello hello = {.version = COMCH_WIRE_VERSION, .pid = (uint32_t)getpid(),
				    .max_msg_size = c->ep.max_msg_size};
	int64_t now = comch_now_ns();
	int fd;

	if (now < c->next_attempt_ns)
		return 0;
	c->next_attempt_ns = now + COMCH_CONNECT_RETRY_NS;
	fd = comch_connect(c->path);
	if (fd < 0)
		return 0;
	if (comch_send_frame(fd, COMCH_FRAME_HELLO, hello.pid, &hello, sizeof(hello), -1) != 0) {
		close(fd);
		return 0;
	}
	c->conn->fd = fd;
	c->conn->state = COMCH_CONN_HANDSHAKE;
	comch_watch(&c->ep.ctx, fd);
	c->conn->watched = true;
	return 1;
}

/* Starting, the client waits for a server (the retry timer in the pe's epoll set says when to try again) or for the
 * server's answer to its hello (on its watched socket; the same timer keeps ticking until the connection is up, so
 * the handshake's deadline is still checked): an event-driven program started long before its server, or facing a
 * server that is slow to answer, must not spin */
static bool client_waits_on_fd(const struct doca_ctx *ctx)
{
	const struct doca_comch_client *c = (const struct doca_comch_client *)ctx;
	if (ctx->state == DOCA_CTX_STATE_RUNNING) /* sends in flight: waiting for room in the watched socket */
		return c->conn != NULL && comch_conn_sends_wait_on_fd(c->conn);
	return ctx->state == DOCA_CTX_STATE_STARTING && ctx->inflight == 0 && c->conn != NULL && c->retry_fd >= 0 &&
	       (c->conn->fd < 0 || c->conn->watched);
}

static int client_progress(struct doca_ctx *ctx)
{
	struct doca_comch_client *c = as_client(ctx);

	if (c->conn == NULL)
		return 0;
	if (ctx->state == DOCA_CTX_STATE_STARTING)
		retry_timer_drain(c); /* also while the hello waits for its answer: an undrained tick keeps the fd readable */
	if (ctx->state == DOCA_CTX_STATE_STARTING && c->conn->fd < 0)
		return try_connect(c);
	if (ctx->state != DOCA_CTX_STATE_STARTING && ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	return comch_conn_progress(c->conn);
}

static void client_conn_active(struct doca_comch_connection *conn)
{
	struct doca_comch_client *c = (struct doca_comch_client *)conn->ep;

	retry_timer_stop(c);
	sim_ctx_set_state(&c->ep.ctx, DOCA_CTX_STATE_RUNNING);
}

static void client_conn_dead(struct doca_comch_connection *conn)
{
	struct doca_comch_client *c = (struct doca_comch_client *)conn->ep;

	if (c->ep.ctx.state == DOCA_CTX_STATE_STARTING) {
		/* Refused during the handshake (server restarting, full): try again as if it were not there yet */
		conn->state = COMCH_CONN_HANDSHAKE;
		return;
	}
	if (c->ep.ctx.state == DOCA_CTX_STATE_RUNNING)
		(void)doca_ctx_stop(&c->ep.ctx); /* RUNNING -> STOPPING -> IDLE once failed sends are reported */
}

static const struct comch_ep_ops client_conn_ops = {.conn_active = client_conn_active, .conn_dead = client_conn_dead};

/* ---- public API ---- */

SIM_EXPORT doca_error_t doca_comch_client_create(struct doca_dev *dev, const char *name,
						 struct doca_comch_client **comch_client)
{
	struct doca_comch_client *c;
	size_t name_len;
	doca_error_t err;

	if (dev == NULL || name == NULL || comch_client == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: NULL argument", __func__);
	if (!dev->info->caps.comch_client_supported)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s: %s cannot run a comch client (host side only)", __func__,
				dev->info->pci_addr);
	name_len = strlen(name);
	if (name_len == 0 || name_len + 1 > comch_cap_max_name_len(dev->info))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: name length %zu not in 1..%u", __func__, name_len,
				comch_cap_max_name_len(dev->info) - 1);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = comch_ep_init(&c->ep, dev, false);
	c->ep.ops = &client_conn_ops;
	if (err != DOCA_SUCCESS) {
		free(c);
		return err;
	}
	memcpy(c->name, name, name_len + 1);
	c->retry_fd = -1;
	sim_ctx_init(&c->ep.ctx, &client_ops, dev);
	*comch_client = c;
	return DOCA_SUCCESS;
}

SIM_EXPORT doca_error_t doca_comch_client_destroy(struct doca_comch_client *comch_client)
{
	doca_error_t err;

	SIM_RETURN_IF_NULL_OR_DEAD(comch_client, ep.ctx.magic, "comch_client");
	if (comch_client->conn != NULL && comch_client->conn->users != 0)
		return sim_fail(DOCA_ERROR_IN_USE, "%s: producers/consumers still use the connection", __func__);
	err = sim_ctx_fini(&comch_client->ep.ctx);
	if (err != DOCA_SUCCESS)
		return err;
	if (comch_client->conn != NULL)
		comch_conn_free(comch_client->conn);
	comch_ep_fini(&comch_client->ep);
	sim_release(comch_client, &comch_client->ep.ctx.magic);
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_VALUE_GETTER(struct doca_ctx *, doca_comch_client_as_ctx, struct doca_comch_client, comch_client, NULL,
	&comch_client->ep.ctx)

SIM_EXPORT doca_error_t doca_comch_client_get_connection(const struct doca_comch_client *comch_client,
							 struct doca_comch_connection **connection)
{
	if (comch_client == NULL || connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (comch_client->ep.ctx.state != DOCA_CTX_STATE_RUNNING || comch_client->conn == NULL)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: client not connected", __func__);
	*connection = comch_client->conn;
	return DOCA_SUCCESS;
}
