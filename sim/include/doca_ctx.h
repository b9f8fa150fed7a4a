/*
 * Software DOCA device: the generic context every data-path library (dma, comch, ...) is driven through.
 *
 * States: IDLE -(start)-> RUNNING, or STARTING then RUNNING through progress when the start is asynchronous;
 * RUNNING/STARTING -(stop)-> STOPPING while tasks are flushed during progress, then IDLE.
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;

enum doca_ctx_states {
	DOCA_CTX_STATE_IDLE = 0,     /* configurable; no tasks */
	DOCA_CTX_STATE_STARTING = 1, /* asynchronous start under way */
	DOCA_CTX_STATE_RUNNING = 2,  /* tasks may be allocated and submitted */
	DOCA_CTX_STATE_STOPPING = 3, /* in-flight tasks are being flushed by progress */
};

/* Called from doca_pe_progress (or from doca_ctx_start/stop for synchronous transitions); the ctx is already in
 * next_state. */
typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data,
						  struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state,
						  enum doca_ctx_states next_state);

DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/* DOCA_ERROR_IN_PROGRESS: tasks are still in flight, the ctx is STOPPING and reaches IDLE through progress */
DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks);

DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);

DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);

DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
