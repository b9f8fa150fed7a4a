/*
 * libdoca_dma: the DMA context and its memcpy task.
 *
 * Tasks come from a per-context pool sized by doca_dma_task_memcpy_set_conf (no allocation per task). Submit only
 * validates and queues; the copy itself runs in the context's progress hook (dma_copy.c), so a stop can still flush
 * tasks that have not run, and every callback comes from doca_pe_progress.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_dma.h>

#include "dma_internal.h"

static void memcpy_task_free(struct doca_task *task)
{
	struct doca_dma_task_memcpy *t = (struct doca_dma_task_memcpy *)task;
	struct doca_dma *dma = t->dma;

	sim_task_fini(task);
	t->src = NULL;
	t->dst = NULL;
	t->allocated = false;
	task->next = dma->free_tasks;
	dma->free_tasks = task;
}

static size_t memcpy_task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	const struct doca_dma_task_memcpy *t = (const struct doca_dma_task_memcpy *)task;
	size_t n = 0;

	if (t->src != NULL)
		out[n++] = (struct doca_buf *)t->src;
	if (t->dst != NULL)
		out[n++] = t->dst;
	return n;
}

static const struct sim_task_ops memcpy_task_ops = {
	.kind = "dma_memcpy",
	.free = memcpy_task_free,
	.bufs = memcpy_task_bufs,
};

static void queue_pending(struct doca_dma *dma, struct doca_task *task)
{
	task->next = NULL;
	if (dma->pending_tail != NULL)
		dma->pending_tail->next = task;
	else
		dma->pending_head = task;
	dma->pending_tail = task;
}

static doca_error_t dma_start(struct doca_ctx *ctx)
{
	struct doca_dma *dma = (struct doca_dma *)ctx;

	if (ctx->dev == NULL || !ctx->dev->info->caps.dma_memcpy_supported)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "dma: device does not support memcpy");
	if (dma->num_tasks == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma: doca_dma_task_memcpy_set_conf was not called");
	return DOCA_SUCCESS;
}

static doca_error_t dma_stop(struct doca_ctx *ctx)
{
	struct doca_dma *dma = (struct doca_dma *)ctx;
	struct doca_task *task = dma->pending_head;

	/* Tasks that have not run yet are flushed: no byte moves, their error callback reports the flush */
	dma->pending_head = NULL;
	dma->pending_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;

		sim_task_complete(task, SIM_TASK_FLUSHED_STATUS);
		task = next;
	}
	return DOCA_SUCCESS;
}

static int dma_progress(struct doca_ctx *ctx)
{
	struct doca_dma *dma = (struct doca_dma *)ctx;
	struct doca_task *task = dma->pending_head;

	if (task == NULL)
		return 0;
	dma->pending_head = NULL;
	dma->pending_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;

		struct doca_dma_task_memcpy *t = (struct doca_dma_task_memcpy *)task;
		/* doca_task_submit does not validate (DOCA): an invalid task fails here, through its error callback */
		doca_error_t err = sim_dma_validate(dma, t);

		if (err != DOCA_SUCCESS)
			sim_strict_report(SIM_RULE_INVALID_TASK, "doca_task_submit", "dma_memcpy task", task,
					  "completed with %s", doca_error_get_name(err));
		else
			err = sim_dma_execute(dma, t);
		sim_task_complete(task, err);
		task = next;
	}
	return 1;
}

static doca_error_t dma_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_dma *dma = (struct doca_dma *)ctx;

	queue_pending(dma, task);
	sim_pe_signal(ctx->pe);
	return DOCA_SUCCESS;
}

static doca_error_t dma_validate(struct doca_ctx *ctx, struct doca_task *task)
{
	return sim_dma_validate((struct doca_dma *)ctx, (struct doca_dma_task_memcpy *)task);
}

static const struct sim_ctx_ops dma_ctx_ops = {
	.kind = "dma",
	.start = dma_start,
	.stop = dma_stop,
	.progress = dma_progress,
	.submit = dma_submit,
	.validate = dma_validate,
};

doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma)
{
	struct doca_dma *d;

	if (dev == NULL || dma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sim_ctx_init(&d->ctx, &dma_ctx_ops, dev);
	*dma = d;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_destroy(struct doca_dma *dma)
{
	doca_error_t err;

	if (dma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(dma, ctx.magic, "dma", DOCA_ERROR_INVALID_VALUE);
	/* DOCA documents IN_USE for a DMA context that is not idle */
	if (!sim_ctx_is_idle(&dma->ctx))
		return sim_fail(DOCA_ERROR_IN_USE, "%s: context is not idle", __func__);
	err = sim_ctx_fini(&dma->ctx);
	if (err != DOCA_SUCCESS)
		return err;
	free(dma->tasks);
	sim_release(dma, &dma->ctx.magic);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma)
{
	return dma == NULL ? NULL : &dma->ctx;
}

doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps.dma_memcpy_supported ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks)
{
	if (dma == NULL || max_num_tasks == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_tasks = dma->ctx.dev->info->caps.dma_max_num_tasks;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len)
{
	if (devinfo == NULL || max_buf_list_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_buf_list_len = devinfo->caps.dma_max_buf_list_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size)
{
	if (devinfo == NULL || buf_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*buf_size = devinfo->caps.dma_max_buf_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma, doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb, uint32_t num_memcpy_tasks)
{
	struct doca_dma_task_memcpy *tasks;

	if (dma == NULL || task_completion_cb == NULL || task_error_cb == NULL || num_memcpy_tasks == 0 ||
	    num_memcpy_tasks > dma->ctx.dev->info->caps.dma_max_num_tasks)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or task count %u", __func__,
				num_memcpy_tasks);
	if (dma->ctx.state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not idle", __func__);
	if (dma->ctx.allocated_tasks > 0)
		return sim_fail(DOCA_ERROR_IN_USE, "%s: tasks are still allocated", __func__);
	tasks = calloc(num_memcpy_tasks, sizeof(*tasks));
	if (tasks == NULL)
		return DOCA_ERROR_NO_MEMORY;
	free(dma->tasks);
	dma->tasks = tasks;
	dma->num_tasks = num_memcpy_tasks;
	dma->free_tasks = NULL;
	for (uint32_t i = num_memcpy_tasks; i-- > 0;) {
		tasks[i].dma = dma;
		tasks[i].task.next = dma->free_tasks;
		dma->free_tasks = &tasks[i].task;
	}
	dma->success_cb = sim_task_cb_cast(task_completion_cb);
	dma->error_cb = sim_task_cb_cast(task_error_cb);
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst,
					     union doca_data user_data, struct doca_dma_task_memcpy **task)
{
	struct doca_dma_task_memcpy *t;

	if (dma == NULL || task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (dma->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not running", __func__);
	if (dma->free_tasks == NULL)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "%s: all %u tasks are allocated", __func__, dma->num_tasks);
	t = (struct doca_dma_task_memcpy *)dma->free_tasks;
	dma->free_tasks = t->task.next;
	sim_task_init(&t->task, &memcpy_task_ops, &dma->ctx, dma->success_cb, dma->error_cb, user_data);
	t->src = src;
	t->dst = dst;
	t->allocated = true;
	*task = t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task)
{
	return task == NULL ? NULL : &task->task;
}

void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src)
{
	if (task != NULL)
		task->src = src;
}

const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task)
{
	return task == NULL ? NULL : task->src;
}

void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst)
{
	if (task != NULL)
		task->dst = dst;
}

struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task)
{
	return task == NULL ? NULL : task->dst;
}
