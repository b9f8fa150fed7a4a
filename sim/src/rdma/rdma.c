/*
 * Software DOCA device, libdoca_rdma: the RDMA context, its configuration, capabilities and connections.
 * Frames and the I/O thread are in rdma_io.c, task kinds in rdma_task.c; sim/RDMA.md has the whole picture.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "rdma_internal.h"
#include "accessors.h"

#define RDMA_DEFAULT_MAX_MESSAGE (1u << 30)
#define RDMA_DEFAULT_QUEUE_SIZE 4096

/* ---------------------------------------------------------------- capabilities (every device offers RC RDMA) */
#define DEVINFO_CHECK(d) \
	do { \
		if ((d) == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
	} while (0)

/* A capability every device reports with the same value: one line each */
#define CAP_U32(fn, value) \
	doca_error_t fn(const struct doca_devinfo *devinfo, uint32_t *out) \
	{ \
		DEVINFO_CHECK(devinfo); \
		if (out == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		*out = (value); \
		return DOCA_SUCCESS; \
	}
CAP_U32(doca_rdma_cap_get_max_message_size, RDMA_DEFAULT_MAX_MESSAGE)
CAP_U32(doca_rdma_cap_get_max_send_queue_size, RDMA_DEFAULT_QUEUE_SIZE)
CAP_U32(doca_rdma_cap_get_max_recv_queue_size, RDMA_DEFAULT_QUEUE_SIZE)
/* Local buffer lists (rdma_buflist.c): the device takes up to RDMA_MAX_BUF_LIST_LEN elements in each kind of list */
CAP_U32(doca_rdma_cap_get_max_send_buf_list_len, RDMA_MAX_BUF_LIST_LEN)
CAP_U32(doca_rdma_cap_get_gid_table_size, 1)
doca_error_t doca_rdma_cap_task_receive_get_max_dst_buf_list_len(const struct doca_devinfo *devinfo,
								 enum doca_rdma_transport_type transport_type,
								 uint32_t *max_buf_list_len)
{
	DEVINFO_CHECK(devinfo);
	if (max_buf_list_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (transport_type != DOCA_RDMA_TRANSPORT_TYPE_RC)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "rdma: the software device offers the RC transport only");
	*max_buf_list_len = RDMA_MAX_BUF_LIST_LEN;
	return DOCA_SUCCESS;
}
doca_error_t doca_rdma_cap_transport_type_is_supported(const struct doca_devinfo *devinfo,
						       enum doca_rdma_transport_type transport_type)
{
	DEVINFO_CHECK(devinfo);
	return transport_type == DOCA_RDMA_TRANSPORT_TYPE_RC ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}
#define TASK_CAP(kind) \
	doca_error_t doca_rdma_cap_task_##kind##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		DEVINFO_CHECK(devinfo); \
		return DOCA_SUCCESS; \
	}
TASK_CAP(write)
TASK_CAP(write_imm)
TASK_CAP(read)
TASK_CAP(send)
TASK_CAP(send_imm)
TASK_CAP(receive)
TASK_CAP(atomic_cmp_swp)
TASK_CAP(atomic_fetch_add)
TASK_CAP(remote_net_sync_event_get)
TASK_CAP(remote_net_sync_event_notify_set)
TASK_CAP(remote_net_sync_event_notify_add)

/* ---------------------------------------------------------------- context */
static void flush_all(struct doca_rdma *rdma, struct doca_task **out_head)
{
	/* lock held: every connection closed, every waiting task failed; hand the done list to the caller */
	for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next)
		if (c->state != CONN_CLOSED)
			rdma_conn_close(rdma, c, SIM_TASK_FLUSHED_STATUS);
	while (rdma->receives_head != NULL) {
		struct rdma_task *t = rdma->receives_head;
		rdma->receives_head = t->wait_next;
		rdma_finish_task(rdma, t, SIM_TASK_FLUSHED_STATUS);
	}
	rdma->receives_tail = NULL;
	*out_head = rdma->done_head;
	rdma->done_head = rdma->done_tail = NULL;
	while (rdma->events_head != NULL) {
		struct rdma_event *e = rdma->events_head;
		rdma->events_head = e->next;
		e->conn->events_pending--; /* dropped undelivered */
		free(e);
	}
	rdma->events_tail = NULL;
}

static void complete_list(struct doca_task *t)
{
	while (t != NULL) {
		struct doca_task *next = t->next;
		t->next = NULL;
		sim_task_complete(t, t->status);
		t = next;
	}
}

static doca_error_t rdma_start(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = (struct doca_rdma *)ctx;
	doca_error_t err;

	if (ctx->pe == NULL)
		return sim_fail(DOCA_ERROR_BAD_STATE, "doca_ctx_start: rdma context not connected to a pe");
	rdma->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rdma->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rdma->wake_fd < 0 || rdma->notify_fd < 0)
		goto fail;
	err = sim_pe_watch_fd(ctx->pe, rdma->notify_fd, ctx);
	if (err != DOCA_SUCCESS)
		goto fail;
	rdma->io_quit = false;
	rdma->notify_pending = false;
	err = rdma_io_start(rdma);
	if (err != DOCA_SUCCESS) {
		sim_pe_unwatch_fd(ctx->pe, rdma->notify_fd);
		goto fail;
	}
	return DOCA_SUCCESS;
fail:
	if (rdma->wake_fd >= 0)
		close(rdma->wake_fd);
	if (rdma->notify_fd >= 0)
		close(rdma->notify_fd);
	rdma->wake_fd = rdma->notify_fd = -1;
	return DOCA_ERROR_NO_MEMORY;
}

static bool any_kind_configured(const struct doca_rdma *rdma)
{
	for (int k = 0; k < RDMA_KIND_COUNT_; k++)
		if (rdma->conf[k].set)
			return true;
	return false;
}

static doca_error_t rdma_stop(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = (struct doca_rdma *)ctx;
	struct doca_task *done;

	rdma_io_stop(rdma); /* joins the I/O thread: nothing touches memory after this */
	pthread_mutex_lock(&rdma->lock);
	flush_all(rdma, &done);
	free(rdma->app_stage); /* no socket is read by progress any more: every connection is closed */
	rdma->app_stage = NULL;
	if (rdma->cm_listen_fd >= 0)
		close(rdma->cm_listen_fd);
	rdma->cm_listen_fd = -1;
	pthread_mutex_unlock(&rdma->lock);
	rdma_closing_finish(rdma); /* the connections' sockets, together (no other thread is left to do it) */
	complete_list(done);
	if (ctx->pe != NULL)
		sim_pe_unwatch_fd(ctx->pe, rdma->notify_fd);
	close(rdma->wake_fd);
	close(rdma->notify_fd);
	rdma->wake_fd = rdma->notify_fd = -1;
	/* A context configured for no task kind has nothing to flush and stops at once: NVIDIA's storage DPU program
	 * stops such a context (its RDMA data context, which only serves the target's writes and reads) and counts
	 * anything but DOCA_SUCCESS as a failure */
	if (!any_kind_configured(rdma))
		return DOCA_SUCCESS;
	/* Like DOCA's RDMA context, the stop otherwise completes later, in a progress call (NVIDIA's samples stop from a
	 * completion callback and expect DOCA_ERROR_IN_PROGRESS even with nothing in flight) */
	rdma->stop_pending = true;
	return DOCA_ERROR_IN_PROGRESS;
}

static int rdma_progress(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = (struct doca_rdma *)ctx;
	struct doca_task *done;
	struct rdma_event *events;
	uint64_t count;
	int did = 0;
	bool wake;

	if (rdma->stop_pending) {
		rdma->stop_pending = false;
		sim_ctx_kind_stopped(ctx);
		return 1;
	}
	pthread_mutex_lock(&rdma->lock);
	wake = rdma_io_app_read(rdma); /* the responses on the sockets this thread reads (rdma_io.c) */
	if (rdma->notify_pending && read(rdma->notify_fd, &count, sizeof(count)) < 0) {
		/* not readable after all: nothing to clear */
	}
	rdma->notify_pending = false;
	done = rdma->done_head;
	rdma->done_head = rdma->done_tail = NULL;
	events = rdma->events_head;
	rdma->events_head = rdma->events_tail = NULL;
	pthread_mutex_unlock(&rdma->lock);
	if (wake)
		rdma_io_wake(rdma);
	if (done != NULL || events != NULL)
		did = 1;
	complete_list(done);
	while (events != NULL) {
		struct rdma_event *e = events;
		struct doca_rdma_connection *c = e->conn;
		union doca_data cud = ctx->user_data;
		enum rdma_event_type type = e->type;
		events = e->next;
		free(e);
		switch (type) {
		case EV_REQUEST:
			if (rdma->on_request != NULL)
				rdma->on_request(c, cud);
			else
				doca_rdma_connection_accept(c, NULL, 0);
			break;
		case EV_ESTABLISHED:
			if (rdma->on_established != NULL)
				rdma->on_established(c, c->user_data, cud);
			break;
		case EV_FAILURE:
			if (rdma->on_failure != NULL)
				rdma->on_failure(c, c->user_data, cud);
			break;
		case EV_DISCONNECTED:
			if (rdma->on_disconnect != NULL)
				rdma->on_disconnect(c, c->user_data, cud);
			break;
		}
		pthread_mutex_lock(&rdma->lock);
		c->events_pending--;
		pthread_mutex_unlock(&rdma->lock);
	}
	return did;
}

static doca_error_t rdma_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_rdma *rdma = (struct doca_rdma *)ctx;
	struct rdma_task *t = (struct rdma_task *)task;
	doca_error_t err = DOCA_SUCCESS;
	bool wake;

	pthread_mutex_lock(&rdma->lock);
	if (t->kind == RDMA_RECEIVE && t->dst != NULL &&
	    (err = rdma_list_check_local(t->dst, rdma->recv_buf_list_len, "rdma_receive", "destination",
					 "the receive dst_buf_list_len")) != DOCA_SUCCESS) {
		/* completed with the error below, never posted */
	} else if (t->kind == RDMA_RECEIVE) {
		SIM_QUEUE_APPEND(rdma->receives_head, rdma->receives_tail, t, wait_next);
	} else {
		err = rdma_task_issue(rdma, t);
	}
	wake = err == DOCA_SUCCESS && rdma_io_claim_wake(rdma);
	pthread_mutex_unlock(&rdma->lock);
	if (err != DOCA_SUCCESS)
		sim_task_complete(task, err);
	else if (wake)
		rdma_io_wake(rdma);
	return DOCA_SUCCESS;
}

/* Running, the I/O thread carries every task and connection event out and writes notify_fd when one is done; a stop
 * completes in a progress call */
static bool rdma_waits_on_fd(const struct doca_ctx *ctx)
{
	return ctx->state == DOCA_CTX_STATE_RUNNING;
}

static const struct sim_ctx_ops rdma_ops = {
	.kind = "rdma",
	.start = rdma_start,
	.stop = rdma_stop,
	.progress = rdma_progress,
	.submit = rdma_submit,
	.ordered_completions = false,
	.waits_on_fd = rdma_waits_on_fd,
};

doca_error_t doca_rdma_create(struct doca_dev *dev, struct doca_rdma **rdma)
{
	struct doca_rdma *r;

	if (dev == NULL || rdma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_NEW_HANDLE_OR_RETURN(r);
	sim_ctx_init(&r->ctx, &rdma_ops, dev);
	r->permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
	r->max_conns = 1;
	r->send_queue_size = r->recv_queue_size = 32;
	/* DOCA's headers leave the defaults unsaid; one buffer per list until the program asks for more */
	r->max_send_buf_list_len = r->recv_buf_list_len = 1;
	r->wake_fd = r->notify_fd = r->cm_listen_fd = -1;
	r->next_conn_id = 1;
	r->next_request_id = 1;
	pthread_mutex_init(&r->lock, NULL);
	rdma_task_ops_init();
	*rdma = r;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_destroy(struct doca_rdma *rdma)
{
	SIM_CTX_FINI_OR_RETURN(rdma, magic, ctx, "rdma");
	rdma_closing_finish(rdma); /* empty once stopped; a context never started has none */
	while (rdma->conns != NULL) {
		struct doca_rdma_connection *c = rdma->conns;
		rdma->conns = c->next;
		if (c->listen_fd >= 0)
			close(c->listen_fd);
		sim_live_dec(SIM_KIND_CONNECTION);
		free(c);
	}
	pthread_mutex_destroy(&rdma->lock);
	sim_release(rdma, &rdma->magic);
	return DOCA_SUCCESS;
}

SIM_VALUE_GETTER(struct doca_ctx *, doca_rdma_as_ctx, struct doca_rdma, rdma, NULL, &rdma->ctx)

#define CONFIG_CHECK(r) \
	do { \
		if ((r) == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		SIM_RETURN_IF_DEAD((r), magic, "rdma", DOCA_ERROR_INVALID_VALUE); \
		if (!sim_ctx_is_idle(&(r)->ctx)) \
			return sim_fail(DOCA_ERROR_BAD_STATE, "%s: rdma context is not idle", __func__); \
	} while (0)

doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions)
{
	const uint32_t known = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			       DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	CONFIG_CHECK(rdma);
	if (permissions & ~known)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: 0x%x has flags that do not apply to RDMA", __func__,
				permissions);
	rdma->permissions = permissions;
	return DOCA_SUCCESS;
}

SIM_GETTER(doca_rdma_get_permissions, struct doca_rdma, rdma, uint32_t, permissions, rdma->permissions)

doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index)
{
	CONFIG_CHECK(rdma);
	if (gid_index != 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: the GID table has one entry (index 0)", __func__);
	rdma->gid_index = gid_index;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_max_num_connections(struct doca_rdma *rdma, uint16_t max_num_connections)
{
	CONFIG_CHECK(rdma);
	if (max_num_connections == 0)
		return DOCA_ERROR_INVALID_VALUE;
	rdma->max_conns = max_num_connections;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type)
{
	CONFIG_CHECK(rdma);
	if (transport_type != DOCA_RDMA_TRANSPORT_TYPE_RC)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s: only RC is offered by the software device", __func__);
	return DOCA_SUCCESS;
}

/*
 * The sizes and list lengths a context takes before it starts: each one a bounded value with its setter (the context
 * must be idle) and, where DOCA has one, its getter. One line each below.
 */
#define RDMA_BOUNDED_SETTER(fn, field, lo, hi) \
	doca_error_t fn(struct doca_rdma *rdma, uint32_t value) \
	{ \
		CONFIG_CHECK(rdma); \
		if (value < (lo) || value > (hi)) \
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %u is outside %u..%u", __func__, value, \
					(unsigned)(lo), (unsigned)(hi)); \
		rdma->field = value; \
		return DOCA_SUCCESS; \
	}
#define RDMA_GETTER(fn, field) \
	doca_error_t fn(const struct doca_rdma *rdma, uint32_t *value) \
	{ \
		if (rdma == NULL || value == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		SIM_RETURN_IF_DEAD(rdma, magic, "rdma", DOCA_ERROR_INVALID_VALUE); \
		*value = rdma->field; \
		return DOCA_SUCCESS; \
	}

RDMA_BOUNDED_SETTER(doca_rdma_set_send_queue_size, send_queue_size, 1, RDMA_DEFAULT_QUEUE_SIZE)
RDMA_BOUNDED_SETTER(doca_rdma_set_recv_queue_size, recv_queue_size, 1, RDMA_DEFAULT_QUEUE_SIZE)
RDMA_BOUNDED_SETTER(doca_rdma_set_max_send_buf_list_len, max_send_buf_list_len, 1, RDMA_MAX_BUF_LIST_LEN)
RDMA_GETTER(doca_rdma_get_max_send_buf_list_len, max_send_buf_list_len)
RDMA_BOUNDED_SETTER(doca_rdma_task_receive_set_dst_buf_list_len, recv_buf_list_len, 1, RDMA_MAX_BUF_LIST_LEN)
RDMA_GETTER(doca_rdma_task_receive_get_dst_buf_list_len, recv_buf_list_len)

doca_error_t doca_rdma_set_connection_state_callbacks(struct doca_rdma *rdma,
						      doca_rdma_connection_request_cb_t request_cb,
						      doca_rdma_connection_established_cb_t established_cb,
						      doca_rdma_connection_failure_cb_t failure_cb,
						      doca_rdma_connection_disconnection_cb_t disconnect_cb)
{
	CONFIG_CHECK(rdma);
	if (request_cb == NULL || established_cb == NULL || failure_cb == NULL || disconnect_cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	rdma->on_request = request_cb;
	rdma->on_established = established_cb;
	rdma->on_failure = failure_cb;
	rdma->on_disconnect = disconnect_cb;
	return DOCA_SUCCESS;
}

/* ---------------------------------------------------------------- out-of-band connection details */
struct rdma_details {
	uint32_t magic;
	uint16_t version;
	uint16_t port;            /* network order */
	char address[48];         /* numeric IPv4/IPv6 of the exporter's listener */
	uint8_t secret[RDMA_SECRET_LEN];
};
#define RDMA_DETAILS_MAGIC 0x434d4452u /* "RDMC" */

doca_error_t doca_rdma_export(struct doca_rdma *rdma, const void **details, size_t *details_size,
			      struct doca_rdma_connection **rdma_connection)
{
	static __thread struct rdma_details out;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct doca_rdma_connection *c;
	const char *address = rdma_local_address();
	int fd;

	if (rdma == NULL || details == NULL || details_size == NULL || rdma_connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(rdma, magic, "rdma", DOCA_ERROR_INVALID_VALUE);
	if (rdma->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: rdma context is not running", __func__);
	fd = rdma_tcp_listen(address, 0);
	if (fd < 0)
		return sim_fail(DOCA_ERROR_CONNECTION_ABORTED, "%s: cannot listen on %s: %s", __func__, address,
				strerror(errno));
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		close(fd);
		return DOCA_ERROR_IO_FAILED;
	}
	pthread_mutex_lock(&rdma->lock);
	c = rdma_conn_new(rdma, false);
	if (c == NULL) {
		pthread_mutex_unlock(&rdma->lock);
		close(fd);
		return sim_fail(DOCA_ERROR_FULL, "%s: max_num_connections (%u) reached", __func__, rdma->max_conns);
	}
	c->listen_fd = fd;
	c->state = CONN_EXPORTED;
	memset(&out, 0, sizeof(out));
	out.magic = RDMA_DETAILS_MAGIC;
	out.version = 1;
	out.port = ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					    : ((struct sockaddr_in *)&ss)->sin_port;
	snprintf(out.address, sizeof(out.address), "%s", address);
	memcpy(out.secret, c->secret, sizeof(out.secret));
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	*details = &out;
	*details_size = sizeof(out);
	*rdma_connection = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_details, size_t remote_details_size,
			       struct doca_rdma_connection *conn)
{
	struct rdma_details d;
	struct rdma_frame hello;
	int fd;

	if (rdma == NULL || remote_details == NULL || conn == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(conn, magic, "rdma connection", DOCA_ERROR_INVALID_VALUE);
	if (conn->rdma != rdma)
		return DOCA_ERROR_INVALID_VALUE;
	if (rdma->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: rdma context is not running", __func__);
	if (remote_details_size != sizeof(d))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: details of %zu bytes, expected %zu", __func__,
				remote_details_size, sizeof(d));
	memcpy(&d, remote_details, sizeof(d));
	if (d.magic != RDMA_DETAILS_MAGIC || d.version != 1 || memchr(d.address, '\0', sizeof(d.address)) == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: not RDMA connection details of this device", __func__);
	if (conn->state != CONN_EXPORTED || conn->socks[0].fd >= 0)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: connection already connected", __func__);
	fd = rdma_tcp_connect(d.address, ntohs(d.port), 5000);
	if (fd < 0)
		return sim_fail(DOCA_ERROR_CONNECTION_ABORTED, "%s: %s port %u: %s", __func__, d.address,
				ntohs(d.port), strerror(errno));
	rdma_frame_init(&hello, OP_HELLO);
	hello.len = RDMA_SECRET_LEN;
	pthread_mutex_lock(&rdma->lock);
	if (conn->state != CONN_EXPORTED || conn->socks[0].fd >= 0) {
		/* While we connected (unlocked: up to 5 s), the peer's own socket came and went, closing the connection, or
		 * another thread connected it: it is not ours to revive (its count was already given back) */
		pthread_mutex_unlock(&rdma->lock);
		close(fd);
		return sim_fail(DOCA_ERROR_CONNECTION_ABORTED, "%s: the connection closed while connecting", __func__);
	}
	rdma_sock_init(&conn->socks[0], fd);
	conn->socks[0].app_eligible = true; /* only our requests' responses come back on it: progress reads them */
	if (conn->num_socks < 1)
		conn->num_socks = 1;
	/* The peer's secret goes first on the socket; the frames we queue after it are ours */
	rdma_queue_frame(rdma, &conn->socks[0], &hello, d.secret, 0); /* small payloads are copied */
	conn->state = CONN_CONNECTED;
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	return DOCA_SUCCESS;
}

/* ---------------------------------------------------------------- RDMA CM */
struct doca_rdma_addr {
	char address[64];
	uint16_t port;
};

doca_error_t doca_rdma_addr_create(enum doca_rdma_addr_type addr_type, const char *address, uint16_t port,
				   struct doca_rdma_addr **addr)
{
	unsigned char probe[sizeof(struct in6_addr)];
	struct doca_rdma_addr *a;

	if (address == NULL || addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (addr_type == DOCA_RDMA_ADDR_TYPE_IPv4 ? inet_pton(AF_INET, address, probe) != 1
	    : addr_type == DOCA_RDMA_ADDR_TYPE_IPv6 ? inet_pton(AF_INET6, address, probe) != 1
						    : true)
		return sim_fail(addr_type == DOCA_RDMA_ADDR_TYPE_GID ? DOCA_ERROR_NOT_SUPPORTED : DOCA_ERROR_INVALID_VALUE,
				"%s: \"%s\" is not an address of this type", __func__, address);
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return DOCA_ERROR_NO_MEMORY;
	snprintf(a->address, sizeof(a->address), "%s", address);
	a->port = port;
	*addr = a;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_addr_destroy(struct doca_rdma_addr *addr)
{
	if (addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	free(addr);
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_start_listen_to_port(struct doca_rdma *rdma, uint16_t port)
{
	int fd;
	if (rdma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (rdma->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: rdma context is not running", __func__);
	if (rdma->cm_listen_fd >= 0)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: already listening", __func__);
	/* Like RDMA CM, on every address of the machine, unless the user named one (a receiver told to listen on
	 * 127.0.0.1 must not accept RDMA writes from the network). */
	fd = rdma_tcp_listen(rdma_listen_address(), port);
	if (fd < 0)
		return sim_fail(errno == EADDRINUSE ? DOCA_ERROR_IN_USE : DOCA_ERROR_IO_FAILED, "%s: port %u: %s",
				__func__, port, strerror(errno));
	pthread_mutex_lock(&rdma->lock);
	rdma->cm_listen_fd = fd;
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_connect_to_addr(struct doca_rdma *rdma, struct doca_rdma_addr *addr,
				       union doca_data connection_user_data)
{
	struct doca_rdma_connection *c;
	struct rdma_frame hello;
	int fd;

	if (rdma == NULL || addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (rdma->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: rdma context is not running", __func__);
	pthread_mutex_lock(&rdma->lock);
	c = rdma_conn_new(rdma, true);
	if (c == NULL) {
		pthread_mutex_unlock(&rdma->lock);
		return sim_fail(DOCA_ERROR_FULL, "%s: max_num_connections (%u) reached", __func__, rdma->max_conns);
	}
	c->user_data = connection_user_data;
	c->state = CONN_CONNECTING;
	pthread_mutex_unlock(&rdma->lock);
	fd = rdma_tcp_connect(addr->address, addr->port, 5000);
	pthread_mutex_lock(&rdma->lock);
	if (fd < 0) {
		/* reported through the failure callback, like a CM connection that cannot be made */
		rdma_conn_close(rdma, c, DOCA_ERROR_CONNECTION_ABORTED);
	} else {
		rdma_sock_init(&c->socks[0], fd);
		c->num_socks = 1;
		rdma_frame_init(&hello, OP_HELLO_CM);
		rdma_queue_frame(rdma, &c->socks[0], &hello, NULL, 0);
	}
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	return DOCA_SUCCESS;
}

static doca_error_t answer_request(struct doca_rdma_connection *conn, enum rdma_op op)
{
	struct doca_rdma *rdma;
	struct rdma_frame f;

	SIM_RETURN_IF_NULL_OR_DEAD(conn, magic, "rdma connection");
	rdma = conn->rdma;
	pthread_mutex_lock(&rdma->lock);
	if (conn->state != CONN_REQUESTED) {
		pthread_mutex_unlock(&rdma->lock);
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: no connection request pending", __func__);
	}
	rdma_frame_init(&f, op);
	rdma_queue_frame(rdma, &conn->socks[0], &f, NULL, 0);
	if (op == OP_ACCEPT) {
		conn->state = CONN_CONNECTED;
		rdma_queue_event(rdma, EV_ESTABLISHED, conn);
	} else {
		conn->state = CONN_CLOSED;
		rdma->num_conns--;
		rdma_sock_retire(rdma, &conn->socks[0]); /* closes once the reject frame is out */
		conn->num_socks = 0;
	}
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_connection_accept(struct doca_rdma_connection *conn, void *private_data,
					 uint8_t private_data_len)
{
	(void)private_data;
	(void)private_data_len;
	return answer_request(conn, OP_ACCEPT);
}

doca_error_t doca_rdma_connection_reject(struct doca_rdma_connection *conn)
{
	return answer_request(conn, OP_REJECT);
}

doca_error_t doca_rdma_connection_disconnect(struct doca_rdma_connection *conn)
{
	struct doca_rdma *rdma;
	SIM_RETURN_IF_NULL_OR_DEAD(conn, magic, "rdma connection");
	rdma = conn->rdma;
	pthread_mutex_lock(&rdma->lock);
	if (conn->state == CONN_CLOSED) {
		/* Already down (the peer left, or we disconnected): NVIDIA's samples disconnect from their disconnection
		 * callback and again in their teardown, and expect success both times */
		pthread_mutex_unlock(&rdma->lock);
		return DOCA_SUCCESS;
	}
	/* Our side asked: the requests still waiting fail, and our own disconnection callback follows */
	rdma_conn_close(rdma, conn, DOCA_ERROR_CONNECTION_RESET);
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	return DOCA_SUCCESS;
}

SIM_LIVE_SETTER(doca_rdma_connection_set_user_data, struct doca_rdma_connection, conn, "rdma connection",
	union doca_data, user_data, user_data)

SIM_LIVE_GETTER(doca_rdma_connection_get_id, const struct doca_rdma_connection, conn, "rdma connection", uint32_t,
	connection_id, conn->id)
