/*
 * The task-kind template of the accelerator-style contexts (DMA, compress, SHA, erasure coding, AES-GCM): each task
 * kind comes from a pool its _set_conf sizes (no allocation per task), a submit only queues, the work runs in the
 * context's progress hook, and a stop flushes what has not run, so every callback comes from doca_pe_progress.
 *
 * A library describes each task kind once (struct sim_task_kind: its struct's size, where its buffers are, how it is
 * checked and run) and keeps one struct sim_task_pool per kind; task_pool.c does the allocating, submitting,
 * running, completing and flushing for all of them.
 */
#ifndef SIM_TASK_POOL_H_
#define SIM_TASK_POOL_H_

#include <stddef.h>

#include "internal.h"

struct sim_task_kind {
	/* first: a task's ops lead back to its kind. Fill it with SIM_POOL_TASK_OPS */
	struct sim_task_ops ops;
	size_t size;   /* of the kind's task struct, which starts with its struct doca_task */
	size_t src_at; /* offsetof its `const struct doca_buf *` source */
	size_t dst_at; /* offsetof its `struct doca_buf *` destination */
	/* Checks a task (doca_task_try_submit, and before it runs): DOCA_SUCCESS or the status it fails with */
	doca_error_t (*validate)(const struct doca_task *task);
	/* Runs a task that validated: its status */
	doca_error_t (*execute)(struct doca_task *task);
	/* Optional: the task was accepted by a submit */
	void (*submitted)(struct doca_task *task);
	/* Optional: the task completes without running (flushed by a stop, or invalid) */
	void (*not_run)(struct doca_task *task);
	/* Optional: the task goes back to its pool (doca_task_free) or its context is destroyed */
	void (*release)(struct doca_task *task);
};

/* The ops of a pool task kind named `name` (its diagnostics name: "dma_memcpy", ...) */
#define SIM_POOL_TASK_OPS(name) { .kind = (name), .free = sim_pool_task_free, .bufs = sim_pool_task_bufs }
/* The fields every pool kind fills the same way, inside its initializer: its ops under `name`, and the size and the
 * source and destination members (`src`, `dst`) of its task struct `type`. The kind adds .validate, .execute, ... */
#define SIM_POOL_KIND_FIELDS(name, type) \
	.ops = SIM_POOL_TASK_OPS(name), .size = sizeof(type), .src_at = offsetof(type, src), .dst_at = offsetof(type, dst)

struct sim_task_pool {
	unsigned char *tasks; /* num_tasks of kind->size bytes, allocated by sim_pool_conf */
	uint32_t num_tasks;
	struct doca_task *free_tasks;
	sim_task_cb_t success_cb;
	sim_task_cb_t error_cb;
};

/* The ctx ops of a pooled context named `name` whose start hook is `start_fn` */
#define SIM_POOLED_CTX_OPS(name, start_fn) \
	{ \
		.kind = (name), .start = (start_fn), .stop = sim_pooled_stop, .progress = sim_pooled_progress, \
		.submit = sim_pooled_submit, .validate = sim_pooled_validate, \
	}

SIM_EXPORT void sim_pool_task_free(struct doca_task *task);
SIM_EXPORT size_t sim_pool_task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS]);
SIM_EXPORT doca_error_t sim_pooled_stop(struct doca_ctx *ctx);
SIM_EXPORT int sim_pooled_progress(struct doca_ctx *ctx);
SIM_EXPORT doca_error_t sim_pooled_submit(struct doca_ctx *ctx, struct doca_task *task);
SIM_EXPORT doca_error_t sim_pooled_validate(struct doca_ctx *ctx, struct doca_task *task);

/* doca_<lib>_create: a zeroed context object of `size` bytes (its struct doca_ctx first) on dev */
SIM_EXPORT doca_error_t sim_pooled_create(struct doca_dev *dev, size_t size, const struct sim_ctx_ops *ops,
					  void **out);
/* doca_<lib>_destroy: ctx is the context object (its struct doca_ctx first; NULL gives INVALID_VALUE), `name` names it
 * in diagnostics, `not_idle` is what a context not idle returns (DOCA's headers differ per library). Frees the pools'
 * tasks and the object. */
SIM_EXPORT doca_error_t sim_pooled_destroy(struct doca_ctx *ctx, const char *name, struct sim_task_pool *pools,
					   const struct sim_task_kind *const *kinds, size_t num_pools,
					   doca_error_t not_idle, const char *func);
/* doca_<lib>_create, doca_<lib>_destroy and doca_<lib>_as_ctx of a pooled context, the same in each library that has
 * no more to do in them: struct doca_<lib> has its ctx first; pools is the expression (naming the handle `lib`) of
 * its num_pools pools of the kinds `kinds`; not_idle is what destroy returns for a context that is not idle */
#define SIM_POOLED_CTX_API(lib, ctx_ops, pools, kinds, num_pools, not_idle) \
	doca_error_t doca_##lib##_create(struct doca_dev *dev, struct doca_##lib **lib) \
	{ \
		return sim_pooled_create(dev, sizeof(**lib), &(ctx_ops), (void **)lib); \
	} \
	doca_error_t doca_##lib##_destroy(struct doca_##lib *lib) \
	{ \
		return sim_pooled_destroy((struct doca_ctx *)lib, #lib, lib == NULL ? NULL : (pools), (kinds), (num_pools), \
					  (not_idle), __func__); \
	} \
	struct doca_ctx *doca_##lib##_as_ctx(struct doca_##lib *lib) \
	{ \
		return lib == NULL ? NULL : &lib->ctx; \
	}

/* doca_<lib>_task_<name>_set_conf under DOCA's name and types (the task count is `count_type count`: DOCA's headers
 * differ per library), the same wrapper in every pooled library: the kind's typed callbacks become sim_task_cb_t and
 * go, with the count and the caller's name, to the library's own `set_conf(handle, KIND, ok, fail, count, func)`,
 * which checks its limits and calls sim_pool_conf */
#define SIM_POOLED_SET_CONF(lib, name, KIND, count_type, count) \
	doca_error_t doca_##lib##_task_##name##_set_conf(struct doca_##lib *lib, \
							 doca_##lib##_task_##name##_completion_cb_t task_completion_cb, \
							 doca_##lib##_task_##name##_completion_cb_t task_error_cb, \
							 count_type count) \
	{ \
		return set_conf(lib, (KIND), sim_task_cb_cast(task_completion_cb), sim_task_cb_cast(task_error_cb), \
				count, __func__); \
	}

/* True when at least one of the pools was configured (the start hooks refuse a context with none) */
SIM_EXPORT bool sim_pools_configured(const struct sim_task_pool *pools, size_t num_pools);

/* The checks and pool (re)allocation every _set_conf shares, after the library's own limits */
SIM_EXPORT doca_error_t sim_pool_conf(struct sim_task_pool *pool, const struct doca_ctx *ctx,
				      const struct sim_task_kind *kind, sim_task_cb_t done, sim_task_cb_t failed,
				      uint32_t num_tasks, const char *func);
/* The part of every _alloc_init that takes a task from the pool: its kind fields zeroed, its source and destination
 * set; the library fills in the rest */
SIM_EXPORT doca_error_t sim_pool_alloc(struct sim_task_pool *pool, struct doca_ctx *ctx,
				       const struct sim_task_kind *kind, const struct doca_buf *src,
				       struct doca_buf *dst, union doca_data user_data, struct doca_task **out,
				       const char *func);
/* sim_pool_alloc behind the checks every accelerator's _alloc_init starts with (its context not NULL, the caller's
 * check): INVALID_VALUE for a NULL out-parameter, and for a destroyed context in strict mode (reported as `object`
 * used by `func`) */
SIM_EXPORT doca_error_t sim_pool_alloc_live(struct sim_task_pool *pool, struct doca_ctx *ctx, const char *object,
					    const struct sim_task_kind *kind, const struct doca_buf *src,
					    struct doca_buf *dst, union doca_data user_data, struct doca_task **out,
					    const char *func);

#endif /* SIM_TASK_POOL_H_ */
