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
#include "accessors.h"

static doca_error_t memcpy_validate(const struct doca_task *task)
{
	return sim_dma_validate((const struct doca_dma *)task->ctx, (const struct doca_dma_task_memcpy *)task);
}

static doca_error_t memcpy_execute(struct doca_task *task)
{
	return sim_dma_execute((const struct doca_dma *)task->ctx, (struct doca_dma_task_memcpy *)task);
}

static const struct sim_task_kind memcpy_kind = {
	SIM_POOL_KIND_FIELDS("dma_memcpy", struct doca_dma_task_memcpy),
	.validate = memcpy_validate,
	.execute = memcpy_execute,
};

static const struct sim_task_kind *const kinds[1] = {&memcpy_kind};

static doca_error_t dma_start(struct doca_ctx *ctx)
{
	struct doca_dma *dma = (struct doca_dma *)ctx;

	if (ctx->dev == NULL || !ctx->dev->info->caps.dma_memcpy_supported)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "dma: device does not support memcpy");
	if (dma->pool.num_tasks == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma: doca_dma_task_memcpy_set_conf was not called");
	return DOCA_SUCCESS;
}

static const struct sim_ctx_ops dma_ctx_ops = SIM_POOLED_CTX_OPS("dma", dma_start);

/* DOCA documents IN_USE for a DMA context that is not idle */
SIM_POOLED_CTX_API(dma, dma_ctx_ops, &dma->pool, kinds, 1, DOCA_ERROR_IN_USE)

doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps.dma_memcpy_supported ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

SIM_GETTER(doca_dma_cap_get_max_num_tasks, struct doca_dma, dma, uint32_t, max_num_tasks,
	dma->ctx.dev->info->caps.dma_max_num_tasks)

SIM_GETTER(doca_dma_cap_task_memcpy_get_max_buf_list_len, const struct doca_devinfo, devinfo, uint32_t,
	max_buf_list_len, devinfo->caps.dma_max_buf_list_len)

SIM_GETTER(doca_dma_cap_task_memcpy_get_max_buf_size, const struct doca_devinfo, devinfo, uint64_t, buf_size,
	devinfo->caps.dma_max_buf_size)

doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma, doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb, uint32_t num_memcpy_tasks)
{
	if (dma == NULL || num_memcpy_tasks > dma->ctx.dev->info->caps.dma_max_num_tasks)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or task count %u", __func__,
				num_memcpy_tasks);
	return sim_pool_conf(&dma->pool, &dma->ctx, &memcpy_kind, sim_task_cb_cast(task_completion_cb),
			     sim_task_cb_cast(task_error_cb), num_memcpy_tasks, __func__);
}

doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst,
					     union doca_data user_data, struct doca_dma_task_memcpy **task)
{
	if (dma == NULL || task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return sim_pool_alloc(&dma->pool, &dma->ctx, &memcpy_kind, src, dst, user_data,
			      (struct doca_task **)task, __func__);
}

SIM_VALUE_GETTER(struct doca_task *, doca_dma_task_memcpy_as_task, struct doca_dma_task_memcpy, task, NULL, &task->task)

SIM_VALUE_SETTER(doca_dma_task_memcpy_set_src, struct doca_dma_task_memcpy, task, const struct doca_buf *, src,
	task->src)

SIM_VALUE_GETTER(const struct doca_buf *, doca_dma_task_memcpy_get_src, const struct doca_dma_task_memcpy, task, NULL,
	task->src)

SIM_VALUE_SETTER(doca_dma_task_memcpy_set_dst, struct doca_dma_task_memcpy, task, struct doca_buf *, dst, task->dst)

SIM_VALUE_GETTER(struct doca_buf *, doca_dma_task_memcpy_get_dst, const struct doca_dma_task_memcpy, task, NULL,
	task->dst)
