/*
 * The SHA context on the software device: capabilities, SHA-1/256/512 of "abc" against FIPS 180 test vectors, a
 * partial session over many parts equal to the one-shot hash, its state rules (dst and algorithm fixed once started,
 * non-final parts whole blocks, reset), a destination too small, and a stop with tasks in flight.
 * `off` (run with DOCA_SIM_ACCEL_OFF=crypto): every algorithm NOT_SUPPORTED.
 */
#include <doca_sha.h>

#include "accel_test_util.h"

struct run {
	int done;
	doca_error_t status;
};

T_RECORDING_CB(on_hash, doca_sha_task_hash, doca_sha_task_hash_as_task, struct run)

static void on_part(struct doca_sha_task_partial_hash *task, union doca_data tud, union doca_data cud)
{
	struct run *r = tud.ptr;

	(void)cud;
	r->status = doca_task_get_status(doca_sha_task_partial_hash_as_task(task));
	r->done++; /* the test frees or resubmits it */
}

static const char *const abc_digests[3] = {
	"a9993e364706816aba3e25717850c26c9cd0d89d",
	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	"2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
};

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

struct env {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_sha *sha;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *area;
};

#define AREA (4u << 20)
#define SRC_OFF 0
#define DST_OFF (3u << 20)

/* One hash task over len bytes at the start of the area; the digest's length (0 on failure) and status */
static doca_error_t hash(struct env *e, enum doca_sha_algorithm alg, size_t len, size_t room, uint8_t *digest,
			 size_t *dlen)
{
	struct run r = {0};
	union doca_data ud = {.ptr = &r};
	struct doca_buf *src, *dst;
	struct doca_sha_task_hash *t;

	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, e->area + SRC_OFF, len, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, e->area + DST_OFF, room, &dst));
	T_OK(doca_sha_task_hash_alloc_init(e->sha, alg, src, dst, ud, &t));
	T_TRUE(doca_sha_task_hash_get_algorithm(t) == alg);
	T_OK(doca_task_submit(doca_sha_task_hash_as_task(t)));
	t_progress_until(e->pe, &r.done);
	T_OK(doca_buf_get_data_len(dst, dlen));
	memcpy(digest, e->area + DST_OFF, *dlen);
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	return r.status;
}

static void test_vectors(struct env *e)
{
	uint8_t digest[64];
	char text[129];
	size_t dlen;
	uint32_t min;

	for (int a = 0; a < 3; a++) {
		memcpy(e->area + SRC_OFF, "abc", 3);
		T_OK(hash(e, (enum doca_sha_algorithm)a, 3, 64, digest, &dlen));
		T_OK(doca_sha_cap_get_min_dst_buf_size(doca_dev_as_devinfo(e->dev), (enum doca_sha_algorithm)a, &min));
		T_TRUE(dlen == min);
		hex(digest, dlen, text);
		T_TRUE(strcmp(text, abc_digests[a]) == 0);
	}
	t_say("ok SHA-1, SHA-256 and SHA-512 of \"abc\" match FIPS 180's vectors");
	T_EXPECT_ERR(hash(e, DOCA_SHA_ALGORITHM_SHA256, 3, 31, digest, &dlen), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(dlen == 0);
	t_say("ok a destination smaller than the digest: DOCA_ERROR_INVALID_VALUE, nothing written");
}

/* A partial session over `total` bytes in parts of `part` (a multiple of the block), compared to the one-shot hash */
static void test_partial(struct env *e, enum doca_sha_algorithm alg, size_t total, size_t part)
{
	struct run r = {0};
	union doca_data ud = {.ptr = &r};
	struct doca_buf *src, *dst;
	struct doca_sha_task_partial_hash *t;
	uint8_t whole[64], *got;
	size_t wlen, glen, at = 0;
	uint32_t block;

	T_OK(doca_sha_cap_get_partial_hash_block_size(doca_dev_as_devinfo(e->dev), alg, &block));
	T_TRUE(part % block == 0);
	t_fill(e->area + SRC_OFF, total, 11);
	T_OK(hash(e, alg, total, 64, whole, &wlen));
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, e->area + DST_OFF, 64, &dst));
	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, e->area + SRC_OFF, total, &src));
	T_OK(doca_sha_task_partial_hash_alloc_init(e->sha, alg, src, dst, ud, &t));
	while (at < total) {
		size_t len = total - at <= part ? total - at : part;

		T_OK(doca_buf_set_data(src, e->area + SRC_OFF + at, len));
		if (at + len == total)
			T_OK(doca_sha_task_partial_hash_set_is_final_buf(t));
		r.done = 0;
		T_OK(doca_task_submit(doca_sha_task_partial_hash_as_task(t)));
		t_progress_until(e->pe, &r.done);
		T_OK(r.status);
		T_TRUE(doca_sha_task_partial_hash_get_has_result(t) == (at + len == total));
		if (at == 0) {
			/* the session has started: destination and algorithm are fixed */
			T_EXPECT_ERR(doca_sha_task_partial_hash_set_dst(t, dst), DOCA_ERROR_BAD_STATE);
			T_EXPECT_ERR(doca_sha_task_partial_hash_set_algorithm(t, alg), DOCA_ERROR_BAD_STATE);
		}
		at += len;
	}
	T_OK(doca_buf_get_data_len(dst, &glen));
	got = e->area + DST_OFF;
	T_TRUE(glen == wlen && memcmp(got, whole, wlen) == 0);
	T_TRUE(doca_sha_task_partial_hash_get_is_final(t) == 1);
	/* After the final part the session is over until a reset */
	r.done = 0;
	T_OK(doca_task_submit(doca_sha_task_partial_hash_as_task(t)));
	t_progress_until(e->pe, &r.done);
	T_EXPECT_ERR(r.status, DOCA_ERROR_BAD_STATE);
	T_OK(doca_sha_task_partial_hash_reset(t));
	T_TRUE(doca_sha_task_partial_hash_get_has_result(t) == 0 && doca_sha_task_partial_hash_get_is_final(t) == 0);
	/* A non-final part that is not whole blocks fails (DOCA leaves it undefined) */
	T_OK(doca_buf_set_data(src, e->area + SRC_OFF, block + 1));
	r.done = 0;
	T_OK(doca_task_submit(doca_sha_task_partial_hash_as_task(t)));
	t_progress_until(e->pe, &r.done);
	T_EXPECT_ERR(r.status, DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_sha_task_partial_hash_as_task(t));
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	t_say("ok partial %s: %zu bytes in parts of %zu equal the one-shot digest; BAD_STATE rules; reset",
	      alg == DOCA_SHA_ALGORITHM_SHA1 ? "SHA-1" : alg == DOCA_SHA_ALGORITHM_SHA256 ? "SHA-256" : "SHA-512",
	      total, part);
}

static void test_stop_in_flight(struct env *e)
{
	struct run r = {0};
	union doca_data ud = {.ptr = &r};
	struct doca_buf *src, *dst[4];
	enum doca_ctx_states state;

	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, e->area + SRC_OFF, 1000, &src));
	for (int i = 0; i < 4; i++) {
		struct doca_sha_task_hash *t;

		T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, e->area + DST_OFF + 64 * i, 64, &dst[i]));
		T_OK(doca_sha_task_hash_alloc_init(e->sha, DOCA_SHA_ALGORITHM_SHA256, src, dst[i], ud, &t));
		T_OK(doca_task_submit(doca_sha_task_hash_as_task(t)));
	}
	T_EXPECT_ERR(doca_ctx_stop(doca_sha_as_ctx(e->sha)), DOCA_ERROR_IN_PROGRESS);
	while (r.done < 4)
		doca_pe_progress(e->pe);
	for (int i = 0; i < 10; i++)
		doca_pe_progress(e->pe);
	T_OK(doca_ctx_get_state(doca_sha_as_ctx(e->sha), &state));
	T_TRUE(state == DOCA_CTX_STATE_IDLE && r.status != DOCA_SUCCESS);
	T_OK(doca_buf_dec_refcount(src, NULL));
	for (int i = 0; i < 4; i++)
		T_OK(doca_buf_dec_refcount(dst[i], NULL));
	t_say("ok stop with 4 tasks in flight: flushed with %s, context idle", doca_error_get_name(r.status));
}

int main(int argc, char **argv)
{
	bool off = argc > 1 && strcmp(argv[1], "off") == 0;
	struct env e = {0};
	struct doca_devinfo *info;
	doca_error_t want = off ? DOCA_ERROR_NOT_SUPPORTED : DOCA_SUCCESS;
	uint32_t v = 0;
	uint64_t max = 0;

	e.dev = t_open_first_dev();
	info = doca_dev_as_devinfo(e.dev);
	for (int a = 0; a < 3; a++) {
		T_EXPECT_ERR(doca_sha_cap_task_hash_get_supported(info, (enum doca_sha_algorithm)a), want);
		T_EXPECT_ERR(doca_sha_cap_task_partial_hash_get_supported(info, (enum doca_sha_algorithm)a), want);
	}
	T_EXPECT_ERR(doca_sha_cap_task_hash_get_supported(info, (enum doca_sha_algorithm)3), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_sha_cap_get_max_src_buf_size(info, &max), want);
	T_EXPECT_ERR(doca_sha_cap_get_max_list_buf_num_elem(info, &v), want);
	T_TRUE(off ? strstr(doca_sim_sha_backend_missing(), "libssl3") != NULL : doca_sim_sha_backend_missing() == NULL);
	t_say("ok capabilities %s", off ? "NOT_SUPPORTED, naming libssl3" : "supported");

	e.area = t_local_area(e.dev, AREA, 4096, 16, &e.mmap, &e.inv);
	T_OK(doca_pe_create(&e.pe));
	T_OK(doca_sha_create(e.dev, &e.sha));
	T_OK(doca_sha_task_hash_set_conf(e.sha, on_hash, on_hash, 3));
	T_OK(doca_sha_task_partial_hash_set_conf(e.sha, on_part, on_part, 2));
	T_EXPECT_ERR(doca_sha_task_hash_set_conf(e.sha, on_hash, on_hash, 40), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_pe_connect_ctx(e.pe, doca_sha_as_ctx(e.sha)));
	if (off) {
		T_EXPECT_ERR(doca_ctx_start(doca_sha_as_ctx(e.sha)), DOCA_ERROR_NOT_SUPPORTED);
		t_say("ok start without libcrypto: DOCA_ERROR_NOT_SUPPORTED");
	} else {
		T_OK(doca_ctx_start(doca_sha_as_ctx(e.sha)));
		test_vectors(&e);
		test_partial(&e, DOCA_SHA_ALGORITHM_SHA1, 1000003, 64 * 1000);
		test_partial(&e, DOCA_SHA_ALGORITHM_SHA256, 3 << 20, 1 << 20);
		test_partial(&e, DOCA_SHA_ALGORITHM_SHA512, 128 * 5, 128);
		test_stop_in_flight(&e);
	}
	T_OK(doca_sha_destroy(e.sha));
	t_local_close(e.pe, e.inv, e.mmap, e.dev, e.area);
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	t_say("PASS sha_tasks");
	return 0;
}
