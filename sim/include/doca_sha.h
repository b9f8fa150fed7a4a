/*
 * Software DOCA device: the SHA context (libdoca_sha). Prototypes, enum values and callback types follow DOCA 3.x's
 * doca_sha.h. A hash task appends the digest of its source to its destination's data. A partial hash task is one task
 * submitted again and again over consecutive parts of the input: every part but the final one a multiple of the
 * algorithm's block size, the final one marked with doca_sha_task_partial_hash_set_is_final_buf; the digest is written
 * when the final part completes (get_has_result then answers 1). The device hashes with OpenSSL's libcrypto, loaded at
 * run time: without it every task is reported NOT_SUPPORTED (doca_sim_sha_backend_missing says why).
 */
#ifndef DOCA_SHA_H_
#define DOCA_SHA_H_

#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_sha;

/* create, destroy (DOCA_ERROR_IN_USE unless the context is idle), as_ctx */
DOCA_SIM_CTX_DECL(DOCA_EXPERIMENTAL, sha)

enum doca_sha_algorithm {
	DOCA_SHA_ALGORITHM_SHA1,
	DOCA_SHA_ALGORITHM_SHA256,
	DOCA_SHA_ALGORITHM_SHA512,
};

DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_task_hash_get_supported(struct doca_devinfo const *devinfo,
						  enum doca_sha_algorithm algorithm);

DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_task_partial_hash_get_supported(struct doca_devinfo const *devinfo,
							  enum doca_sha_algorithm algorithm);

/* Elements a source buffer list may have (1: no lists) */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_max_list_buf_num_elem(struct doca_devinfo const *devinfo, uint32_t *max_list_num_elem);

/* Most source bytes one task may take */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_max_src_buf_size(struct doca_devinfo const *devinfo, uint64_t *max_buf_size);

/* Free room a destination needs for the algorithm's digest */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_min_dst_buf_size(struct doca_devinfo const *devinfo,
					       enum doca_sha_algorithm algorithm,
					       uint32_t *min_buf_size);

/* Every non-final part of a partial hash must be a multiple of this many bytes */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_partial_hash_block_size(struct doca_devinfo const *devinfo,
						      enum doca_sha_algorithm algorithm,
						      uint32_t *partial_block_size);

/*
 * The functions the hash and partial hash tasks share, declared by one macro for each (DOCA's own prototypes).
 * set_conf's log_num_tasks: the pool holds 2^log_num_tasks tasks; BAD_STATE unless idle. For a partial hash task,
 * set_dst and set_algorithm answer BAD_STATE once its session has started (before the first submission or after a
 * reset only).
 */
#define DOCA_SIM_SHA_TASK_DECL(kind) \
	struct doca_sha_task_##kind; \
	typedef void (*doca_sha_task_##kind##_completion_cb_t)(struct doca_sha_task_##kind *task, \
							   union doca_data task_user_data, \
							   union doca_data ctx_user_data); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sha_task_##kind##_set_conf(struct doca_sha *sha, \
						 doca_sha_task_##kind##_completion_cb_t task_completion_cb, \
						 doca_sha_task_##kind##_completion_cb_t task_error_cb, \
						 uint8_t log_num_tasks); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sha_task_##kind##_alloc_init(struct doca_sha *sha, \
						   enum doca_sha_algorithm algorithm, \
						   struct doca_buf const *src_buf, \
						   struct doca_buf *dst_buf, \
						   union doca_data user_data, \
						   struct doca_sha_task_##kind **task); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sha_task_##kind##_set_src(struct doca_sha_task_##kind *task, struct doca_buf const *src_buf); \
	DOCA_EXPERIMENTAL \
	struct doca_buf const *doca_sha_task_##kind##_get_src(struct doca_sha_task_##kind const *task); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sha_task_##kind##_set_dst(struct doca_sha_task_##kind *task, struct doca_buf *dst_buf); \
	DOCA_EXPERIMENTAL \
	struct doca_buf const *doca_sha_task_##kind##_get_dst(struct doca_sha_task_##kind const *task); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sha_task_##kind##_set_algorithm(struct doca_sha_task_##kind *task, enum doca_sha_algorithm algorithm); \
	DOCA_EXPERIMENTAL \
	enum doca_sha_algorithm doca_sha_task_##kind##_get_algorithm(struct doca_sha_task_##kind const *task); \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_sha_task_##kind##_as_task(struct doca_sha_task_##kind *task);

/* ---- hash task ---- */
DOCA_SIM_SHA_TASK_DECL(hash)

/* ---- partial hash task ---- */
DOCA_SIM_SHA_TASK_DECL(partial_hash)

/* Forget the session: the next submission starts a new digest */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_reset(struct doca_sha_task_partial_hash *task);

/* The next submission carries the last part (DOCA: not for the first part; use a hash task then) */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_set_is_final_buf(struct doca_sha_task_partial_hash *task);

DOCA_EXPERIMENTAL
uint8_t doca_sha_task_partial_hash_get_is_final(struct doca_sha_task_partial_hash const *task);

/* 1 once the final part completed and the destination holds the digest */
DOCA_EXPERIMENTAL
uint8_t doca_sha_task_partial_hash_get_has_result(struct doca_sha_task_partial_hash const *task);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_SHA_H_ */
