/*
 * DOCA Erasure Coding (libdoca_erasure_coding, prefix doca_ec_): prototypes, enum values and types as DOCA 3.x's
 * public doca_erasure_coding.h declares them, with our own comments. Every block count, buffer and matrix layout the
 * software device assumes beyond what DOCA's header says is written down in sim/README.md ("Erasure coding").
 *
 * Blocks travel contiguously: a task's source buffer (or buffer list, read in list order) holds its input blocks one
 * after the other, and its destination receives the output blocks one after the other, appended after the data the
 * destination already holds. Block size = source data length / number of input blocks: a multiple of 64, at least 64.
 */
#ifndef DOCA_ERASURE_CODING_H_
#define DOCA_ERASURE_CODING_H_

#include <inttypes.h>
#include <stddef.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An erasure coding context, and a coding matrix made for one */
struct doca_ec;
struct doca_ec_matrix;

/*
 * Every EC task kind has the same functions, with its own names for the matrix (matrix), the source (src) and the
 * destination (dst; recover's getter is dst_get): one macro declares them for a kind, expanding to DOCA's own prototypes
 */
#define DOCA_SIM_EC_TASK_DECL(kind, matrix, src, dst, dst_get) \
	struct doca_ec_task_##kind; \
	typedef void (*doca_ec_task_##kind##_completion_cb_t)(struct doca_ec_task_##kind * task, \
							      union doca_data task_user_data, \
							      union doca_data ctx_user_data); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_ec_cap_task_##kind##_is_supported(const struct doca_devinfo *devinfo); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_ec_task_##kind##_set_conf(struct doca_ec *ec, \
						    doca_ec_task_##kind##_completion_cb_t successful_task_completion_cb, \
						    doca_ec_task_##kind##_completion_cb_t error_task_completion_cb, \
						    uint32_t num_tasks); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_ec_task_##kind##_allocate_init(struct doca_ec *ec, \
							 const struct doca_ec_matrix *matrix, \
							 const struct doca_buf *src, \
							 struct doca_buf *dst, \
							 union doca_data user_data, \
							 struct doca_ec_task_##kind **task); \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_ec_task_##kind##_as_task(struct doca_ec_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_ec_task_##kind##_set_##matrix(struct doca_ec_task_##kind *task, const struct doca_ec_matrix *matrix); \
	DOCA_EXPERIMENTAL \
	const struct doca_ec_matrix *doca_ec_task_##kind##_get_##matrix(const struct doca_ec_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_ec_task_##kind##_set_##src(struct doca_ec_task_##kind *task, const struct doca_buf *src); \
	DOCA_EXPERIMENTAL \
	const struct doca_buf *doca_ec_task_##kind##_get_##src(const struct doca_ec_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_ec_task_##kind##_set_##dst(struct doca_ec_task_##kind *task, struct doca_buf *dst); \
	DOCA_EXPERIMENTAL \
	struct doca_buf *doca_ec_task_##kind##_get_##dst_get(const struct doca_ec_task_##kind *task);

/* ---- Galois multiplication: destination blocks = source blocks x matrix, nothing else ---- */
DOCA_SIM_EC_TASK_DECL(galois_mul, coding_matrix, src_buf, dst_buf, dst_buf)

/* ---- Create: the redundancy blocks of N data blocks ---- */
DOCA_SIM_EC_TASK_DECL(create, coding_matrix, original_data_blocks, rdnc_blocks, rdnc_blocks)

/* ---- Update: new redundancy blocks after some data blocks changed. Source: for each updated block its old and
 * its new content, then the old redundancy blocks; destination: the updated redundancy blocks ---- */
DOCA_SIM_EC_TASK_DECL(update, update_matrix, original_updated_and_rdnc_blocks, updated_rdnc_blocks,
		      updated_rdnc_blocks)

/* ---- Recover: the missing blocks from N available ones (available data blocks in index order, then redundancy
 * blocks); the destination receives the missing blocks in the order of the recover matrix's missing indices ---- */
DOCA_SIM_EC_TASK_DECL(recover, recover_matrix, available_blocks, recovered_data_blocks, recovered_data)

/* ---- The context: create, destroy, as_ctx ---- */
DOCA_SIM_CTX_DECL(DOCA_EXPERIMENTAL, ec)
/* Largest block (bytes) a task may use */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_get_max_block_size(const struct doca_devinfo *devinfo, uint64_t *max_block_size);
/* Largest number of elements of a buffer list a task may use (1: single buffers only) */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);

/* ---- Coding matrices, over GF(2^8) ---- */
enum doca_ec_matrix_type {
	/* entry (data block i, redundancy block j) = 1 / (i + (j + number of data blocks)), + and / in the field:
	 * every square sub-matrix is invertible (DOCA recommends it) */
	DOCA_EC_MATRIX_TYPE_CAUCHY = 1,
	/* entry (data block i, redundancy block j) = (i + 1) to the power j: some block losses may not be recoverable */
	DOCA_EC_MATRIX_TYPE_VANDERMONDE = 2,
};

DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create(struct doca_ec *ec,
				   enum doca_ec_matrix_type type,
				   size_t data_block_count,
				   size_t rdnc_block_count,
				   struct doca_ec_matrix **matrix);
/* data: data_block_count x rdnc_block_count bytes, row by row (one row per data block) */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_from_raw(struct doca_ec *ec,
					    uint8_t *data,
					    size_t data_block_count,
					    size_t rdnc_block_count,
					    struct doca_ec_matrix **matrix);
/* update_indices: the updated data blocks, ascending */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_update(struct doca_ec *ec,
					  const struct doca_ec_matrix *coding_matrix,
					  uint32_t update_indices[],
					  size_t n_updates,
					  struct doca_ec_matrix **matrix);
/* missing_indices: the missing blocks, ascending (data blocks 0..N-1, redundancy blocks N..N+M-1) */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_recover(struct doca_ec *ec,
					   const struct doca_ec_matrix *coding_matrix,
					   uint32_t missing_indices[],
					   size_t n_missing,
					   struct doca_ec_matrix **matrix);
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_destroy(struct doca_ec_matrix *matrix);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_ERASURE_CODING_H_ */
