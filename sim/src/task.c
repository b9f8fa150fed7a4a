/*
 * Generic tasks: submission, completion queueing and the accessors every task kind shares.
 */
#include <stddef.h>

#include "internal.h"

void sim_task_init(struct doca_task *task, const struct sim_task_ops *ops, struct doca_ctx *ctx,
		   sim_task_cb_t success_cb, sim_task_cb_t error_cb, union doca_data user_data)
{
	task->ops = ops;
	task->ctx = ctx;
	task->user_data = user_data;
	task->status = DOCA_SUCCESS;
	task->success_cb = success_cb;
	task->error_cb = error_cb;
	task->next = NULL;
	task->submitted = false;
	ctx->allocated_tasks++;
	sim_live_inc(SIM_KIND_TASK);
}

void sim_task_fini(struct doca_task *task)
{
	task->ctx->allocated_tasks--;
	sim_live_dec(SIM_KIND_TASK);
}

void sim_task_complete(struct doca_task *task, doca_error_t status)
{
	struct doca_pe *pe = task->ctx->pe;

	task->status = status;
	task->next = NULL;
	if (pe->done_tail != NULL)
		pe->done_tail->next = task;
	else
		pe->done_head = task;
	pe->done_tail = task;
	sim_pe_signal(pe);
}

static doca_error_t submit(struct doca_task *task)
{
	struct doca_ctx *ctx;
	doca_error_t err;

	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx = task->ctx;
	if (task->submitted)
		return sim_fail(DOCA_ERROR_IN_USE, "%s task submitted twice", task->ops->kind);
	if (ctx->state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s task submitted while its context is not running",
				task->ops->kind);
	if (ctx->ops->submit == NULL)
		return DOCA_ERROR_NOT_SUPPORTED;
	/* Counted before the kind sees it: the kind may already queue the completion */
	task->submitted = true;
	ctx->inflight++;
	ctx->pe->inflight++;
	err = ctx->ops->submit(ctx, task);
	if (err != DOCA_SUCCESS) {
		task->submitted = false;
		ctx->inflight--;
		ctx->pe->inflight--;
	}
	return err;
}

doca_error_t doca_task_submit(struct doca_task *task)
{
	return submit(task);
}

/* Every kind validates its tasks in its submit hook, so both entry points behave alike */
doca_error_t doca_task_try_submit(struct doca_task *task)
{
	return submit(task);
}

void doca_task_free(struct doca_task *task)
{
	if (task == NULL)
		return;
	if (task->submitted) {
		sim_log(SIM_LOG_ERROR, "doca_task_free of a %s task still in flight: ignored", task->ops->kind);
		return;
	}
	task->ops->free(task);
}

doca_error_t doca_task_get_status(const struct doca_task *task)
{
	return task == NULL ? DOCA_ERROR_INVALID_VALUE : task->status;
}

void doca_task_set_user_data(struct doca_task *task, union doca_data user_data)
{
	if (task != NULL)
		task->user_data = user_data;
}

union doca_data doca_task_get_user_data(const struct doca_task *task)
{
	union doca_data none = {.u64 = 0};

	return task == NULL ? none : task->user_data;
}

struct doca_ctx *doca_task_get_ctx(const struct doca_task *task)
{
	return task == NULL ? NULL : task->ctx;
}
