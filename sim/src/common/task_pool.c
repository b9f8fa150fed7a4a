/*
 * The task-kind template (task_pool.h): pools, the queue of submitted tasks, running them from the progress hook and
 * flushing them at stop, written once for every accelerator-style context.
 */
#include <stdlib.h>
#include <string.h>

#include "task_pool.h"

static const struct sim_task_kind *kind_of(const struct doca_task *task)
{
	return (const struct sim_task_kind *)task->ops;
}

static const struct doca_buf **src_of(const struct doca_task *task, const struct sim_task_kind *kind)
{
	return (const struct doca_buf **)((unsigned char *)task + kind->src_at);
}

static struct doca_buf **dst_of(const struct doca_task *task, const struct sim_task_kind *kind)
{
	return (struct doca_buf **)((unsigned char *)task + kind->dst_at);
}

static struct doca_task *pool_task(const struct sim_task_pool *pool, const struct sim_task_kind *kind, uint32_t i)
{
	return (struct doca_task *)(pool->tasks + (size_t)i * kind->size);
}

void sim_pool_task_free(struct doca_task *task)
{
	const struct sim_task_kind *kind = kind_of(task);
	struct sim_task_pool *pool = task->pool;

	if (kind->release != NULL)
		kind->release(task);
	sim_task_fini(task); /* clears task->ops: the kind was read before */
	*src_of(task, kind) = NULL;
	*dst_of(task, kind) = NULL;
	task->next = pool->free_tasks;
	pool->free_tasks = task;
}

size_t sim_pool_task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	const struct doca_buf *src = *src_of(task, kind_of(task));
	struct doca_buf *dst = *dst_of(task, kind_of(task));
	size_t n = 0;

	if (src != NULL)
		out[n++] = (struct doca_buf *)src;
	if (dst != NULL && dst != src)
		out[n++] = dst;
	return n;
}

/* Takes the whole queue: what a stop or a progress turn works through */
static struct doca_task *take_pending(struct doca_ctx *ctx)
{
	struct doca_task *task = ctx->pending_head;

	ctx->pending_head = NULL;
	ctx->pending_tail = NULL;
	return task;
}

doca_error_t sim_pooled_stop(struct doca_ctx *ctx)
{
	struct doca_task *task = take_pending(ctx);

	/* Tasks that have not run are flushed: nothing is written, their error callback reports the flush */
	while (task != NULL) {
		struct doca_task *next = task->next;

		if (kind_of(task)->not_run != NULL)
			kind_of(task)->not_run(task);
		sim_task_complete(task, SIM_TASK_FLUSHED_STATUS);
		task = next;
	}
	return DOCA_SUCCESS;
}

int sim_pooled_progress(struct doca_ctx *ctx)
{
	struct doca_task *task = take_pending(ctx);

	if (task == NULL)
		return 0;
	while (task != NULL) {
		struct doca_task *next = task->next;
		const struct sim_task_kind *kind = kind_of(task);
		/* doca_task_submit does not validate (DOCA): an invalid task fails here, through its error callback */
		doca_error_t err = kind->validate(task);

		if (err != DOCA_SUCCESS) {
			sim_strict_report(SIM_RULE_INVALID_TASK, "doca_task_submit", task->ops->kind, task,
					  "completed with %s", doca_error_get_name(err));
			if (kind->not_run != NULL)
				kind->not_run(task);
		} else {
			err = kind->execute(task);
		}
		sim_task_complete(task, err);
		task = next;
	}
	return 1;
}

doca_error_t sim_pooled_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	if (kind_of(task)->submitted != NULL)
		kind_of(task)->submitted(task);
	SIM_QUEUE_APPEND(ctx->pending_head, ctx->pending_tail, task, next);
	sim_pe_signal(ctx->pe);
	return DOCA_SUCCESS;
}

doca_error_t sim_pooled_validate(struct doca_ctx *ctx, struct doca_task *task)
{
	(void)ctx;
	return kind_of(task)->validate(task);
}

doca_error_t sim_pooled_create(struct doca_dev *dev, size_t size, const struct sim_ctx_ops *ops, void **out)
{
	struct doca_ctx *ctx;

	if (dev == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx = calloc(1, size);
	if (ctx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sim_ctx_init(ctx, ops, dev);
	*out = ctx;
	return DOCA_SUCCESS;
}

doca_error_t sim_pooled_destroy(struct doca_ctx *ctx, const char *name, struct sim_task_pool *pools,
				const struct sim_task_kind *const *kinds, size_t num_pools, doca_error_t not_idle,
				const char *func)
{
	doca_error_t err;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (sim_handle_dead(&ctx->magic, func, name, ctx))
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_ctx_is_idle(ctx))
		return sim_fail(not_idle, "%s: context is not idle", func);
	err = sim_ctx_fini(ctx);
	if (err != DOCA_SUCCESS)
		return err;
	for (size_t k = 0; k < num_pools; k++) {
		if (kinds[k]->release != NULL)
			for (uint32_t i = 0; i < pools[k].num_tasks; i++)
				kinds[k]->release(pool_task(&pools[k], kinds[k], i));
		free(pools[k].tasks);
	}
	sim_release(ctx, &ctx->magic);
	return DOCA_SUCCESS;
}

bool sim_pools_configured(const struct sim_task_pool *pools, size_t num_pools)
{
	for (size_t k = 0; k < num_pools; k++)
		if (pools[k].num_tasks > 0)
			return true;
	return false;
}

doca_error_t sim_pool_conf(struct sim_task_pool *pool, const struct doca_ctx *ctx, const struct sim_task_kind *kind,
			   sim_task_cb_t done, sim_task_cb_t failed, uint32_t num_tasks, const char *func)
{
	unsigned char *tasks;

	if (done == NULL || failed == NULL || num_tasks == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or task count %u", func, num_tasks);
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not idle", func);
	for (uint32_t i = 0; i < pool->num_tasks; i++)
		if (pool_task(pool, kind, i)->ops != NULL)
			return sim_fail(DOCA_ERROR_IN_USE, "%s: tasks are still allocated", func);
	tasks = calloc(num_tasks, kind->size);
	if (tasks == NULL)
		return DOCA_ERROR_NO_MEMORY;
	free(pool->tasks);
	pool->tasks = tasks;
	pool->num_tasks = num_tasks;
	pool->free_tasks = NULL;
	for (uint32_t i = num_tasks; i-- > 0;) {
		struct doca_task *task = pool_task(pool, kind, i);

		task->next = pool->free_tasks;
		pool->free_tasks = task;
	}
	pool->success_cb = done;
	pool->error_cb = failed;
	return DOCA_SUCCESS;
}

doca_error_t sim_pool_alloc(struct sim_task_pool *pool, struct doca_ctx *ctx, const struct sim_task_kind *kind,
			    const struct doca_buf *src, struct doca_buf *dst, union doca_data user_data,
			    struct doca_task **out, const char *func)
{
	struct doca_task *task;

	if (ctx->state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not running", func);
	if (pool->free_tasks == NULL)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "%s: all %u tasks are allocated", func, pool->num_tasks);
	task = pool->free_tasks;
	pool->free_tasks = task->next;
	/* the kind's own fields start from zero at every allocation: nothing of the task's last use carries over */
	memset((unsigned char *)task + sizeof(*task), 0, kind->size - sizeof(*task));
	sim_task_init(task, &kind->ops, ctx, pool->success_cb, pool->error_cb, user_data);
	task->pool = pool;
	*src_of(task, kind) = src;
	*dst_of(task, kind) = dst;
	*out = task;
	return DOCA_SUCCESS;
}

doca_error_t sim_pool_alloc_live(struct sim_task_pool *pool, struct doca_ctx *ctx, const char *object,
				 const struct sim_task_kind *kind, const struct doca_buf *src, struct doca_buf *dst,
				 union doca_data user_data, struct doca_task **out, const char *func)
{
	if (out == NULL || sim_handle_dead(&ctx->magic, func, object, ctx))
		return DOCA_ERROR_INVALID_VALUE;
	return sim_pool_alloc(pool, ctx, kind, src, dst, user_data, out, func);
}
