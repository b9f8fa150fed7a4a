/*
 * Generic tasks: submission, completion queueing and the accessors every task kind shares.
 */
#include <stddef.h>

#include "internal.h"
#include "accessors.h"

void sim_task_init(struct doca_task *task, const struct sim_task_ops *ops, struct doca_ctx *ctx,
		   sim_task_cb_t success_cb, sim_task_cb_t error_cb, union doca_data user_data)
{
	sim_pe_forget_deferred_free(task);
	task->ops = ops;
	task->ctx = ctx;
	task->user_data = user_data;
	task->status = DOCA_SUCCESS;
	task->success_cb = success_cb;
	task->error_cb = error_cb;
	task->next = NULL;
	task->submitted = false;
	task->completed = false;
	task->bad_frees = 0;
	task->num_held = 0;
	ctx->allocated_tasks++;
	sim_live_inc(SIM_KIND_TASK);
}

void sim_task_fini(struct doca_task *task)
{
	if (task->completed)
		sim_completed_tasks_add(-1);
	task->completed = false;
	task->ops = NULL; /* a pool task is not allocated any more: a second doca_task_free is refused */
	task->ctx->allocated_tasks--;
	sim_live_dec(SIM_KIND_TASK);
}

void sim_task_complete(struct doca_task *task, doca_error_t status)
{
	struct doca_ctx *ctx = task->ctx;
	struct doca_pe *pe = ctx->pe;

	task->status = status;
	SIM_QUEUE_APPEND(ctx->done_head, ctx->done_tail, task, next);
	ctx->num_done++;
	pe->num_done++;
	sim_pe_signal(pe);
}

static doca_error_t submit(struct doca_task *task, const char *func, bool validate)
{
	struct doca_ctx *ctx;
	doca_error_t err;

	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx = task->ctx;
	SIM_RETURN_IF_DEAD(ctx, magic, "ctx of the task", DOCA_ERROR_BAD_STATE);
	if (task->submitted)
		return sim_fail(DOCA_ERROR_IN_USE, "%s task submitted twice", task->ops->kind);
	if (ctx->state != DOCA_CTX_STATE_RUNNING) {
		sim_strict_report(SIM_RULE_SUBMIT_NOT_RUNNING, func, task->ops->kind, task,
				  "its %s context is %s: returned DOCA_ERROR_BAD_STATE", ctx->ops->kind,
				  ctx->state == DOCA_CTX_STATE_IDLE       ? "IDLE"
				  : ctx->state == DOCA_CTX_STATE_STARTING ? "STARTING"
									  : "STOPPING");
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s task submitted while its context is not running",
				task->ops->kind);
	}
	if (ctx->ops->submit == NULL)
		return DOCA_ERROR_NOT_SUPPORTED;
	if (validate && ctx->ops->validate != NULL) {
		err = ctx->ops->validate(ctx, task);
		if (err != DOCA_SUCCESS)
			return err;
	}
	if (task->completed)
		sim_completed_tasks_add(-1); /* resubmitted from (or after) its callback */
	task->completed = false;
	/* The program owns the task again (it resubmits it): a free it asked for while the task was in flight is void */
	task->bad_frees = 0;
	/* Counted before the kind sees it: the kind may already queue the completion */
	task->submitted = true;
	ctx->inflight++;
	ctx->pe->inflight++;
	task->num_held = 0;
	if (task->ops->bufs != NULL) {
		task->num_held = (uint8_t)task->ops->bufs(task, task->held);
		for (uint8_t i = 0; i < task->num_held; i++)
			sim_buf_hold(task->held[i]);
	}
	err = ctx->ops->submit(ctx, task);
	if (err != DOCA_SUCCESS) {
		task->submitted = false;
		ctx->inflight--;
		ctx->pe->inflight--;
		sim_task_release_bufs(task);
	}
	return err;
}

/* Like DOCA: no validation; an invalid task fails at completion through the error callback */
doca_error_t doca_task_submit(struct doca_task *task)
{
	return submit(task, __func__, false);
}

/* Validates first (DOCA_ERROR_INVALID_VALUE, the task stays the caller's) */
doca_error_t doca_task_try_submit(struct doca_task *task)
{
	return submit(task, __func__, true);
}

void doca_task_free(struct doca_task *task)
{
	if (task == NULL)
		return;
	if (sim_pe_freed_after_callback(task)) {
		/* freed in flight, then again: the first free was carried out after the task's callback */
		sim_strict_report(SIM_RULE_USE_AFTER_DESTROY, __func__, "task", task,
				  "task was already freed (it was freed in flight, which took effect after its callback)");
		return;
	}
	if (task->submitted) {
		/* Freeing it would let the pool hand it out while DOCA still completes it: keep it until its callback ran
		 * and free it then (pe.c, run_callback); report it (once per kind in strict mode; once per process
		 * otherwise, so a loop freeing 1,000 tasks is one line) */
		static bool told;

		/* one misuse per task: freeing it again before its callback is the same mistake */
		if (task->bad_frees++ > 0)
			return;
		if (sim_strict_mode() != 0) {
			sim_strict_report(SIM_RULE_FREE_INFLIGHT_TASK, __func__, task->ops->kind, task,
					  "task still in flight (submitted, completion callback not run yet)");
		} else if (!told) {
			told = true;
			sim_log(SIM_LOG_ERROR,
				"doca_task_free of a %s task still in flight: carried out after its completion callback "
				"(DOCA_SIM_STRICT=1 counts every such task)",
				task->ops->kind);
		}
		return;
	}
	sim_pe_note_task_freed(task);
	if (task->ops == NULL) {
		/* a pool task already back in its pool (freed twice, or released with its context) */
		sim_strict_report(SIM_RULE_USE_AFTER_DESTROY, __func__, "task", task, "task was already freed");
		return;
	}
	task->ops->free(task);
}

SIM_VALUE_GETTER(doca_error_t, doca_task_get_status, const struct doca_task, task, DOCA_ERROR_INVALID_VALUE,
	task->status)

SIM_VALUE_SETTER(doca_task_set_user_data, struct doca_task, task, union doca_data, user_data, task->user_data)

union doca_data doca_task_get_user_data(const struct doca_task *task)
{
	union doca_data none = {.u64 = 0};

	return task == NULL ? none : task->user_data;
}

SIM_VALUE_GETTER(struct doca_ctx *, doca_task_get_ctx, const struct doca_task, task, NULL, task->ctx)
