/*
 * libdoca_sha: the SHA context, its hash and partial hash task pools (2^log_num_tasks each) and capability queries.
 * A submit only queues; the digests are computed in the context's progress hook (sha_exec.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sha_internal.h"
#include "accessors.h"

static doca_error_t task_validate(const struct doca_task *task)
{
	return sim_sha_validate((const struct sim_sha_task *)task);
}

static doca_error_t task_execute(struct doca_task *task)
{
	return sim_sha_execute((struct sim_sha_task *)task);
}

/* A part of a partial session submitted: the session has started */
static void task_submitted(struct doca_task *task)
{
	struct sim_sha_task *t = (struct sim_sha_task *)task;

	if (t->kind == SIM_SHA_PARTIAL)
		t->started = true;
}

/* A part of a partial session never ran (flushed or invalid): the session must be reset */
static void task_not_run(struct doca_task *task)
{
	struct sim_sha_task *t = (struct sim_sha_task *)task;

	if (t->kind == SIM_SHA_PARTIAL)
		t->broken = true;
}

static void task_release(struct doca_task *task)
{
	sim_sha_session_free((struct sim_sha_task *)task);
}

#define SHA_KIND(name) \
	{ \
		SIM_POOL_KIND_FIELDS(name, struct sim_sha_task), \
		.validate = task_validate, .execute = task_execute, .submitted = task_submitted, \
		.not_run = task_not_run, .release = task_release, \
	}

static const struct sim_task_kind task_kinds[SIM_SHA_KIND_COUNT_] = {SHA_KIND("sha_hash"), SHA_KIND("sha_partial_hash")};
static const struct sim_task_kind *const kinds[SIM_SHA_KIND_COUNT_] = {&task_kinds[0], &task_kinds[1]};

static doca_error_t sha_start(struct doca_ctx *ctx)
{
	struct doca_sha *s = (struct doca_sha *)ctx;

	if (!sim_pools_configured(s->pools, SIM_SHA_KIND_COUNT_))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: no task kind was configured (set_conf)");
	if (!sim_sha_available())
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "sha: %s", doca_sim_sha_backend_missing());
	return DOCA_SUCCESS;
}

static const struct sim_ctx_ops sha_ctx_ops = SIM_POOLED_CTX_OPS("sha", sha_start);

SIM_POOLED_CTX_API(sha, sha_ctx_ops, sha->pools, kinds, SIM_SHA_KIND_COUNT_, DOCA_ERROR_IN_USE)

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
	return sim_cap_u32(devinfo, sim_sha_available(), SIM_SHA_MAX_LIST_LEN, max_list_num_elem);
}

doca_error_t doca_sha_cap_get_max_src_buf_size(struct doca_devinfo const *devinfo, uint64_t *max_buf_size)
{
	return sim_cap_u64(devinfo, sim_sha_available(), SIM_SHA_MAX_SRC_BUF_SIZE, max_buf_size);
}

/* The digest size (block false) or the block size of an algorithm, as a capability */
static doca_error_t cap_size(const struct doca_devinfo *devinfo, enum doca_sha_algorithm algorithm, bool block,
			     uint32_t *size)
{
	uint32_t sizes[2];
	doca_error_t err;

	if (size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = cap_algorithm(devinfo, algorithm, &sizes[0], &sizes[1]);
	if (err == DOCA_SUCCESS)
		*size = sizes[block];
	return err;
}

doca_error_t doca_sha_cap_get_min_dst_buf_size(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm,
					       uint32_t *min_buf_size)
{
	return cap_size(devinfo, algorithm, false, min_buf_size);
}

doca_error_t doca_sha_cap_get_partial_hash_block_size(struct doca_devinfo const *devinfo,
						      enum doca_sha_algorithm algorithm, uint32_t *partial_block_size)
{
	return cap_size(devinfo, algorithm, true, partial_block_size);
}

static doca_error_t set_conf(struct doca_sha *s, enum sim_sha_kind kind, sim_task_cb_t done, sim_task_cb_t failed,
			     uint8_t log_num_tasks, const char *func)
{
	if (s == NULL || log_num_tasks > SIM_SHA_MAX_LOG_NUM_TASKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or log_num_tasks %u", func,
				log_num_tasks);
	return sim_pool_conf(&s->pools[kind], &s->ctx, kinds[kind], done, failed, 1u << log_num_tasks, func);
}

static doca_error_t alloc_init(struct doca_sha *s, enum sim_sha_kind kind, enum doca_sha_algorithm algorithm,
			       const struct doca_buf *src, struct doca_buf *dst, union doca_data user_data,
			       struct sim_sha_task **out, const char *func)
{
	uint32_t digest, block;
	doca_error_t err;

	if (s == NULL || !sim_sha_sizes(algorithm, &digest, &block))
		return DOCA_ERROR_INVALID_VALUE;
	err = sim_pool_alloc_live(&s->pools[kind], &s->ctx, "sha", kinds[kind], src, dst, user_data,
				  (struct doca_task **)out, func);
	if (err != DOCA_SUCCESS)
		return err;
	(*out)->kind = kind;
	(*out)->algorithm = algorithm;
	return DOCA_SUCCESS;
}

#define T(task) ((struct sim_sha_task *)(task))
#define CT(task) ((const struct sim_sha_task *)(task))

/* What hash and partial hash tasks share, under each kind's names: configuration, allocation, the source setter and
 * the getters (the partial hash's other setters also refuse a hash in progress: written out below) */
#define SHA_TASK_API(name, KIND) \
	SIM_POOLED_SET_CONF(sha, name, KIND, uint8_t, log_num_tasks) \
	doca_error_t doca_sha_task_##name##_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm, \
						       struct doca_buf const *src_buf, struct doca_buf *dst_buf, \
						       union doca_data user_data, struct doca_sha_task_##name **task) \
	{ \
		return alloc_init(sha, KIND, algorithm, src_buf, dst_buf, user_data, (struct sim_sha_task **)task, \
				  __func__); \
	} \
	doca_error_t doca_sha_task_##name##_set_src(struct doca_sha_task_##name *task, struct doca_buf const *src_buf) \
	{ \
		if (task == NULL || src_buf == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		T(task)->src = src_buf; \
		return DOCA_SUCCESS; \
	} \
	SIM_VALUE_GETTER(struct doca_buf const *, doca_sha_task_##name##_get_src, struct doca_sha_task_##name const, \
			 task, NULL, CT(task)->src) \
	SIM_VALUE_GETTER(struct doca_buf const *, doca_sha_task_##name##_get_dst, struct doca_sha_task_##name const, \
			 task, NULL, CT(task)->dst) \
	SIM_VALUE_GETTER(enum doca_sha_algorithm, doca_sha_task_##name##_get_algorithm, \
			 struct doca_sha_task_##name const, task, DOCA_SHA_ALGORITHM_SHA1, CT(task)->algorithm) \
	SIM_VALUE_GETTER(struct doca_task *, doca_sha_task_##name##_as_task, struct doca_sha_task_##name, task, NULL, \
			 &T(task)->task)

SHA_TASK_API(hash, SIM_SHA_HASH)
SHA_TASK_API(partial_hash, SIM_SHA_PARTIAL)

doca_error_t doca_sha_task_hash_set_dst(struct doca_sha_task_hash *task, struct doca_buf *dst_buf)
{
	if (task == NULL || dst_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	T(task)->dst = dst_buf;
	return DOCA_SUCCESS;
}

static bool known_algorithm(enum doca_sha_algorithm algorithm)
{
	uint32_t digest, block;

	return sim_sha_sizes(algorithm, &digest, &block);
}

/* Reset and marking the final part wait for the part in flight (its callback) */
static doca_error_t partial_not_in_flight(const struct doca_sha_task_partial_hash *task, const char *func)
{
	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (CT(task)->task.submitted)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: the task is in flight", func);
	return DOCA_SUCCESS;
}

/* A partial hash's destination and algorithm are fixed from its first part until its reset; valid: the new value is */
static doca_error_t partial_not_started(const struct doca_sha_task_partial_hash *task, bool valid, const char *func)
{
	if (task == NULL || !valid)
		return DOCA_ERROR_INVALID_VALUE;
	if (CT(task)->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: the partial hash is in progress", func);
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_task_hash_set_algorithm(struct doca_sha_task_hash *task, enum doca_sha_algorithm algorithm)
{
	if (task == NULL || !known_algorithm(algorithm))
		return DOCA_ERROR_INVALID_VALUE;
	T(task)->algorithm = algorithm;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_task_partial_hash_reset(struct doca_sha_task_partial_hash *task)
{
	doca_error_t err = partial_not_in_flight(task, __func__);

	if (err == DOCA_SUCCESS)
		sim_sha_session_free(T(task));
	return err;
}

doca_error_t doca_sha_task_partial_hash_set_dst(struct doca_sha_task_partial_hash *task, struct doca_buf *dst_buf)
{
	doca_error_t err = partial_not_started(task, dst_buf != NULL, __func__);

	if (err == DOCA_SUCCESS)
		T(task)->dst = dst_buf;
	return err;
}

doca_error_t doca_sha_task_partial_hash_set_algorithm(struct doca_sha_task_partial_hash *task,
						      enum doca_sha_algorithm algorithm)
{
	doca_error_t err = partial_not_started(task, known_algorithm(algorithm), __func__);

	if (err == DOCA_SUCCESS)
		T(task)->algorithm = algorithm;
	return err;
}

doca_error_t doca_sha_task_partial_hash_set_is_final_buf(struct doca_sha_task_partial_hash *task)
{
	doca_error_t err = partial_not_in_flight(task, __func__);

	if (err == DOCA_SUCCESS)
		T(task)->is_final = true;
	return err;
}

uint8_t doca_sha_task_partial_hash_get_is_final(struct doca_sha_task_partial_hash const *task)
{
	return task != NULL && CT(task)->is_final;
}

uint8_t doca_sha_task_partial_hash_get_has_result(struct doca_sha_task_partial_hash const *task)
{
	return task != NULL && CT(task)->has_result;
}

