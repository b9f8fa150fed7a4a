/*
 * Comch producer (fast path, sending side). A send task writes the buffer's data (and immediate data) as one
 * datagram into the data socket of the peer's consumer, received when that consumer announced itself.
 * Submit returns DOCA_ERROR_AGAIN while the consumer's queue is full (it has not posted/drained receives), as DOCA
 * does when the consumer has no buffer ready; the task completes once the datagram is handed over.
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

static doca_error_t producer_start(struct doca_ctx *ctx);
static doca_error_t producer_stop(struct doca_ctx *ctx);
static doca_error_t producer_submit(struct doca_ctx *ctx, struct doca_task *task);
static doca_error_t producer_validate(struct doca_ctx *ctx, struct doca_task *task);
static void producer_task_free(struct doca_task *task);

static const struct sim_ctx_ops producer_ops = {
	.ordered_completions = true,
	.kind = "comch_producer",
	.start = producer_start,
	.stop = producer_stop,
	.submit = producer_submit,
	.validate = producer_validate,
};

static size_t producer_task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	/* const in the task (it only reads it), held all the same: releasing it early lets the inventory reuse it */
	struct doca_buf *buf = (struct doca_buf *)((const struct doca_comch_producer_task_send *)task)->buf;

	out[0] = buf;
	return buf != NULL;
}

static const struct sim_task_ops producer_task_ops = {
	.kind = "comch_producer_send", .free = producer_task_free, .bufs = producer_task_bufs};

/* Our own duplicates of consumer data sockets, so the hot path needs no lookup under the connection lock */
struct comch_fd_cache_entry {
	uint32_t id;
	int fd;
};

struct comch_producer_priv {
	struct doca_comch_producer pub;
	struct comch_fd_cache_entry cache[COMCH_MAX_CONSUMERS];
};

static struct comch_producer_priv *priv(struct doca_ctx *ctx)
{
	return (struct comch_producer_priv *)ctx;
}

static void cache_clear(struct comch_producer_priv *p)
{
	uint32_t i;

	for (i = 0; i < COMCH_MAX_CONSUMERS; i++)
		if (p->cache[i].id != 0) {
			close(p->cache[i].fd);
			p->cache[i].id = 0;
		}
}

static int cache_lookup(struct comch_producer_priv *p, uint32_t id, struct comch_fd_cache_entry **entry)
{
	struct comch_fd_cache_entry *free_slot = NULL;
	uint32_t i;
	int fd;

	for (i = 0; i < COMCH_MAX_CONSUMERS; i++) {
		if (p->cache[i].id == id) {
			*entry = &p->cache[i];
			return p->cache[i].fd;
		}
		if (p->cache[i].id == 0 && free_slot == NULL)
			free_slot = &p->cache[i];
	}
	fd = comch_conn_remote_consumer_fd(p->pub.conn, id);
	if (fd < 0)
		return -1;
	if (free_slot == NULL) { /* full: evict one */
		free_slot = &p->cache[id % COMCH_MAX_CONSUMERS];
		close(free_slot->fd);
	}
	free_slot->id = id;
	free_slot->fd = fd;
	*entry = free_slot;
	return fd;
}

static doca_error_t producer_start(struct doca_ctx *ctx)
{
	struct doca_comch_producer *p = &priv(ctx)->pub;

	COMCH_FASTPATH_START_OR_RETURN(p, "producer", "send");
	return DOCA_SUCCESS;
}

static doca_error_t producer_stop(struct doca_ctx *ctx)
{
	cache_clear(priv(ctx));
	return DOCA_SUCCESS;
}

static doca_error_t producer_validate(struct doca_ctx *ctx, struct doca_task *task)
{
	const struct doca_buf *buf = ((struct doca_comch_producer_task_send *)task)->buf;

	if (buf == NULL || buf->mmap == NULL || buf->mmap->from_export)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch producer: buffer must be local memory");
	if (!sim_buf_data_fits(buf, buf->data, buf->data_len))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch producer: data outside its buffer");
	if (buf->data_len > comch_cap_max_buf_size(ctx->dev->info))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "comch producer: %zu bytes exceed max buf size",
				buf->data_len);
	return DOCA_SUCCESS;
}

static doca_error_t producer_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct comch_producer_priv *p = priv(ctx);
	struct doca_comch_producer_task_send *t = (struct doca_comch_producer_task_send *)task;
	const struct doca_buf *buf = t->buf;
	struct comch_fd_cache_entry *entry = NULL;
	int fd, rc;

	/* doca_task_submit does not validate (DOCA): an invalid task fails through its error callback */
	if (producer_validate(ctx, task) != DOCA_SUCCESS) {
		sim_strict_report(SIM_RULE_INVALID_TASK, "doca_task_submit", "comch_producer_send task", task,
				  "completed with DOCA_ERROR_INVALID_VALUE");
		sim_task_complete(task, DOCA_ERROR_INVALID_VALUE);
		return DOCA_SUCCESS;
	}
	if (p->pub.conn->state != COMCH_CONN_ACTIVE) {
		sim_task_complete(task, DOCA_ERROR_NOT_CONNECTED);
		return DOCA_SUCCESS;
	}
	fd = cache_lookup(p, t->consumer_id, &entry);
	if (fd < 0) {
		sim_task_complete(task, DOCA_ERROR_NOT_FOUND); /* no such consumer announced by the peer */
		return DOCA_SUCCESS;
	}
	rc = comch_send_data(fd, p->pub.id, t->imm, t->imm_len, buf->data, (uint32_t)buf->data_len);
	if (rc == -EAGAIN)
		return DOCA_ERROR_AGAIN;
	if (rc != 0) {
		/* The consumer closed its end (stopped or its process died) */
		close(entry->fd);
		entry->id = 0;
		sim_task_complete(task, DOCA_ERROR_NOT_CONNECTED);
		return DOCA_SUCCESS;
	}
	sim_task_complete(task, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static void producer_task_free(struct doca_task *task)
{
	struct doca_comch_producer *p = &priv(task->ctx)->pub;
	struct doca_comch_producer_task_send *t = (struct doca_comch_producer_task_send *)task;

	sim_task_fini(task);
	t->buf = NULL;
	COMCH_FREE_LIST_PUSH(p->free_tasks, t);
}

/* ---- public API ---- */

SIM_EXPORT doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection,
						   struct doca_comch_producer **producer)
{
	struct comch_producer_priv *p;

	if (comch_connection == NULL || producer == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (comch_connection->state != COMCH_CONN_ACTIVE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: connection is not established", __func__);
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	p->pub.conn = comch_connection;
	p->pub.id = comch_conn_alloc_local_id(comch_connection);
	sim_ctx_init(&p->pub.ctx, &producer_ops, comch_connection->ep->dev);
	comch_conn_attach_user(comch_connection);
	*producer = &p->pub;
	return DOCA_SUCCESS;
}

SIM_EXPORT doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer)
{
	SIM_CTX_FINI_OR_RETURN(producer, ctx.magic, ctx, "comch_producer");
	cache_clear(priv(&producer->ctx));
	comch_conn_detach_user(producer->conn);
	free(producer->tasks);
	sim_release(priv(&producer->ctx), &producer->ctx.magic);
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_GETTER(doca_comch_producer_get_id, const struct doca_comch_producer, producer, uint32_t, id,
	producer->id)

SIM_EXPORT SIM_VALUE_GETTER(struct doca_ctx *, doca_comch_producer_as_ctx, struct doca_comch_producer, producer, NULL,
	&producer->ctx)

COMCH_FASTPATH_SET_CONF(doca_comch_producer_task_send_set_conf, doca_comch_producer,
			doca_comch_producer_task_send_completion_cb_t)

SIM_EXPORT doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer,
								 const struct doca_buf *buf, uint8_t *imm_data,
								 uint32_t imm_data_len, uint32_t consumer_id,
								 struct doca_comch_producer_task_send **task)
{
	struct doca_comch_producer_task_send *t;

	if (producer == NULL || buf == NULL || task == NULL || imm_data_len > COMCH_MAX_IMM_DATA ||
	    (imm_data == NULL && imm_data_len > 0))
		return DOCA_ERROR_INVALID_VALUE;
	COMCH_FREE_LIST_TAKE_OR_RETURN(producer->free_tasks, t, &producer_task_ops, &producer->ctx, producer->done_cb,
				       producer->err_cb);
	t->buf = buf;
	t->consumer_id = consumer_id;
	t->imm_len = imm_data_len;
	if (imm_data_len > 0)
		memcpy(t->imm, imm_data, imm_data_len);
	*task = t;
	return DOCA_SUCCESS;
}

SIM_EXPORT SIM_VALUE_GETTER(const struct doca_buf *, doca_comch_producer_task_send_get_buf,
	DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send, task, NULL, task->buf)

SIM_EXPORT SIM_VALUE_SETTER(doca_comch_producer_task_send_set_buf, struct doca_comch_producer_task_send, task,
	const struct doca_buf *, buf, task->buf)

SIM_EXPORT SIM_VALUE_GETTER(uint32_t, doca_comch_producer_task_send_get_consumer_id,
	DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send, task, 0, task->consumer_id)

SIM_EXPORT SIM_VALUE_SETTER(doca_comch_producer_task_send_set_consumer_id, struct doca_comch_producer_task_send, task,
	const uint32_t, consumer_id, task->consumer_id)

SIM_EXPORT uint8_t *doca_comch_producer_task_send_get_imm_data(DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send *task)
{
	/* The task owns a copy; DOCA's prototype hands it out non-const */
	return task == NULL || task->imm_len == 0 ? NULL : (uint8_t *)(uintptr_t)task->imm;
}

SIM_EXPORT SIM_VALUE_GETTER(uint32_t, doca_comch_producer_task_send_get_imm_data_len,
	DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send, task, 0, task->imm_len)

SIM_EXPORT void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task,
							   uint8_t *imm_data, uint32_t imm_data_len)
{
	if (task == NULL || imm_data_len > COMCH_MAX_IMM_DATA || (imm_data == NULL && imm_data_len > 0))
		return;
	if (imm_data_len > 0)
		memcpy(task->imm, imm_data, imm_data_len);
	task->imm_len = imm_data_len;
}

SIM_EXPORT SIM_VALUE_GETTER(struct doca_task *, doca_comch_producer_task_send_as_task,
	struct doca_comch_producer_task_send, task, NULL, &task->base)
