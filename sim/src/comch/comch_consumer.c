/*
 * Comch consumer (fast path, receiving side).
 *
 * Starting a consumer creates a connected socket pair: one end stays here, the other travels to the peer inside a
 * CONSUMER_NEW frame on the connection (SCM_RIGHTS), which fires the peer's new-consumer event. The peer's
 * producers then write datagrams straight into that socket; each datagram completes the oldest posted receive
 * task, landing in its buffer without intermediate copies. Receives are only read while a task is posted, so the
 * socket's bounded queue is the back-pressure a producer sees as DOCA_ERROR_AGAIN.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "comch_internal.h"
#include "accessors.h"

static doca_error_t consumer_start(struct doca_ctx *ctx);
static doca_error_t consumer_stop(struct doca_ctx *ctx);
static int consumer_progress(struct doca_ctx *ctx);
static doca_error_t consumer_submit(struct doca_ctx *ctx, struct doca_task *task);
static doca_error_t consumer_validate(struct doca_ctx *ctx, struct doca_task *task);
static void post_recv_free(struct doca_task *task);
static bool consumer_waits_on_fd(const struct doca_ctx *ctx);

static const struct sim_ctx_ops consumer_ops = {
	.ordered_completions = true,
	.kind = "comch_consumer",
	.start = consumer_start,
	.stop = consumer_stop,
	.progress = consumer_progress,
	.submit = consumer_submit,
	.validate = consumer_validate,
	.waits_on_fd = consumer_waits_on_fd,
};

static size_t post_recv_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	struct doca_buf *buf = ((const struct doca_comch_consumer_task_post_recv *)task)->buf;

	out[0] = buf;
	return buf != NULL;
}

static const struct sim_task_ops post_recv_ops = {
	.kind = "comch_consumer_post_recv", .free = post_recv_free, .bufs = post_recv_bufs};

static struct doca_comch_consumer *as_consumer(struct doca_ctx *ctx)
{
	return (struct doca_comch_consumer *)ctx;
}

/* While receives are posted: the data socket, and the eventfd the connection writes when it dies */
static void set_watch(struct doca_comch_consumer *c, bool on)
{
	if (c->data_fd < 0 || c->watched == on)
		return;
	if (on) {
		comch_watch(&c->ctx, c->data_fd);
		comch_watch(&c->ctx, c->wake_fd);
	} else {
		comch_unwatch(&c->ctx, c->data_fd);
		comch_unwatch(&c->ctx, c->wake_fd);
	}
	c->watched = on;
}

static int send_announcement(struct doca_comch_consumer *c);

static doca_error_t consumer_start(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = as_consumer(ctx);
	int sv[2];

	COMCH_FASTPATH_START_OR_RETURN(c, "consumer", "post_recv");
	if (comch_data_socketpair(sv) != 0)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "comch consumer: socketpair failed");
	c->data_fd = sv[0];
	c->peer_fd = sv[1];
	c->announced = false;
	c->posted_head = c->posted_tail = NULL;
	/* The peer hears of the consumer at once, before any progress of ours: NVIDIA's storage DPU program starts its
	 * consumer and progresses that engine only once the host, which waits for the consumer's event, has answered.
	 * A full connection (EAGAIN) or a failure is left to progress. RUNNING comes through progress, as DOCA's consumer
	 * start is asynchronous too */
	(void)send_announcement(c);
	return DOCA_ERROR_IN_PROGRESS;
}

static void fail_posted(struct doca_comch_consumer *c, doca_error_t status)
{
	while (c->posted_head != NULL) {
		struct doca_comch_consumer_task_post_recv *t = c->posted_head;

		c->posted_head = t->next;
		t->next = NULL;
		sim_task_complete(&t->base, status);
	}
	c->posted_tail = NULL;
}

static doca_error_t consumer_stop(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = as_consumer(ctx);

	/* Best effort: when the connection is gone the peer dropped its end already */
	if (c->announced && c->conn->state == COMCH_CONN_ACTIVE)
		(void)comch_conn_send_frame(c->conn, COMCH_FRAME_CONSUMER_GONE, c->id, NULL, 0, -1);
	set_watch(c, false);
	if (c->data_fd >= 0)
		close(c->data_fd);
	if (c->peer_fd >= 0)
		close(c->peer_fd);
	c->data_fd = c->peer_fd = -1;
	c->announced = false;
	/* A user stop flushes like any DOCA context; losing the peer is reported as such */
	fail_posted(c, c->peer_lost ? DOCA_ERROR_NOT_CONNECTED : SIM_TASK_FLUSHED_STATUS);
	c->peer_lost = false;
	return DOCA_SUCCESS;
}

/* The connection or our data socket died: stop ourselves, reporting posted receives as not connected */
static int lose_peer(struct doca_comch_consumer *c)
{
	c->peer_lost = true;
	(void)doca_ctx_stop(&c->ctx);
	return 1;
}

/* 1 once the peer was sent the consumer's socket, 0 if the connection has no room yet, -1 if it failed */
static int send_announcement(struct doca_comch_consumer *c)
{
	int rc;

	if (c->announced)
		return 1;
	if (c->conn->state != COMCH_CONN_ACTIVE)
		return -1;
	rc = comch_conn_send_frame(c->conn, COMCH_FRAME_CONSUMER_NEW, c->id, NULL, 0, c->peer_fd);
	if (rc == -EAGAIN)
		return 0;
	if (rc != 0)
		return -1;
	close(c->peer_fd);
	c->peer_fd = -1;
	c->announced = true;
	return 1;
}

static int announce(struct doca_comch_consumer *c)
{
	int rc = send_announcement(c);

	if (rc == 0)
		return 0;
	if (rc < 0)
		return lose_peer(c);
	sim_ctx_set_state(&c->ctx, DOCA_CTX_STATE_RUNNING);
	return 1;
}

/* Receive into the oldest posted buffer; returns 1 if a task completed, 0 if nothing was queued, -1 on loss */
static int receive_one(struct doca_comch_consumer *c)
{
	struct doca_comch_consumer_task_post_recv *t = c->posted_head;
	struct doca_buf *buf = t->buf;
	uint8_t *tail = (uint8_t *)buf->data + buf->data_len;
	size_t room = sim_buf_tail_room(buf);
	uint32_t producer_id = 0, imm_len = 0;
	ssize_t n = comch_recv_data(c->data_fd, &producer_id, t->imm, &imm_len, tail, room);

	if (n == -EAGAIN)
		return 0;
	if (n == -ECONNRESET || n == -ENOTCONN)
		return -1;
	if (n == -EPROTO)
		return 1; /* not one of our producers' datagrams: dropped, the task stays posted */
	c->posted_head = t->next;
	if (c->posted_head == NULL)
		c->posted_tail = NULL;
	t->next = NULL;
	if (n < 0) {
		/* Larger than the posted buffer: the datagram is discarded and this receive fails */
		sim_task_complete(&t->base, n == -EMSGSIZE ? DOCA_ERROR_TOO_BIG : DOCA_ERROR_IO_FAILED);
		return 1;
	}
	buf->data_len += (size_t)n;
	t->producer_id = producer_id;
	t->imm_len = imm_len < c->imm_data_len ? imm_len : c->imm_data_len;
	sim_task_complete(&t->base, DOCA_SUCCESS);
	return 1;
}

/* Running, posted receives wait on the watched data socket (a message or the peer's close makes it readable) and on
 * our wake eventfd, which the connection writes when it dies (its endpoint may run on another pe); a connection
 * already dead, a start (the announcement) or a stop needs our progress turn */
static bool consumer_waits_on_fd(const struct doca_ctx *ctx)
{
	const struct doca_comch_consumer *c = (const struct doca_comch_consumer *)ctx;
	return ctx->state == DOCA_CTX_STATE_RUNNING && c->watched && c->wake_fd >= 0 && c->conn != NULL &&
	       c->conn->state != COMCH_CONN_DEAD;
}

static int consumer_progress(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = as_consumer(ctx);
	int did = 0, i;

	if (ctx->state == DOCA_CTX_STATE_STARTING)
		return announce(c);
	if (ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	if (c->conn->state == COMCH_CONN_DEAD)
		return lose_peer(c);
	for (i = 0; i < COMCH_FRAMES_PER_PROGRESS && c->posted_head != NULL; i++) {
		int rc = receive_one(c);

		if (rc == 0)
			break;
		did = 1;
		if (rc < 0)
			return lose_peer(c); /* the peer closed our data socket: it went away */
	}
	set_watch(c, c->posted_head != NULL);
	return did;
}

static doca_error_t consumer_validate(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_comch_consumer *c = as_consumer(ctx);
	const struct doca_buf *buf = ((struct doca_comch_consumer_task_post_recv *)task)->buf;

	if (buf == NULL || buf->mmap == NULL || buf->mmap->from_export)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch post_recv: buffer must be local memory");
	if ((uint8_t *)buf->head < (uint8_t *)c->mmap->base ||
	    (uint8_t *)buf->head + buf->len > (uint8_t *)c->mmap->base + c->mmap->len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch post_recv: buffer outside the consumer's mmap");
	if (!sim_buf_data_fits(buf, buf->data, buf->data_len))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch post_recv: data outside its buffer");
	return DOCA_SUCCESS;
}

static doca_error_t consumer_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_comch_consumer *c = as_consumer(ctx);
	struct doca_comch_consumer_task_post_recv *t = (struct doca_comch_consumer_task_post_recv *)task;

	/* doca_task_submit does not validate (DOCA): an invalid task fails through its error callback */
	if (consumer_validate(ctx, task) != DOCA_SUCCESS) {
		sim_strict_report(SIM_RULE_INVALID_TASK, "doca_task_submit", "comch_consumer_post_recv task", task,
				  "completed with DOCA_ERROR_INVALID_VALUE");
		sim_task_complete(task, DOCA_ERROR_INVALID_VALUE);
		return DOCA_SUCCESS;
	}
	t->producer_id = 0;
	t->imm_len = 0;
	SIM_QUEUE_APPEND(c->posted_head, c->posted_tail, t, next);
	set_watch(c, true);
	return DOCA_SUCCESS;
}

static void post_recv_free(struct doca_task *task)
{
	struct doca_comch_consumer *c = as_consumer(task->ctx);
	struct doca_comch_consumer_task_post_recv *t = (struct doca_comch_consumer_task_post_recv *)task;

	sim_task_fini(task); /* ops = NULL: not allocated (release_unfreed_tasks) */
	t->buf = NULL;
	COMCH_FREE_LIST_PUSH(c->free_tasks, t);
}

/* ---- public API ---- */

SIM_EXPORT doca_error_t doca_comch_consumer_create(struct doca_comch_connection *comch_connection,
						   struct doca_mmap *buf_mmap, struct doca_comch_consumer **consumer)
{
	struct doca_comch_consumer *c;

	if (comch_connection == NULL || buf_mmap == NULL || consumer == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (comch_connection->state != COMCH_CONN_ACTIVE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: connection is not established", __func__);
	if (!buf_mmap->started || buf_mmap->from_export)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: mmap must be a started local mmap", __func__);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return DOCA_ERROR_NO_MEMORY;
	c->conn = comch_connection;
	c->mmap = buf_mmap;
	c->id = comch_conn_alloc_local_id(comch_connection);
	c->data_fd = c->peer_fd = -1;
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); /* -1 (no fds left): a dead connection is then found by
							      * the next progress turn only */
	sim_ctx_init(&c->ctx, &consumer_ops, comch_connection->ep->dev);
	comch_conn_attach_user(comch_connection);
	comch_conn_add_consumer_wake(comch_connection, c->wake_fd);
	*consumer = c;
	return DOCA_SUCCESS;
}

/* Tasks the user never freed go with the consumer (their memory is its pool): the misuse is reported once, with its
 * count, and the books are settled so that the same tasks are not reported again at exit as leaked objects or as
 * completed tasks never freed. */
static void release_unfreed_tasks(struct doca_comch_consumer *c)
{
	size_t unfreed = 0;

	for (uint32_t i = 0; i < c->pool_len; i++) {
		if (c->tasks[i].base.ops == NULL)
			continue;
		/* one the program freed in flight is counted there (free-inflight-task), not again here */
		if (c->tasks[i].base.bad_frees == 0)
			unfreed++;
		sim_task_fini(&c->tasks[i].base);
	}
	if (unfreed > 0)
		sim_strict_report(SIM_RULE_DESTROY_WITH_CHILDREN, "doca_comch_consumer_destroy", "comch_consumer", c,
				  "%zu post_recv tasks were never freed (doca_task_free each before the destroy): "
				  "released with the consumer",
				  unfreed);
}

SIM_EXPORT doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *consumer)
{
	SIM_CTX_FINI_OR_RETURN(consumer, ctx.magic, ctx, "comch_consumer");
	comch_conn_remove_consumer_wake(consumer->conn, consumer->wake_fd);
	if (consumer->wake_fd >= 0)
		close(consumer->wake_fd);
	comch_conn_detach_user(consumer->conn);
	release_unfreed_tasks(consumer);
	free(consumer->tasks);
	sim_release(consumer, &consumer->ctx.magic);
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_GETTER(doca_comch_consumer_get_id, const struct doca_comch_consumer, consumer, uint32_t, id,
	consumer->id)

SIM_EXPORT SIM_GETTER(doca_comch_consumer_get_imm_data_len, const struct doca_comch_consumer, consumer, uint32_t,
	imm_data_len, consumer->imm_data_len)

SIM_EXPORT doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *consumer,
							     uint32_t imm_data_len)
{
	if (consumer == NULL || imm_data_len > COMCH_MAX_IMM_DATA)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_ctx_is_idle(&consumer->ctx))
		return DOCA_ERROR_BAD_STATE;
	consumer->imm_data_len = imm_data_len;
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_VALUE_GETTER(struct doca_ctx *, doca_comch_consumer_as_ctx, struct doca_comch_consumer, consumer, NULL,
	&consumer->ctx)

COMCH_FASTPATH_SET_CONF(doca_comch_consumer_task_post_recv_set_conf, doca_comch_consumer,
			doca_comch_consumer_task_post_recv_completion_cb_t)

SIM_EXPORT doca_error_t doca_comch_consumer_task_post_recv_alloc_init(struct doca_comch_consumer *consumer,
								      struct doca_buf *buf,
								      struct doca_comch_consumer_task_post_recv **task)
{
	struct doca_comch_consumer_task_post_recv *t;

	if (consumer == NULL || buf == NULL || task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	COMCH_FREE_LIST_TAKE_OR_RETURN(consumer->free_tasks, t, &post_recv_ops, &consumer->ctx, consumer->done_cb,
				       consumer->err_cb);
	t->buf = buf;
	t->producer_id = 0;
	t->imm_len = 0;
	*task = t;
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_VALUE_GETTER(struct doca_buf *, doca_comch_consumer_task_post_recv_get_buf,
	DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv, task, NULL, task->buf)

SIM_EXPORT SIM_VALUE_SETTER(doca_comch_consumer_task_post_recv_set_buf, struct doca_comch_consumer_task_post_recv, task,
	struct doca_buf *, buf, task->buf)

SIM_EXPORT SIM_VALUE_GETTER(uint32_t, doca_comch_consumer_task_post_recv_get_producer_id,
	DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv, task, 0, task->producer_id)

SIM_EXPORT DOCA_SIM_IMM_CONST uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(
	DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL || task->imm_len == 0 ? NULL : task->imm;
}

SIM_EXPORT SIM_VALUE_GETTER(uint32_t, doca_comch_consumer_task_post_recv_get_imm_data_len,
	DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv, task, 0, task->imm_len)

SIM_EXPORT SIM_VALUE_GETTER(struct doca_task *, doca_comch_consumer_task_post_recv_as_task,
	struct doca_comch_consumer_task_post_recv, task, NULL, &task->base)
