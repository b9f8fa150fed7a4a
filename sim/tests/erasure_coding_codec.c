/*
 * Erasure coding on the software device, checked against an independent GF(2^8) written here (bitwise multiply over
 * 0x11d, no tables) and DOCA's documented matrix formulas: create tasks give the redundancy the formulas give; every
 * choice of missing blocks up to M is recovered byte for byte for small N and M with both matrix types (Vandermonde
 * may refuse a singular choice: INVALID_VALUE, never wrong bytes); update equals a fresh create; galois_mul equals
 * create; bad block counts and mis-sized buffers fail with DOCA errors; a stop flushes queued tasks.
 * `erasure_coding_codec fuzz N SEED` runs N random geometries, buffer lists and losses instead.
 */
#include <doca_erasure_coding.h>

#include "accel_test_util.h"

static uint8_t ref_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	while (b) {
		if (b & 1)
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
		b >>= 1;
	}
	return r;
}

static uint8_t ref_inv(uint8_t a)
{
	for (unsigned x = 1; x < 256; x++)
		if (ref_mul(a, (uint8_t)x) == 1)
			return (uint8_t)x;
	return 0;
}

static uint8_t ref_coef(enum doca_ec_matrix_type type, size_t n, size_t i, size_t j)
{
	uint8_t r = 1;

	if (type == DOCA_EC_MATRIX_TYPE_CAUCHY)
		return ref_inv((uint8_t)(i ^ (j + n)));
	for (size_t k = 0; k < j; k++)
		r = ref_mul(r, (uint8_t)(i + 1));
	return r;
}

struct env {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_ec *ec;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	size_t mem_len;
	struct doca_mmap *mmap;
	int done;
	doca_error_t status;
};

T_RECORDING_CB(create_cb, doca_ec_task_create, doca_ec_task_create_as_task, struct env)
T_RECORDING_CB(recover_cb, doca_ec_task_recover, doca_ec_task_recover_as_task, struct env)
T_RECORDING_CB(update_cb, doca_ec_task_update, doca_ec_task_update_as_task, struct env)
T_RECORDING_CB(mul_cb, doca_ec_task_galois_mul, doca_ec_task_galois_mul_as_task, struct env)

static void env_open(struct env *e, size_t mem_len)
{
	memset(e, 0, sizeof(*e));
	e->dev = t_open_first_dev();
	T_OK(doca_ec_cap_task_create_is_supported(doca_dev_as_devinfo(e->dev)));
	T_OK(doca_pe_create(&e->pe));
	T_OK(doca_ec_create(e->dev, &e->ec));
	T_OK(doca_pe_connect_ctx(e->pe, doca_ec_as_ctx(e->ec)));
	T_OK(doca_ec_task_create_set_conf(e->ec, create_cb, create_cb, 16));
	T_OK(doca_ec_task_recover_set_conf(e->ec, recover_cb, recover_cb, 16));
	T_OK(doca_ec_task_update_set_conf(e->ec, update_cb, update_cb, 4));
	T_OK(doca_ec_task_galois_mul_set_conf(e->ec, mul_cb, mul_cb, 4));
	T_OK(doca_ctx_start(doca_ec_as_ctx(e->ec)));
	e->mem_len = mem_len;
	e->mem = t_local_area(e->dev, mem_len, 64, 256, &e->mmap, &e->inv);
}

static void env_close(struct env *e)
{
	T_OK(doca_ctx_stop(doca_ec_as_ctx(e->ec)));
	T_OK(doca_ec_destroy(e->ec));
	t_local_close(e->pe, e->inv, e->mmap, e->dev, e->mem);
}

/* Progress until one more task completed (fails after 10 s) */
static void wait_one(struct env *e, int before)
{
	double deadline = t_now() + 10.0;

	while (e->done == before) {
		doca_pe_progress(e->pe);
		T_TRUE(t_now() < deadline);
	}
}

static doca_error_t run_task(struct env *e, struct doca_task *task)
{
	int before = e->done;

	T_OK(doca_task_submit(task));
	wait_one(e, before);
	return e->status;
}

/* Redundancy by the reference formulas */
static void ref_encode(enum doca_ec_matrix_type type, size_t n, size_t m, size_t block, const uint8_t *data,
		       uint8_t *rdnc)
{
	memset(rdnc, 0, m * block);
	for (size_t j = 0; j < m; j++)
		for (size_t i = 0; i < n; i++) {
			uint8_t c = ref_coef(type, n, i, j);

			for (size_t x = 0; x < block; x++)
				rdnc[j * block + x] ^= ref_mul(c, data[i * block + x]);
		}
}

/* Recover the blocks of `missing` (ascending) from the first n others; true when DOCA accepted the choice */
static bool recover_and_check(struct env *e, struct doca_ec_matrix *coding, size_t n, size_t m, size_t block,
			      const uint8_t *all, const uint32_t *missing, size_t n_missing, unsigned src_pieces,
			      unsigned dst_pieces)
{
	uint8_t *src = e->mem, *dst = e->mem + n * block;
	struct doca_ec_matrix *rec;
	struct doca_ec_task_recover *task;
	struct doca_buf *s, *d;
	size_t used = 0, k = 0;
	union doca_data ud = {.ptr = e};
	doca_error_t err = doca_ec_matrix_create_recover(e->ec, coding, (uint32_t *)missing, n_missing, &rec);

	if (err == DOCA_ERROR_INVALID_VALUE)
		return false;
	T_OK(err);
	for (size_t idx = 0; idx < n + m && used < n; idx++) {
		if (k < n_missing && missing[k] == idx) {
			k++;
			continue;
		}
		memcpy(src + used++ * block, all + idx * block, block);
	}
	memset(dst, 0xa5, n_missing * block);
	s = t_buf_list(e->inv, e->mmap, src, n * block, src_pieces, true);
	d = t_buf_list(e->inv, e->mmap, dst, n_missing * block, dst_pieces, false);
	T_OK(doca_ec_task_recover_allocate_init(e->ec, rec, s, d, ud, &task));
	T_OK(run_task(e, doca_ec_task_recover_as_task(task)));
	for (size_t i = 0; i < n_missing; i++)
		T_TRUE(memcmp(dst + i * block, all + missing[i] * block, block) == 0);
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	T_OK(doca_ec_matrix_destroy(rec));
	return true;
}

/* all = N data blocks then M redundancy blocks, made by a create task and checked against the reference */
static struct doca_ec_matrix *encode(struct env *e, enum doca_ec_matrix_type type, size_t n, size_t m, size_t block,
				     uint8_t *all, uint32_t seed, unsigned pieces)
{
	struct doca_ec_matrix *coding;
	struct doca_ec_task_create *task;
	struct doca_buf *s, *d;
	uint8_t *ref = malloc(m * block);
	union doca_data ud = {.ptr = e};

	T_TRUE(ref != NULL);
	t_fill(all, n * block, seed);
	memcpy(e->mem, all, n * block);
	T_OK(doca_ec_matrix_create(e->ec, type, n, m, &coding));
	s = t_buf_list(e->inv, e->mmap, e->mem, n * block, pieces, true);
	d = t_buf_list(e->inv, e->mmap, e->mem + n * block, m * block, pieces, false);
	T_OK(doca_ec_task_create_allocate_init(e->ec, coding, s, d, ud, &task));
	T_OK(run_task(e, doca_ec_task_create_as_task(task)));
	ref_encode(type, n, m, block, all, ref);
	T_TRUE(memcmp(e->mem + n * block, ref, m * block) == 0);
	memcpy(all + n * block, ref, m * block);
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	free(ref);
	return coding;
}

/* Every subset of 1..m of the n + m blocks as the missing set */
static void recover_every_loss(struct env *e, enum doca_ec_matrix_type type, size_t n, size_t m, size_t block,
			       unsigned *ok, unsigned *refused)
{
	uint8_t *all = malloc((n + m) * block);
	struct doca_ec_matrix *coding;

	T_TRUE(all != NULL);
	coding = encode(e, type, n, m, block, all, (uint32_t)(n * 31 + m), 1);
	for (uint32_t mask = 1; mask < (1u << (n + m)); mask++) {
		uint32_t missing[32];
		size_t count = 0;

		for (uint32_t idx = 0; idx < n + m; idx++)
			if (mask & (1u << idx))
				missing[count++] = idx;
		if (count > m) {
			T_EXPECT_ERR(doca_ec_matrix_create_recover(e->ec, coding, missing, count,
								   &(struct doca_ec_matrix *){NULL}),
				     DOCA_ERROR_INVALID_VALUE);
			continue;
		}
		if (recover_and_check(e, coding, n, m, block, all, missing, count, 1 + mask % 3, 1 + mask % 2))
			(*ok)++;
		else {
			T_TRUE(type == DOCA_EC_MATRIX_TYPE_VANDERMONDE);
			(*refused)++;
		}
	}
	T_OK(doca_ec_matrix_destroy(coding));
	free(all);
}

static void check_update_and_mul(struct env *e)
{
	const size_t n = 4, m = 2, block = 128;
	uint8_t all[6 * 128], changed[6 * 128];
	uint32_t idx[2] = {1, 3};
	struct doca_ec_matrix *coding = encode(e, DOCA_EC_MATRIX_TYPE_CAUCHY, n, m, block, all, 7, 1), *upd, *again;
	struct doca_ec_task_update *task;
	struct doca_ec_task_galois_mul *mul;
	struct doca_buf *s, *d;
	union doca_data ud = {.ptr = e};
	uint8_t *src = e->mem;

	/* change blocks 1 and 3; source = old1, new1, old3, new3, rdnc0, rdnc1 */
	memcpy(changed, all, sizeof(all));
	t_fill(changed + 1 * block, block, 99);
	t_fill(changed + 3 * block, block, 98);
	memcpy(src + 0 * block, all + 1 * block, block);
	memcpy(src + 1 * block, changed + 1 * block, block);
	memcpy(src + 2 * block, all + 3 * block, block);
	memcpy(src + 3 * block, changed + 3 * block, block);
	memcpy(src + 4 * block, all + n * block, m * block);
	T_OK(doca_ec_matrix_create_update(e->ec, coding, idx, 2, &upd));
	s = t_buf_list(e->inv, e->mmap, src, 6 * block, 2, true);
	d = t_buf_list(e->inv, e->mmap, e->mem + 6 * block, m * block, 1, false);
	T_OK(doca_ec_task_update_allocate_init(e->ec, upd, s, d, ud, &task));
	T_OK(run_task(e, doca_ec_task_update_as_task(task)));
	ref_encode(DOCA_EC_MATRIX_TYPE_CAUCHY, n, m, block, changed, changed + n * block);
	T_TRUE(memcmp(e->mem + 6 * block, changed + n * block, m * block) == 0);
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	t_say("ok update of blocks 1 and 3 equals a fresh encode");

	/* galois_mul with the coding matrix is the create task's arithmetic; a raw copy of the matrix encodes alike */
	{
		uint8_t raw[4 * 2];

		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < m; j++)
				raw[i * m + j] = ref_coef(DOCA_EC_MATRIX_TYPE_CAUCHY, n, i, j);
		T_OK(doca_ec_matrix_create_from_raw(e->ec, raw, n, m, &again));
	}
	memcpy(src, all, n * block);
	s = t_buf_list(e->inv, e->mmap, src, n * block, 1, true);
	d = t_buf_list(e->inv, e->mmap, e->mem + n * block, m * block, 1, false);
	T_OK(doca_ec_task_galois_mul_allocate_init(e->ec, again, s, d, ud, &mul));
	T_OK(run_task(e, doca_ec_task_galois_mul_as_task(mul)));
	T_TRUE(memcmp(e->mem + n * block, all + n * block, m * block) == 0);
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	t_say("ok galois_mul with a raw copy of the Cauchy matrix equals create");
	T_OK(doca_ec_matrix_destroy(again));
	T_OK(doca_ec_matrix_destroy(upd));
	T_OK(doca_ec_matrix_destroy(coding));
}

static void check_errors(struct env *e)
{
	struct doca_ec_matrix *coding, *bad = NULL;
	struct doca_ec_task_create *task;
	struct doca_buf *s, *d;
	union doca_data ud = {.ptr = e};
	uint32_t unordered[2] = {3, 1}, far[1] = {6};

	T_EXPECT_ERR(doca_ec_matrix_create(e->ec, DOCA_EC_MATRIX_TYPE_CAUCHY, 0, 2, &bad), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_ec_matrix_create(e->ec, DOCA_EC_MATRIX_TYPE_CAUCHY, 200, 57, &bad), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_ec_matrix_create(e->ec, (enum doca_ec_matrix_type)7, 4, 2, &bad), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_ec_matrix_create(e->ec, DOCA_EC_MATRIX_TYPE_CAUCHY, 4, 2, &coding));
	T_EXPECT_ERR(doca_ec_matrix_create_recover(e->ec, coding, unordered, 2, &bad), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_ec_matrix_create_recover(e->ec, coding, far, 1, &bad), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_ec_matrix_create_update(e->ec, coding, far, 1, &bad), DOCA_ERROR_INVALID_VALUE);
	t_say("ok matrices: zero, too many, unknown type, unordered or out-of-range indices: DOCA_ERROR_INVALID_VALUE");

	/* 4 blocks of 100 bytes (not a multiple of 64), then 3.5 blocks, then a destination one block short */
	const size_t cases[][2] = {{400, 200}, {448, 256}, {512, 192}};
	for (size_t c = 0; c < 3; c++) {
		s = t_buf_list(e->inv, e->mmap, e->mem, cases[c][0], 1, true);
		d = t_buf_list(e->inv, e->mmap, e->mem + 4096, cases[c][1], 1, false);
		memset(e->mem + 4096, 0x5a, cases[c][1]);
		T_OK(doca_ec_task_create_allocate_init(e->ec, coding, s, d, ud, &task));
		T_EXPECT_ERR(run_task(e, doca_ec_task_create_as_task(task)), DOCA_ERROR_INVALID_VALUE);
		for (size_t x = 0; x < cases[c][1]; x++)
			T_TRUE(e->mem[4096 + x] == 0x5a);
		T_OK(doca_buf_dec_refcount(s, NULL));
		T_OK(doca_buf_dec_refcount(d, NULL));
	}
	t_say("ok bad block sizes and a short destination: DOCA_ERROR_INVALID_VALUE, nothing written");

	/* A stop flushes what has not run */
	s = t_buf_list(e->inv, e->mmap, e->mem, 256, 1, true);
	d = t_buf_list(e->inv, e->mmap, e->mem + 4096, 128, 1, false);
	T_OK(doca_ec_task_create_allocate_init(e->ec, coding, s, d, ud, &task));
	T_OK(doca_task_submit(doca_ec_task_create_as_task(task)));
	{
		int before = e->done;
		doca_error_t err = doca_ctx_stop(doca_ec_as_ctx(e->ec));

		T_TRUE(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS);
		wait_one(e, before);
		T_TRUE(e->status != DOCA_SUCCESS);
		t_say("ok stop with a task queued: flushed with %s", doca_error_get_name(e->status));
	}
	{
		enum doca_ctx_states st;

		for (int i = 0; i < 100; i++)
			doca_pe_progress(e->pe);
		T_OK(doca_ctx_get_state(doca_ec_as_ctx(e->ec), &st));
		T_TRUE(st == DOCA_CTX_STATE_IDLE);
		T_EXPECT_ERR(doca_ec_task_create_allocate_init(e->ec, coding, s, d, ud, &task), DOCA_ERROR_BAD_STATE);
		T_OK(doca_ctx_start(doca_ec_as_ctx(e->ec)));
	}
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	T_OK(doca_ec_matrix_destroy(coding));
}

static void fuzz(struct env *e, unsigned rounds, unsigned seed)
{
	unsigned ok = 0, refused = 0, rejected = 0;

	rng_state = 0x9e3779b97f4a7c15ull ^ seed;
	for (unsigned r = 0; r < rounds; r++) {
		size_t n = 1 + rnd(10), m = 1 + rnd(5), block = 64 * (1 + rnd(8));
		enum doca_ec_matrix_type type = rnd(2) ? DOCA_EC_MATRIX_TYPE_CAUCHY : DOCA_EC_MATRIX_TYPE_VANDERMONDE;
		uint8_t *all = malloc((n + m) * block);
		uint32_t missing[16];
		size_t count = 0;
		struct doca_ec_matrix *coding;

		T_TRUE(all != NULL);
		coding = encode(e, type, n, m, block, all, r + seed, 1 + rnd(3));
		for (uint32_t idx = 0; idx < n + m; idx++)
			if (count < m && rnd(3) == 0)
				missing[count++] = idx;
		if (count == 0)
			missing[count++] = rnd((uint32_t)(n + m));
		if (recover_and_check(e, coding, n, m, block, all, missing, count, 1 + rnd(4), 1 + rnd(2)))
			ok++;
		else
			refused++;
		/* a corrupt task: the source one byte short of whole blocks, or a destination too small */
		{
			struct doca_ec_task_create *task;
			union doca_data ud = {.ptr = e};
			/* one block of 64 bytes leaves no smaller destination to try: cut the source then */
			bool short_src = rnd(2) || m * block == 64;
			struct doca_buf *s = t_buf_list(e->inv, e->mmap, e->mem, n * block - (short_src ? 32 : 0), 1, true);
			struct doca_buf *d = t_buf_list(e->inv, e->mmap, e->mem + n * block, m * block - (short_src ? 0 : 64), 1, false);

			T_OK(doca_ec_task_create_allocate_init(e->ec, coding, s, d, ud, &task));
			T_EXPECT_ERR(run_task(e, doca_ec_task_create_as_task(task)), DOCA_ERROR_INVALID_VALUE);
			rejected++;
			T_OK(doca_buf_dec_refcount(s, NULL));
			T_OK(doca_buf_dec_refcount(d, NULL));
		}
		T_OK(doca_ec_matrix_destroy(coding));
		free(all);
	}
	t_say("ok fuzz: %u rounds, %u recovered byte for byte, %u singular choices refused, %u corrupt tasks rejected",
	      rounds, ok, refused, rejected);
}

int main(int argc, char **argv)
{
	struct env e;

	env_open(&e, 1 << 20);
	if (argc >= 2 && strcmp(argv[1], "fuzz") == 0) {
		fuzz(&e, argc >= 3 ? (unsigned)atoi(argv[2]) : 200, argc >= 4 ? (unsigned)atoi(argv[3]) : 1);
		env_close(&e);
		T_TRUE(doca_sim_live_objects() == 0);
		t_say("PASS erasure_coding_codec fuzz");
		return 0;
	}
	T_TRUE(ref_mul(0x80, 2) == 0x1d && ref_inv(2) == 0x8e);
	t_say("ok reference field: 0x80 * 2 = 0x1d, 1/2 = 0x8e (polynomial 0x11d)");
	for (int t = 0; t < 2; t++) {
		enum doca_ec_matrix_type type = t == 0 ? DOCA_EC_MATRIX_TYPE_CAUCHY : DOCA_EC_MATRIX_TYPE_VANDERMONDE;
		unsigned ok = 0, refused = 0;

		for (size_t n = 1; n <= 5; n++)
			for (size_t m = 1; m <= 3; m++)
				recover_every_loss(&e, type, n, m, 128, &ok, &refused);
		t_say("ok %s: every loss of up to M blocks, N 1-5, M 1-3: %u recovered byte for byte, %u refused",
		      t == 0 ? "cauchy" : "vandermonde", ok, refused);
		if (t == 0)
			T_TRUE(refused == 0);
	}
	check_update_and_mul(&e);
	check_errors(&e);
	env_close(&e);
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	t_say("PASS erasure_coding_codec");
	return 0;
}
