/*
 * libdoca_sha: the SHA context, its hash and partial hash task pools (2^log_num_tasks each) and capability queries.
 * A submit only queues; the digests are computed in the context's progress hook (sha_exec.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sha_internal.h"

static void task_free(struct doca_task *task)
{
	struct sim_sha_task *t = (struct sim_sha_task *)task;
	struct sim_sha_pool *pool = &t->sha->pools[t->kind];

	sim_task_fini(task);
	sim_sha_session_free(t);
	t->src = NULL;
	t->dst = NULL;
	task->next = pool->free_tasks;
	pool->free_tasks = task;
}

static size_t task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	const struct sim_sha_task *t = (const struct sim_sha_task *)task;
	size_t n = 0;

	if (t->src != NULL)
		out[n++] = (struct doca_buf *)t->src;
	if (t->dst != NULL)
		out[n++] = t->dst;
	return n;
}

static const struct sim_task_ops task_ops[SIM_SHA_KIND_COUNT_] = {
	{ .kind = "sha_hash", .free = task_free, .bufs = task_bufs },
	{ .kind = "sha_partial_hash", .free = task_free, .bufs = task_bufs },
};

static doca_error_t sha_start(struct doca_ctx *ctx)
{
	struct doca_sha *s = (struct doca_sha *)ctx;

	if (s->pools[SIM_SHA_HASH].num_tasks + s->pools[SIM_SHA_PARTIAL].num_tasks == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: no task kind was configured (set_conf)");
	if (!sim_sha_available())
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "sha: %s", doca_sim_sha_backend_missing());
	return DOCA_SUCCESS;
}

static doca_error_t sha_stop(struct doca_ctx *ctx)
{
	struct doca_sha *s = (struct doca_sha *)ctx;
	struct doca_task *task = s->pending_head;

	s->pending_head = NULL;
	s->pending_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;
		struct sim_sha_task *t = (struct sim_sha_task *)task;

		if (t->kind == SIM_SHA_PARTIAL)
			t->broken = true; /* a part of the session never ran */
		sim_task_complete(task, SIM_TASK_FLUSHED_STATUS);
		task = next;
	}
	return DOCA_SUCCESS;
}

static int sha_progress(struct doca_ctx *ctx)
{
	struct doca_sha *s = (struct doca_sha *)ctx;
	struct doca_task *task = s->pending_head;

	if (task == NULL)
		return 0;
	s->pending_head = NULL;
	s->pending_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;
		struct sim_sha_task *t = (struct sim_sha_task *)task;
		doca_error_t err = sim_sha_validate(t);

		if (err != DOCA_SUCCESS) {
			sim_strict_report(SIM_RULE_INVALID_TASK, "doca_task_submit", task->ops->kind, task,
					  "completed with %s", doca_error_get_name(err));
			if (t->kind == SIM_SHA_PARTIAL)
				t->broken = true;
		} else {
			err = sim_sha_execute(t);
		}
		sim_task_complete(task, err);
		task = next;
	}
	return 1;
}

static doca_error_t sha_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_sha *s = (struct doca_sha *)ctx;
	struct sim_sha_task *t = (struct sim_sha_task *)task;

	if (t->kind == SIM_SHA_PARTIAL)
		t->started = true;
	task->next = NULL;
	if (s->pending_tail != NULL)
		s->pending_tail->next = task;
	else
		s->pending_head = task;
	s->pending_tail = task;
	sim_pe_signal(ctx->pe);
	return DOCA_SUCCESS;
}

static doca_error_t sha_validate(struct doca_ctx *ctx, struct doca_task *task)
{
	(void)ctx;
	return sim_sha_validate((const struct sim_sha_task *)task);
}

static const struct sim_ctx_ops sha_ctx_ops = {
	.kind = "sha",
	.start = sha_start,
	.stop = sha_stop,
	.progress = sha_progress,
	.submit = sha_submit,
	.validate = sha_validate,
};

doca_error_t doca_sha_create(struct doca_dev *dev, struct doca_sha **sha)
{
	struct doca_sha *s;

	if (dev == NULL || sha == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sim_ctx_init(&s->ctx, &sha_ctx_ops, dev);
	*sha = s;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_destroy(struct doca_sha *sha)
{
	doca_error_t err;

	if (sha == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(sha, ctx.magic, "sha", DOCA_ERROR_INVALID_VALUE);
	if (!sim_ctx_is_idle(&sha->ctx))
		return sim_fail(DOCA_ERROR_IN_USE, "%s: context is not idle", __func__);
	err = sim_ctx_fini(&sha->ctx);
	if (err != DOCA_SUCCESS)
		return err;
	for (int k = 0; k < SIM_SHA_KIND_COUNT_; k++) {
		for (uint32_t i = 0; i < sha->pools[k].num_tasks; i++)
			sim_sha_session_free(&sha->pools[k].tasks[i]);
		free(sha->pools[k].tasks);
	}
	sim_release(sha, &sha->ctx.magic);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_sha_as_ctx(struct doca_sha *sha)
{
	return sha == NULL ? NULL : &sha->ctx;
}

static doca_error_t cap_algorithm(const struct doca_devinfo *devinfo, enum doca_sha_algorithm algorithm,
				  uint32_t *digest, uint32_t *block)
{
	if (devinfo == NULL || !sim_sha_sizes(algorithm, digest, block))
		return DOCA_ERROR_INVALID_VALUE;
	return sim_sha_available() ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_sha_cap_task_hash_get_supported(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm)
{
	uint32_t digest, block;

	return cap_algorithm(devinfo, algorithm, &digest, &block);
}

doca_error_t doca_sha_cap_task_partial_hash_get_supported(struct doca_devinfo const *devinfo,
							  enum doca_sha_algorithm algorithm)
{
	uint32_t digest, block;

	return cap_algorithm(devinfo, algorithm, &digest, &block);
}

doca_error_t doca_sha_cap_get_max_list_buf_num_elem(struct doca_devinfo const *devinfo, uint32_t *max_list_num_elem)
{
	if (devinfo == NULL || max_list_num_elem == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_sha_available())
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_list_num_elem = SIM_SHA_MAX_LIST_LEN;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_cap_get_max_src_buf_size(struct doca_devinfo const *devinfo, uint64_t *max_buf_size)
{
	if (devinfo == NULL || max_buf_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_sha_available())
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_buf_size = SIM_SHA_MAX_SRC_BUF_SIZE;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_cap_get_min_dst_buf_size(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm,
					       uint32_t *min_buf_size)
{
	uint32_t digest, block;
	doca_error_t err;

	if (min_buf_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = cap_algorithm(devinfo, algorithm, &digest, &block);
	if (err == DOCA_SUCCESS)
		*min_buf_size = digest;
	return err;
}

doca_error_t doca_sha_cap_get_partial_hash_block_size(struct doca_devinfo const *devinfo,
						      enum doca_sha_algorithm algorithm, uint32_t *partial_block_size)
{
	uint32_t digest, block;
	doca_error_t err;

	if (partial_block_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = cap_algorithm(devinfo, algorithm, &digest, &block);
	if (err == DOCA_SUCCESS)
		*partial_block_size = block;
	return err;
}

static doca_error_t set_conf(struct doca_sha *s, enum sim_sha_kind kind, sim_task_cb_t done, sim_task_cb_t failed,
			     uint8_t log_num_tasks, const char *func)
{
	struct sim_sha_pool *pool;
	struct sim_sha_task *tasks;
	uint32_t num;

	if (s == NULL || done == NULL || failed == NULL || log_num_tasks > SIM_SHA_MAX_LOG_NUM_TASKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or log_num_tasks %u", func,
				log_num_tasks);
	if (s->ctx.state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not idle", func);
	pool = &s->pools[kind];
	for (uint32_t i = 0; i < pool->num_tasks; i++)
		if (pool->tasks[i].task.ops != NULL)
			return sim_fail(DOCA_ERROR_IN_USE, "%s: tasks are still allocated", func);
	num = 1u << log_num_tasks;
	tasks = calloc(num, sizeof(*tasks));
	if (tasks == NULL)
		return DOCA_ERROR_NO_MEMORY;
	free(pool->tasks);
	pool->tasks = tasks;
	pool->num_tasks = num;
	pool->free_tasks = NULL;
	for (uint32_t i = num; i-- > 0;) {
		tasks[i].sha = s;
		tasks[i].kind = kind;
		tasks[i].task.next = pool->free_tasks;
		pool->free_tasks = &tasks[i].task;
	}
	pool->success_cb = done;
	pool->error_cb = failed;
	return DOCA_SUCCESS;
}

static doca_error_t alloc_init(struct doca_sha *s, enum sim_sha_kind kind, enum doca_sha_algorithm algorithm,
			       const struct doca_buf *src, struct doca_buf *dst, union doca_data user_data,
			       struct sim_sha_task **out, const char *func)
{
	struct sim_sha_pool *pool;
	struct sim_sha_task *t;
	uint32_t digest, block;

	if (s == NULL || out == NULL || !sim_sha_sizes(algorithm, &digest, &block))
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(s, ctx.magic, "sha", DOCA_ERROR_INVALID_VALUE);
	if (s->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not running", func);
	pool = &s->pools[kind];
	if (pool->free_tasks == NULL)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "%s: all %u tasks are allocated", func, pool->num_tasks);
	t = (struct sim_sha_task *)pool->free_tasks;
	pool->free_tasks = t->task.next;
	sim_task_init(&t->task, &task_ops[kind], &s->ctx, pool->success_cb, pool->error_cb, user_data);
	t->algorithm = algorithm;
	t->src = src;
	t->dst = dst;
	sim_sha_session_free(t);
	*out = t;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_task_hash_set_conf(struct doca_sha *sha, doca_sha_task_hash_completion_cb_t task_completion_cb,
					 doca_sha_task_hash_completion_cb_t task_error_cb, uint8_t log_num_tasks)
{
	return set_conf(sha, SIM_SHA_HASH, sim_task_cb_cast(task_completion_cb), sim_task_cb_cast(task_error_cb),
			log_num_tasks, __func__);
}

doca_error_t doca_sha_task_partial_hash_set_conf(struct doca_sha *sha,
						 doca_sha_task_partial_hash_completion_cb_t task_completion_cb,
						 doca_sha_task_partial_hash_completion_cb_t task_error_cb,
						 uint8_t log_num_tasks)
{
	return set_conf(sha, SIM_SHA_PARTIAL, sim_task_cb_cast(task_completion_cb), sim_task_cb_cast(task_error_cb),
			log_num_tasks, __func__);
}

doca_error_t doca_sha_task_hash_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm,
					   struct doca_buf const *src_buf, struct doca_buf *dst_buf,
					   union doca_data user_data, struct doca_sha_task_hash **task)
{
	return alloc_init(sha, SIM_SHA_HASH, algorithm, src_buf, dst_buf, user_data, (struct sim_sha_task **)task,
			  __func__);
}

doca_error_t doca_sha_task_partial_hash_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm,
						   struct doca_buf const *src_buf, struct doca_buf *dst_buf,
						   union doca_data user_data, struct doca_sha_task_partial_hash **task)
{
	return alloc_init(sha, SIM_SHA_PARTIAL, algorithm, src_buf, dst_buf, user_data, (struct sim_sha_task **)task,
			  __func__);
}

#define T(task) ((struct sim_sha_task *)(task))
#define CT(task) ((const struct sim_sha_task *)(task))

doca_error_t doca_sha_task_hash_set_src(struct doca_sha_task_hash *task, struct doca_buf const *src_buf)
{
	if (task == NULL || src_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	T(task)->src = src_buf;
	return DOCA_SUCCESS;
}

struct doca_buf const *doca_sha_task_hash_get_src(struct doca_sha_task_hash const *task)
{
	return task == NULL ? NULL : CT(task)->src;
}

doca_error_t doca_sha_task_hash_set_dst(struct doca_sha_task_hash *task, struct doca_buf *dst_buf)
{
	if (task == NULL || dst_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	T(task)->dst = dst_buf;
	return DOCA_SUCCESS;
}

struct doca_buf const *doca_sha_task_hash_get_dst(struct doca_sha_task_hash const *task)
{
	return task == NULL ? NULL : CT(task)->dst;
}

doca_error_t doca_sha_task_hash_set_algorithm(struct doca_sha_task_hash *task, enum doca_sha_algorithm algorithm)
{
	uint32_t digest, block;

	if (task == NULL || !sim_sha_sizes(algorithm, &digest, &block))
		return DOCA_ERROR_INVALID_VALUE;
	T(task)->algorithm = algorithm;
	return DOCA_SUCCESS;
}

enum doca_sha_algorithm doca_sha_task_hash_get_algorithm(struct doca_sha_task_hash const *task)
{
	return task == NULL ? DOCA_SHA_ALGORITHM_SHA1 : CT(task)->algorithm;
}

struct doca_task *doca_sha_task_hash_as_task(struct doca_sha_task_hash *task)
{
	return task == NULL ? NULL : &T(task)->task;
}

doca_error_t doca_sha_task_partial_hash_reset(struct doca_sha_task_partial_hash *task)
{
	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (T(task)->task.submitted)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: the task is in flight", __func__);
	sim_sha_session_free(T(task));
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_task_partial_hash_set_src(struct doca_sha_task_partial_hash *task,
						struct doca_buf const *src_buf)
{
	if (task == NULL || src_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	T(task)->src = src_buf;
	return DOCA_SUCCESS;
}

struct doca_buf const *doca_sha_task_partial_hash_get_src(struct doca_sha_task_partial_hash const *task)
{
	return task == NULL ? NULL : CT(task)->src;
}

doca_error_t doca_sha_task_partial_hash_set_dst(struct doca_sha_task_partial_hash *task, struct doca_buf *dst_buf)
{
	if (task == NULL || dst_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (T(task)->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: the partial hash is in progress", __func__);
	T(task)->dst = dst_buf;
	return DOCA_SUCCESS;
}

struct doca_buf const *doca_sha_task_partial_hash_get_dst(struct doca_sha_task_partial_hash const *task)
{
	return task == NULL ? NULL : CT(task)->dst;
}

doca_error_t doca_sha_task_partial_hash_set_algorithm(struct doca_sha_task_partial_hash *task,
						      enum doca_sha_algorithm algorithm)
{
	uint32_t digest, block;

	if (task == NULL || !sim_sha_sizes(algorithm, &digest, &block))
		return DOCA_ERROR_INVALID_VALUE;
	if (T(task)->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: the partial hash is in progress", __func__);
	T(task)->algorithm = algorithm;
	return DOCA_SUCCESS;
}

enum doca_sha_algorithm doca_sha_task_partial_hash_get_algorithm(struct doca_sha_task_partial_hash const *task)
{
	return task == NULL ? DOCA_SHA_ALGORITHM_SHA1 : CT(task)->algorithm;
}

doca_error_t doca_sha_task_partial_hash_set_is_final_buf(struct doca_sha_task_partial_hash *task)
{
	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (T(task)->task.submitted)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: the task is in flight", __func__);
	T(task)->is_final = true;
	return DOCA_SUCCESS;
}

uint8_t doca_sha_task_partial_hash_get_is_final(struct doca_sha_task_partial_hash const *task)
{
	return task != NULL && CT(task)->is_final;
}

uint8_t doca_sha_task_partial_hash_get_has_result(struct doca_sha_task_partial_hash const *task)
{
	return task != NULL && CT(task)->has_result;
}

struct doca_task *doca_sha_task_partial_hash_as_task(struct doca_sha_task_partial_hash *task)
{
	return task == NULL ? NULL : &T(task)->task;
}
