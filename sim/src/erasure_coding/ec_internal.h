/*
 * Shared between the files of libdoca_erasure_coding: the field (ec_gf.c), matrices (ec_matrix.c), the context and
 * its four task kinds (ec.c).
 *
 * Every matrix is one linear map over GF(2^8): `in` input blocks to `out` output blocks, coef[i * out + o] the factor
 * of input block i in output block o. A coding matrix (N data x M redundancy) is one, applied by create tasks; a
 * recover matrix maps the N available blocks to the missing ones; an update matrix maps (old, new) pairs of the
 * updated blocks plus the old redundancy blocks to the new redundancy blocks. Every task then computes the same thing.
 */
#ifndef SIM_EC_INTERNAL_H_
#define SIM_EC_INTERNAL_H_

#include <doca_erasure_coding.h>

#include "internal.h"
#include "task_pool.h"

/* Device limits the capability queries answer (DOCA leaves the values to the device) */
#define SIM_EC_MAX_BLOCK_SIZE (1024u * 1024u)
#define SIM_EC_MAX_BUF_LIST_LEN 32u
#define SIM_EC_MAX_NUM_TASKS 65536u
#define SIM_EC_BLOCK_ALIGN 64u
/* Cauchy needs N + M distinct field elements, Vandermonde N nonzero ones */
#define SIM_EC_MAX_BLOCKS 256u

/* ---- GF(2^8) with polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d) ---- */
uint8_t sim_gf_mul(uint8_t a, uint8_t b);
uint8_t sim_gf_inv(uint8_t a); /* a != 0 */
uint8_t sim_gf_pow(uint8_t a, unsigned n);
/* dst[x] ^= c * src[x] for len bytes (c = 1: plain XOR) */
void sim_gf_mul_add_region(uint8_t *dst, const uint8_t *src, uint8_t c, size_t len);
/* Invert the n x n matrix m (row-major) into inv; false when it is singular */
bool sim_gf_invert(const uint8_t *m, uint8_t *inv, size_t n);

enum sim_ec_matrix_kind { SIM_EC_MATRIX_CODING, SIM_EC_MATRIX_RECOVER, SIM_EC_MATRIX_UPDATE };

struct doca_ec_matrix {
	uint32_t magic;
	enum sim_ec_matrix_kind kind;
	size_t in;           /* input blocks */
	size_t out;          /* output blocks */
	size_t data_blocks;  /* N of the coding matrix it derives from */
	size_t rdnc_blocks;  /* M of the coding matrix it derives from */
	uint8_t coef[];      /* in * out */
};

/* Allocate a matrix (coef zeroed); NULL when out of memory */
struct doca_ec_matrix *sim_ec_matrix_new(enum sim_ec_matrix_kind kind, size_t in, size_t out);

enum sim_ec_task_kind { SIM_EC_GALOIS_MUL, SIM_EC_CREATE, SIM_EC_UPDATE, SIM_EC_RECOVER, SIM_EC_KINDS_ };

struct sim_ec_task {
	struct doca_task task; /* first: the generic code sees a struct doca_task */
	enum sim_ec_task_kind kind;
	const struct doca_ec_matrix *matrix;
	const struct doca_buf *src;
	struct doca_buf *dst;
};

/* The public task types are the one layout under four names */
struct doca_ec_task_galois_mul { struct sim_ec_task t; };
struct doca_ec_task_create { struct sim_ec_task t; };
struct doca_ec_task_update { struct sim_ec_task t; };
struct doca_ec_task_recover { struct sim_ec_task t; };

struct doca_ec {
	struct doca_ctx ctx; /* first: doca_ec_as_ctx is a cast */
	struct sim_task_pool pools[SIM_EC_KINDS_]; /* one a kind (task_pool.c) */
};

/* Validate and run one task: the output blocks appended to its destination, or a DOCA error and nothing written */
doca_error_t sim_ec_execute(const struct doca_ec *ec, struct sim_ec_task *task);
/* Validation alone (doca_task_try_submit) */
doca_error_t sim_ec_validate(const struct doca_ec *ec, const struct sim_ec_task *task, size_t *block_size);

#endif /* SIM_EC_INTERNAL_H_ */
