/*
 * Coding matrices. The entries follow the formulas of DOCA's doca_erasure_coding.h: Cauchy a(i,j) = 1 / (i + (j + N))
 * (the matrix Intel ISA-L's gf_gen_cauchy1_matrix builds), Vandermonde a(i,j) = (i + 1)^j, i a data block, j a
 * redundancy block, arithmetic in GF(2^8) over 0x11d. A raw matrix is N rows of M bytes.
 *
 * Recovery: the available blocks are the first N block indices (0..N+M-1) that are not missing, in ascending order,
 * as NVIDIA's erasure_coding_recover sample collects them; every missing block (a redundancy block too) is an output. Writing G for the N x (N+M) generator (identity for the
 * data blocks, the coding matrix for the redundancy blocks) and S for the available columns, data = available x
 * inverse(G_S), so each missing block m = available x inverse(G_S) x G_m: that product is the recover matrix.
 */
#include <stdlib.h>
#include <string.h>

#include "ec_internal.h"

struct doca_ec_matrix *sim_ec_matrix_new(enum sim_ec_matrix_kind kind, size_t in, size_t out)
{
	struct doca_ec_matrix *m = calloc(1, sizeof(*m) + in * out);

	if (m == NULL)
		return NULL;
	m->magic = SIM_MAGIC_LIVE;
	sim_live_inc(SIM_KIND_ACCEL_HANDLE);
	m->kind = kind;
	m->in = in;
	m->out = out;
	return m;
}

static doca_error_t check_geometry(const struct doca_ec *ec, size_t n, size_t m, struct doca_ec_matrix **matrix)
{
	if (ec == NULL || matrix == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec matrix: NULL argument");
	if (n == 0 || m == 0 || n + m > SIM_EC_MAX_BLOCKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec matrix: %zu data and %zu redundancy blocks (1 or more each, "
				"%u in all at most)", n, m, SIM_EC_MAX_BLOCKS);
	return DOCA_SUCCESS;
}

doca_error_t doca_ec_matrix_create(struct doca_ec *ec, enum doca_ec_matrix_type type, size_t data_block_count,
				   size_t rdnc_block_count, struct doca_ec_matrix **matrix)
{
	size_t n = data_block_count, m = rdnc_block_count;
	struct doca_ec_matrix *mx;
	doca_error_t err = check_geometry(ec, n, m, matrix);

	if (err != DOCA_SUCCESS)
		return err;
	if (type != DOCA_EC_MATRIX_TYPE_CAUCHY && type != DOCA_EC_MATRIX_TYPE_VANDERMONDE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec matrix: unknown type %d", (int)type);
	mx = sim_ec_matrix_new(SIM_EC_MATRIX_CODING, n, m);
	if (mx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	mx->data_blocks = n;
	mx->rdnc_blocks = m;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m; j++)
			mx->coef[i * m + j] = type == DOCA_EC_MATRIX_TYPE_CAUCHY
						      ? sim_gf_inv((uint8_t)(i ^ (j + n)))
						      : sim_gf_pow((uint8_t)(i + 1), (unsigned)j);
	*matrix = mx;
	return DOCA_SUCCESS;
}

doca_error_t doca_ec_matrix_create_from_raw(struct doca_ec *ec, uint8_t *data, size_t data_block_count,
					    size_t rdnc_block_count, struct doca_ec_matrix **matrix)
{
	struct doca_ec_matrix *mx;
	doca_error_t err = check_geometry(ec, data_block_count, rdnc_block_count, matrix);

	if (err != DOCA_SUCCESS)
		return err;
	if (data == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec matrix: NULL data");
	mx = sim_ec_matrix_new(SIM_EC_MATRIX_CODING, data_block_count, rdnc_block_count);
	if (mx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	mx->data_blocks = data_block_count;
	mx->rdnc_blocks = rdnc_block_count;
	memcpy(mx->coef, data, data_block_count * rdnc_block_count);
	*matrix = mx;
	return DOCA_SUCCESS;
}

static doca_error_t check_indices(const struct doca_ec_matrix *coding, const uint32_t *idx, size_t count, size_t limit,
				  const char *what)
{
	if (coding == NULL || coding->magic != SIM_MAGIC_LIVE || coding->kind != SIM_EC_MATRIX_CODING)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec %s matrix: not a coding matrix", what);
	if (idx == NULL || count == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec %s matrix: no indices", what);
	for (size_t k = 0; k < count; k++) {
		if (idx[k] >= limit)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec %s matrix: index %u out of range (< %zu)", what,
					idx[k], limit);
		if (k > 0 && idx[k] <= idx[k - 1])
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec %s matrix: indices not ascending", what);
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_ec_matrix_create_update(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					  uint32_t update_indices[], size_t n_updates, struct doca_ec_matrix **matrix)
{
	struct doca_ec_matrix *mx;
	size_t m;
	doca_error_t err;

	if (ec == NULL || matrix == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec update matrix: NULL argument");
	err = check_indices(coding_matrix, update_indices, n_updates,
			    coding_matrix != NULL ? coding_matrix->data_blocks : 0, "update");
	if (err != DOCA_SUCCESS)
		return err;
	m = coding_matrix->rdnc_blocks;
	mx = sim_ec_matrix_new(SIM_EC_MATRIX_UPDATE, 2 * n_updates + m, m);
	if (mx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	mx->data_blocks = coding_matrix->data_blocks;
	mx->rdnc_blocks = m;
	/* new parity = old parity + c * (old data + new data): both halves of a pair carry the block's coefficients */
	for (size_t k = 0; k < n_updates; k++)
		for (size_t j = 0; j < m; j++) {
			uint8_t c = coding_matrix->coef[update_indices[k] * m + j];

			mx->coef[(2 * k) * m + j] = c;
			mx->coef[(2 * k + 1) * m + j] = c;
		}
	for (size_t j = 0; j < m; j++)
		mx->coef[(2 * n_updates + j) * m + j] = 1;
	*matrix = mx;
	return DOCA_SUCCESS;
}

/* Column `index` of the generator: a data block's unit vector, or a redundancy block's coding coefficients */
static uint8_t generator(const struct doca_ec_matrix *coding, size_t data_row, size_t index)
{
	size_t n = coding->data_blocks, m = coding->rdnc_blocks;

	if (index < n)
		return data_row == index ? 1 : 0;
	return coding->coef[data_row * m + (index - n)];
}

doca_error_t doca_ec_matrix_create_recover(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					   uint32_t missing_indices[], size_t n_missing, struct doca_ec_matrix **matrix)
{
	uint8_t g[SIM_EC_MAX_BLOCKS * SIM_EC_MAX_BLOCKS], inv[SIM_EC_MAX_BLOCKS * SIM_EC_MAX_BLOCKS];
	size_t avail[SIM_EC_MAX_BLOCKS];
	struct doca_ec_matrix *mx;
	size_t n, total, found = 0, k = 0;
	doca_error_t err;

	if (ec == NULL || matrix == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec recover matrix: NULL argument");
	err = check_indices(coding_matrix, missing_indices, n_missing,
			    coding_matrix != NULL ? coding_matrix->data_blocks + coding_matrix->rdnc_blocks : 0,
			    "recover");
	if (err != DOCA_SUCCESS)
		return err;
	n = coding_matrix->data_blocks;
	total = n + coding_matrix->rdnc_blocks;
	for (size_t index = 0; index < total && found < n; index++) {
		if (k < n_missing && missing_indices[k] == index) {
			k++;
			continue;
		}
		avail[found++] = index;
	}
	if (found < n)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec recover matrix: %zu of %zu blocks missing, %zu needed",
				n_missing, total, n);
	/* g[d * n + c] = generator entry of data row d for available block c */
	for (size_t d = 0; d < n; d++)
		for (size_t c = 0; c < n; c++)
			g[d * n + c] = generator(coding_matrix, d, avail[c]);
	if (!sim_gf_invert(g, inv, n))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec recover matrix: these blocks cannot restore the data "
				"(singular sub-matrix)");
	mx = sim_ec_matrix_new(SIM_EC_MATRIX_RECOVER, n, n_missing);
	if (mx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	mx->data_blocks = n;
	mx->rdnc_blocks = coding_matrix->rdnc_blocks;
	/* data_d = sum_c avail_c * inv[c][d]; missing m = sum_d data_d * G[d][m] */
	for (size_t c = 0; c < n; c++)
		for (size_t mi = 0; mi < n_missing; mi++) {
			uint8_t acc = 0;

			for (size_t d = 0; d < n; d++)
				acc ^= sim_gf_mul(inv[c * n + d], generator(coding_matrix, d, missing_indices[mi]));
			mx->coef[c * n_missing + mi] = acc;
		}
	*matrix = mx;
	return DOCA_SUCCESS;
}

doca_error_t doca_ec_matrix_destroy(struct doca_ec_matrix *matrix)
{
	SIM_RETURN_IF_NULL_OR_DEAD(matrix, magic, "ec_matrix");
	sim_live_dec(SIM_KIND_ACCEL_HANDLE);
	sim_release(matrix, &matrix->magic);
	return DOCA_SUCCESS;
}
