/*
 * Software DOCA device: progress engine and generic tasks.
 * Every completion, state-change and event callback runs inside doca_pe_progress on the calling thread.
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_pe;
struct doca_task;

/* Generic shape of task completion callbacks (each task kind has its own typed equivalent) */
typedef void (*doca_task_completion_cb_t)(struct doca_task *task,
					  union doca_data task_user_data,
					  union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe);

/* DOCA_ERROR_IN_USE while contexts are still connected */
DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe);

/* A context belongs to exactly one pe, for its whole life: connect while the ctx is IDLE (DOCA_ERROR_BAD_STATE
 * otherwise; DOCA_ERROR_NOT_PERMITTED if it is already connected) */
DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/* Run completions, events and state transitions; 1 if anything happened, 0 otherwise.
 * Must not be called from inside a callback. */
DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe);

/* A file descriptor that turns readable when progress has work (stable for the pe's lifetime) */
DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle);

/* After waking up on the handle: clear it, then call doca_pe_progress until it returns 0, then re-arm */
DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

DOCA_STABLE
doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);

/* Hand a task to DOCA; on failure the caller still owns it */
DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task);

/* Like doca_task_submit, validating the task first (DOCA_ERROR_INVALID_VALUE if it is malformed) */
DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task);

/* Return a task (not in flight) to the context it was allocated from */
DOCA_STABLE
void doca_task_free(struct doca_task *task);

DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task);

DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);

DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task);

DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
