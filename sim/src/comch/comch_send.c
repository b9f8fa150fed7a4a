/*
 * Comch control-path send tasks: a fixed pool per server/client (num_send_tasks from set_conf), each task owning a
 * max_msg_size buffer so that alloc_init can copy the caller's message (DOCA's own comch_utils sends from stack
 * buffers) and nothing is allocated per message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comch_internal.h"
#include "accessors.h"

static void send_task_free(struct doca_task *task);

static const struct sim_task_ops send_task_ops = {.kind = "comch_send", .free = send_task_free};

doca_error_t comch_send_pool_create(struct comch_endpoint *ep)
{
	uint32_t i, n = ep->num_send_tasks;

	if (n == 0)
		return DOCA_SUCCESS; /* a receive-only endpoint */
	ep->tasks = calloc(n, sizeof(*ep->tasks));
	ep->task_msgs = malloc((size_t)n * ep->max_msg_size);
	if (ep->tasks == NULL || ep->task_msgs == NULL) {
		comch_send_pool_destroy(ep);
		return DOCA_ERROR_NO_MEMORY;
	}
	ep->free_tasks = NULL;
	for (i = n; i-- > 0;) {
		struct doca_comch_task_send *t = &ep->tasks[i];

		t->msg = ep->task_msgs + (size_t)i * ep->max_msg_size;
		COMCH_FREE_LIST_PUSH(ep->free_tasks, t);
	}
	return DOCA_SUCCESS;
}

void comch_send_pool_destroy(struct comch_endpoint *ep)
{
	free(ep->tasks);
	free(ep->task_msgs);
	ep->tasks = NULL;
	ep->task_msgs = NULL;
	ep->free_tasks = NULL;
}

doca_error_t comch_send_alloc_init(struct comch_endpoint *ep, struct doca_comch_connection *peer, const void *msg,
				   uint32_t len, struct doca_comch_task_send **task)
{
	struct doca_comch_task_send *t;

	if (peer == NULL || task == NULL || (msg == NULL && len > 0) || peer->ep != ep)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch send alloc_init: bad argument");
	if (len > ep->max_msg_size)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch send: %u bytes exceed max msg size %u", len,
				ep->max_msg_size);
	/* ... and the receiver's, announced at the handshake: it would never receive the message */
	if (peer->peer_max_msg_size != 0 && len > peer->peer_max_msg_size)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch send: %u bytes exceed the peer's max msg size %u", len,
				peer->peer_max_msg_size);
	if (ep->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "comch send alloc_init: context not running");
	COMCH_FREE_LIST_TAKE_OR_RETURN(ep->free_tasks, t, &send_task_ops, &ep->ctx, ep->send_done_cb, ep->send_err_cb);
	t->conn = peer;
	t->len = len;
	if (len > 0)
		memcpy(t->msg, msg, len);
	*task = t;
	return DOCA_SUCCESS;
}

static void send_task_free(struct doca_task *task)
{
	struct doca_comch_task_send *t = (struct doca_comch_task_send *)task;
	struct comch_endpoint *ep = (struct comch_endpoint *)task->ctx;

	sim_task_fini(task);
	t->conn = NULL;
	COMCH_FREE_LIST_PUSH(ep->free_tasks, t);
}

bool comch_send_inflight_on(const struct doca_comch_connection *conn)
{
	const struct doca_ctx *ctx = &conn->ep->ctx;

	if (conn->pending_head != NULL)
		return true;
	for (const struct doca_task *t = ctx->done_head; t != NULL; t = t->next)
		if (t->ops == &send_task_ops && ((const struct doca_comch_task_send *)t)->conn == conn)
			return true;
	return false;
}

/* Submit hook shared by server and client contexts */
doca_error_t comch_send_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_comch_task_send *t = (struct doca_comch_task_send *)task;
	struct doca_comch_connection *conn = t->conn;

	(void)ctx;
	if (conn == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (conn->state != COMCH_CONN_ACTIVE) {
		/* A dead connection is a task failure, reported through the error callback like DOCA does */
		sim_task_complete(task, DOCA_ERROR_NOT_CONNECTED);
		return DOCA_SUCCESS;
	}
	SIM_QUEUE_APPEND(conn->pending_head, conn->pending_tail, t, next);
	/* Write right away when the socket has room: keeps latency low without waiting for the next progress */
	(void)comch_conn_flush(conn);
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_VALUE_GETTER(struct doca_task *, doca_comch_task_send_as_task, struct doca_comch_task_send, task, NULL,
	&task->base)
