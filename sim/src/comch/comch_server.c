/*
 * Comch server context (DPU side): listens on a Unix socket named after its representor's PCI address and its
 * name, accepts clients, reports connect/disconnect through the connection-status callbacks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comch_internal.h"
#include "accessors.h"

static doca_error_t server_start(struct doca_ctx *ctx);
static doca_error_t server_stop(struct doca_ctx *ctx);
static int server_progress(struct doca_ctx *ctx);

/* Running, its sends in flight wait for room in sockets the pe watches for writing */
static bool server_waits_on_fd(const struct doca_ctx *ctx)
{
	const struct doca_comch_server *s = (const struct doca_comch_server *)ctx;

	if (ctx->state != DOCA_CTX_STATE_RUNNING)
		return false;
	for (const struct doca_comch_connection *c = s->conns; c != NULL; c = c->next)
		if (!comch_conn_sends_wait_on_fd(c))
			return false;
	return true;
}

static const struct sim_ctx_ops server_ops =
	COMCH_ENDPOINT_CTX_OPS("comch_server", server_start, server_stop, server_progress, server_waits_on_fd);

static struct doca_comch_server *as_server(struct doca_ctx *ctx)
{
	return (struct doca_comch_server *)ctx;
}

static doca_error_t server_start(struct doca_ctx *ctx)
{
	struct doca_comch_server *s = as_server(ctx);
	doca_error_t err;
	int rc;

	if (sim_dir() == NULL) /* the reason was logged: runtime_dir.c */
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "comch server: the runtime folder was refused");
	rc = comch_server_path(s->path, sizeof(s->path), sim_dir(), s->rep->info->pci_addr, s->name);
	if (rc != 0)
		return sim_fail(DOCA_ERROR_INITIALIZATION, "comch server: socket path too long in %s", sim_dir());
	/* A live server already answers on this name and representor: refuse rather than steal its socket (a file
	 * left by a dead server refuses connections and is replaced). The probe looks like a client that gave up
	 * before its HELLO, which the other server drops without any callback. */
	rc = comch_connect(s->path);
	if (rc >= 0 || rc == -EAGAIN) { /* EAGAIN: alive, its backlog is just full */
		if (rc >= 0)
			close(rc);
		return sim_fail(DOCA_ERROR_IN_USE, "comch server: \"%s\" is already served on %s", s->name,
				s->rep->info->pci_addr);
	}
	err = comch_send_pool_create(&s->ep);
	if (err != DOCA_SUCCESS)
		return err;
	s->listen_fd = comch_listen(s->path);
	if (s->listen_fd < 0) {
		comch_send_pool_destroy(&s->ep);
		return sim_fail(DOCA_ERROR_INITIALIZATION, "comch server: cannot listen on %s: %s", s->path,
				strerror(-s->listen_fd));
	}
	comch_watch(ctx, s->listen_fd);
	return DOCA_SUCCESS;
}

/* Frees dead connections nobody references any more (never while a callback may still hold one) */
static void reap_connections(struct doca_comch_server *s)
{
	struct doca_comch_connection **link = &s->conns;

	while (*link != NULL) {
		struct doca_comch_connection *c = *link;

		if (c->state == COMCH_CONN_DEAD && c->pending_head == NULL) {
			*link = c->next;
			if (comch_conn_release_if_unused(c)) {
				s->num_conns--;
				continue;
			}
			/* Still used by a producer/consumer: keep it listed */
			c->next = *link;
			*link = c;
		}
		link = &(*link)->next;
	}
}

static doca_error_t server_stop(struct doca_ctx *ctx)
{
	struct doca_comch_server *s = as_server(ctx);
	struct doca_comch_connection *c;

	for (c = s->conns; c != NULL; c = c->next)
		comch_conn_kill(c, true, SIM_TASK_FLUSHED_STATUS);
	if (s->listen_fd >= 0) {
		comch_unwatch(ctx, s->listen_fd);
		close(s->listen_fd);
		s->listen_fd = -1;
		(void)unlink(s->path);
	}
	/* Dead connections are freed later (progress or destroy): a callback may be running on one right now */
	return DOCA_SUCCESS;
}

static int accept_clients(struct doca_comch_server *s)
{
	int did = 0;

	for (;;) {
		struct doca_comch_connection *c;
		int fd = comch_accept(s->listen_fd);

		if (fd < 0)
			break;
		did = 1;
		if (s->num_conns >= comch_cap_max_clients(s->ep.dev->info)) {
			close(fd);
			continue;
		}
		c = comch_conn_new(&s->ep, fd);
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->next = s->conns;
		s->conns = c;
		s->num_conns++;
	}
	return did;
}

static int server_progress(struct doca_ctx *ctx)
{
	struct doca_comch_server *s = as_server(ctx);
	struct doca_comch_connection *c;
	int did = 0;

	if (ctx->state != DOCA_CTX_STATE_RUNNING || s->listen_fd < 0) {
		reap_connections(s);
		return 0;
	}
	did |= accept_clients(s);
	for (c = s->conns; c != NULL && ctx->state == DOCA_CTX_STATE_RUNNING; c = c->next)
		did |= comch_conn_progress(c);
	reap_connections(s);
	return did;
}

static void server_conn_active(struct doca_comch_connection *conn)
{
	struct doca_comch_server *s = (struct doca_comch_server *)conn->ep;

	conn->connect_reported = true;
	if (s->connect_cb != NULL)
		s->connect_cb((struct doca_comch_event_connection_status_changed *)s, conn, 1);
}

static void server_conn_dead(struct doca_comch_connection *conn)
{
	struct doca_comch_server *s = (struct doca_comch_server *)conn->ep;

	if (!conn->connect_reported)
		return; /* never completed the handshake: the user never saw it */
	conn->connect_reported = false;
	if (s->disconnect_cb != NULL)
		s->disconnect_cb((struct doca_comch_event_connection_status_changed *)s, conn, 1);
}

static const struct comch_ep_ops server_conn_ops = {.conn_active = server_conn_active, .conn_dead = server_conn_dead};

/* ---- public API ---- */

SIM_EXPORT doca_error_t doca_comch_server_create(struct doca_dev *dev, struct doca_dev_rep *repr, const char *name,
						 struct doca_comch_server **comch_server)
{
	struct doca_comch_server *s;
	size_t name_len;
	doca_error_t err;

	if (dev == NULL || repr == NULL || name == NULL || comch_server == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: NULL argument", __func__);
	if (!dev->info->caps.comch_server_supported)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s: %s cannot run a comch server (DPU side only)", __func__,
				dev->info->pci_addr);
	if (repr->info->owner != dev->info)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: representor %s does not belong to %s", __func__,
				repr->info->pci_addr, dev->info->pci_addr);
	name_len = strlen(name);
	if (name_len == 0 || name_len + 1 > comch_cap_max_name_len(dev->info))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: name length %zu not in 1..%u", __func__, name_len,
				comch_cap_max_name_len(dev->info) - 1);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = comch_ep_init(&s->ep, dev, true);
	s->ep.ops = &server_conn_ops;
	if (err != DOCA_SUCCESS) {
		free(s);
		return err;
	}
	memcpy(s->name, name, name_len + 1);
	s->rep = repr;
	s->listen_fd = -1;
	sim_ctx_init(&s->ep.ctx, &server_ops, dev);
	repr->refs++;
	*comch_server = s;
	return DOCA_SUCCESS;
}

SIM_EXPORT doca_error_t doca_comch_server_destroy(struct doca_comch_server *comch_server)
{
	struct doca_comch_connection *c;
	doca_error_t err;

	SIM_RETURN_IF_NULL_OR_DEAD(comch_server, ep.ctx.magic, "comch_server");
	for (c = comch_server->conns; c != NULL; c = c->next)
		if (c->users != 0)
			return sim_fail(DOCA_ERROR_IN_USE, "%s: destroy its producers/consumers first", __func__);
	err = sim_ctx_fini(&comch_server->ep.ctx);
	if (err != DOCA_SUCCESS)
		return err;
	while (comch_server->conns != NULL) {
		struct doca_comch_connection *c = comch_server->conns;

		comch_server->conns = c->next;
		comch_conn_free(c);
	}
	comch_ep_fini(&comch_server->ep);
	comch_server->rep->refs--;
	sim_release(comch_server, &comch_server->ep.ctx.magic);
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_VALUE_GETTER(struct doca_ctx *, doca_comch_server_as_ctx, struct doca_comch_server, comch_server, NULL,
	&comch_server->ep.ctx)

SIM_EXPORT SIM_GETTER(doca_comch_server_get_device_rep, const struct doca_comch_server, comch_server,
	struct doca_dev_rep *, rep, comch_server->rep)

/* DOCA 2.7 spelling */
SIM_EXPORT doca_error_t doca_comch_server_get_device_repr(const struct doca_comch_server *comch_server,
							  struct doca_dev_rep **repr)
{
	return doca_comch_server_get_device_rep(comch_server, repr);
}

SIM_EXPORT doca_error_t doca_comch_server_event_connection_status_changed_register(
	struct doca_comch_server *comch_server, doca_comch_event_connection_status_changed_cb_t connect_event_cb,
	doca_comch_event_connection_status_changed_cb_t disconnect_event_cb)
{
	if (comch_server == NULL || connect_event_cb == NULL || disconnect_event_cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_ctx_is_idle(&comch_server->ep.ctx))
		return DOCA_ERROR_BAD_STATE;
	comch_server->connect_cb = connect_event_cb;
	comch_server->disconnect_cb = disconnect_event_cb;
	return DOCA_SUCCESS;
}

/* DOCA 2.7 spelling */
SIM_EXPORT doca_error_t doca_comch_server_event_connection_register(
	struct doca_comch_server *comch_server, doca_comch_event_connection_status_changed_cb_t connect_cb,
	doca_comch_event_connection_status_changed_cb_t disconnect_cb)
{
	return doca_comch_server_event_connection_status_changed_register(comch_server, connect_cb, disconnect_cb);
}

SIM_EXPORT doca_error_t doca_comch_server_disconnect(struct doca_comch_server *comch_server,
						     struct doca_comch_connection *connection)
{
	uint32_t users;

	if (comch_server == NULL || connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(comch_server, ep.ctx.magic, "comch_server", DOCA_ERROR_INVALID_VALUE);
	if (connection->ep != &comch_server->ep)
		return DOCA_ERROR_INVALID_VALUE;
	if (connection->state == COMCH_CONN_DEAD)
		return sim_fail(DOCA_ERROR_NOT_CONNECTED, "%s: connection already closed", __func__);
	pthread_mutex_lock(&connection->lock);
	users = connection->users;
	pthread_mutex_unlock(&connection->lock);
	if (users != 0)
		return sim_fail(DOCA_ERROR_IN_USE, "%s: %u producers/consumers still use the connection", __func__,
				users);
	/* DOCA answers DOCA_ERROR_AGAIN when it cannot queue the disconnection message yet ("call again later"). We do
	 * so, deterministically, while send tasks on this connection are in flight (submitted, completion not yet
	 * delivered): callers' retry paths run on every such disconnect instead of only under load on hardware. */
	if (comch_send_inflight_on(connection))
		return sim_fail(DOCA_ERROR_AGAIN, "%s: send tasks still in flight on the connection", __func__);
	/* The user asked for it: the peer is told, no disconnect callback is owed locally */
	connection->connect_reported = false;
	comch_conn_kill(connection, true, DOCA_ERROR_NOT_CONNECTED);
	return DOCA_SUCCESS;
}
