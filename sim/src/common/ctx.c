/*
 * The generic context state machine shared by every context kind (dma, comch server/client/producer/consumer).
 */
#include <stdlib.h>

#include "internal.h"
#include "accessors.h"

void sim_ctx_init(struct doca_ctx *ctx, const struct sim_ctx_ops *ops, struct doca_dev *dev)
{
	ctx->magic = SIM_MAGIC_LIVE;
	ctx->ops = ops;
	ctx->transitioned = false;
	ctx->done_head = NULL;
	ctx->done_tail = NULL;
	ctx->num_done = 0;
	ctx->state = DOCA_CTX_STATE_IDLE;
	ctx->user_data.u64 = 0;
	ctx->state_changed_cb = NULL;
	ctx->pe = NULL;
	ctx->pe_next = NULL;
	ctx->dev = dev;
	ctx->inflight = 0;
	ctx->allocated_tasks = 0;
	ctx->kind_stopping = false;
	sim_dev_ref(dev);
	sim_live_inc(SIM_KIND_CTX);
}

doca_error_t sim_ctx_fini(struct doca_ctx *ctx)
{
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "destroy of a %s context that is not idle", ctx->ops->kind);
	sim_pe_disconnect(ctx);
	sim_dev_unref(ctx->dev);
	ctx->dev = NULL;
	sim_live_dec(SIM_KIND_CTX);
	return DOCA_SUCCESS;
}

void sim_ctx_set_state(struct doca_ctx *ctx, enum doca_ctx_states next)
{
	enum doca_ctx_states prev = ctx->state;

	if (prev == next)
		return;
	ctx->state = next;
	ctx->transitioned = true;
	if (next == DOCA_CTX_STATE_IDLE)
		ctx->kind_stopping = false;
	if (ctx->state_changed_cb != NULL)
		ctx->state_changed_cb(ctx->user_data, ctx, prev, next);
}

void sim_ctx_kind_stopped(struct doca_ctx *ctx)
{
	ctx->kind_stopping = false;
	if (ctx->pe != NULL)
		sim_pe_signal(ctx->pe);
}

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	doca_error_t err;

	SIM_RETURN_IF_NULL_OR_DEAD(ctx, magic, "ctx");
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: %s context is not idle", __func__, ctx->ops->kind);
	if (ctx->pe == NULL)
		return sim_fail(DOCA_ERROR_NOT_CONNECTED, "%s: %s context is not connected to a pe", __func__,
				ctx->ops->kind);
	err = ctx->ops->start != NULL ? ctx->ops->start(ctx) : DOCA_SUCCESS;
	if (err == DOCA_SUCCESS) {
		sim_ctx_set_state(ctx, DOCA_CTX_STATE_RUNNING);
	} else if (err == DOCA_ERROR_IN_PROGRESS) {
		sim_ctx_set_state(ctx, DOCA_CTX_STATE_STARTING);
		sim_pe_signal(ctx->pe);
	}
	return err;
}

doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	doca_error_t err = DOCA_SUCCESS;

	SIM_RETURN_IF_NULL_OR_DEAD(ctx, magic, "ctx");
	/* Stopping an idle context is a no-op: NVIDIA's samples stop from the last completion callback and then again
	 * in their teardown, expecting success both times */
	if (ctx->state == DOCA_CTX_STATE_IDLE)
		return DOCA_SUCCESS;
	if (ctx->state == DOCA_CTX_STATE_STOPPING)
		return DOCA_ERROR_IN_PROGRESS;
	if (ctx->pe == NULL)
		return DOCA_ERROR_NOT_CONNECTED;
	sim_ctx_set_state(ctx, DOCA_CTX_STATE_STOPPING);
	if (ctx->ops->stop != NULL)
		err = ctx->ops->stop(ctx);
	if (err == DOCA_ERROR_IN_PROGRESS)
		ctx->kind_stopping = true;
	else if (err != DOCA_SUCCESS)
		return err;
	if (ctx->inflight == 0 && !ctx->kind_stopping) {
		sim_ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
		return DOCA_SUCCESS;
	}
	sim_pe_signal(ctx->pe);
	return DOCA_ERROR_IN_PROGRESS;
}

SIM_LIVE_GETTER(doca_ctx_get_num_inflight_tasks, const struct doca_ctx, ctx, "ctx", size_t, num_inflight_tasks,
	ctx->inflight)

SIM_LIVE_SETTER(doca_ctx_set_user_data, struct doca_ctx, ctx, "ctx", union doca_data, user_data, user_data)

SIM_LIVE_GETTER(doca_ctx_get_user_data, const struct doca_ctx, ctx, "ctx", union doca_data, user_data, ctx->user_data)

SIM_LIVE_SETTER(doca_ctx_set_state_changed_cb, struct doca_ctx, ctx, "ctx", doca_ctx_state_changed_callback_t, cb,
	state_changed_cb)

SIM_LIVE_GETTER(doca_ctx_get_state, const struct doca_ctx, ctx, "ctx", enum doca_ctx_states, state, ctx->state)
