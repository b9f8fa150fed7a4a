/*
 * The compress context on the software device: capabilities, deflate round trips with their checksums, LZ4 stream
 * (independent and dependent blocks, block checksums, stored blocks) and block decompression, the exact errors of
 * bad input and small destinations, a fuzz loop over corrupted streams that must never write past the destination,
 * decompression into and out of another process's memory (a PCI export) with its refusals, and a stop with tasks in
 * flight. `off` (run with DOCA_SIM_ACCEL_OFF=zlib,lz4): every kind NOT_SUPPORTED.
 * LZ4 input is made with liblz4's own compressor, loaded like the device loads it.
 */
#include <dlfcn.h>

#include <doca_compress.h>

#include "accel_test_util.h"

#define AREA (1u << 20)
#define GUARD 4096u

struct run {
	int done;
	doca_error_t status;
	uint32_t crc, other;
};

static struct run *cur;

#define CALLBACK(name, type, other_getter) \
	static void name(struct doca_##type *task, union doca_data tud, union doca_data cud) \
	{ \
		(void)cud; \
		struct run *r = tud.ptr; \
		r->status = doca_task_get_status(doca_##type##_as_task(task)); \
		if (r->status == DOCA_SUCCESS) { \
			r->crc = doca_##type##_get_crc_cs(task); \
			r->other = other_getter(task); \
		} \
		r->done++; \
		doca_task_free(doca_##type##_as_task(task)); \
	}

CALLBACK(on_deflate, compress_task_compress_deflate, doca_compress_task_compress_deflate_get_adler_cs)
CALLBACK(on_inflate, compress_task_decompress_deflate, doca_compress_task_decompress_deflate_get_adler_cs)
CALLBACK(on_lz4s, compress_task_decompress_lz4_stream, doca_compress_task_decompress_lz4_stream_get_xxh_cs)
CALLBACK(on_lz4b, compress_task_decompress_lz4_block, doca_compress_task_decompress_lz4_block_get_xxh_cs)

static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static uint32_t adler32_ref(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return (b << 16) | a;
}

struct env {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_compress *c;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *area; /* [0, AREA): source half then destination half, each followed by a guard */
};

static uint8_t *src_at(struct env *e) { return e->area; }
static uint8_t *dst_at(struct env *e) { return e->area + AREA / 2; }

enum kind { K_DEFLATE, K_INFLATE, K_LZ4S, K_LZ4B };

/* Run one task: src_len bytes at src_at, dst_room bytes of room at dst_at (the rest of the half is a canary) */
static struct run run_task(struct env *e, enum kind k, size_t src_len, size_t dst_room, int flags, size_t *out_len)
{
	struct doca_buf *src, *dst;
	struct run r = {0};
	union doca_data ud = {.ptr = &r};
	struct doca_task *task = NULL;
	uint8_t *d = dst_at(e);

	memset(d + dst_room, 0xa5, GUARD);
	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, src_at(e), src_len, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, d, dst_room, &dst));
/* The kinds whose alloc_init takes only (context, source, destination, user data): one allocated as a doca_task */
#define SIMPLE_TASK(name) \
	do { \
		struct doca_compress_task_##name *t; \
		T_OK(doca_compress_task_##name##_alloc_init(e->c, src, dst, ud, &t)); \
		task = doca_compress_task_##name##_as_task(t); \
	} while (0)
	switch (k) {
	case K_DEFLATE:
		SIMPLE_TASK(compress_deflate);
		break;
	case K_INFLATE:
		SIMPLE_TASK(decompress_deflate);
		break;
	case K_LZ4S: {
		struct doca_compress_task_decompress_lz4_stream *t;
		T_OK(doca_compress_task_decompress_lz4_stream_alloc_init(e->c, flags & 1, (flags >> 1) & 1, src, dst, ud,
									 &t));
		T_TRUE(doca_compress_task_decompress_lz4_stream_get_has_block_checksum(t) == (flags & 1));
		task = doca_compress_task_decompress_lz4_stream_as_task(t);
		break;
	}
	case K_LZ4B:
		SIMPLE_TASK(decompress_lz4_block);
		break;
	}
#undef SIMPLE_TASK
	T_OK(doca_task_submit(task));
	t_progress_until(e->pe, &r.done);
	T_TRUE(r.done == 1);
	for (size_t i = 0; i < GUARD; i++)
		T_TRUE(d[dst_room + i] == 0xa5); /* nothing written past the destination */
	T_OK(doca_buf_get_data_len(dst, out_len));
	if (r.status != DOCA_SUCCESS)
		T_TRUE(*out_len == 0); /* a failed task leaves the destination's data as it was */
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	return r;
}

static void make_text(uint8_t *p, size_t n, uint32_t seed)
{
	static const char *words[] = {"doca ", "deflate ", "block ", "stream ", "software ", "device ", "\n"};
	uint32_t x = seed;

	for (size_t i = 0; i < n;) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = words[(x >> 16) % 7];
		for (; *w != '\0' && i < n; w++)
			p[i++] = (uint8_t)*w;
	}
}

/* A fuzz input: the len bytes of good copied to at with 1 to 4 bits flipped, and one time in three cut short; returns
 * its length. *x is the fuzzer's random state (a linear congruential sequence), moved on by what it draws. */
static size_t corrupted_copy(uint8_t *at, const uint8_t *good, size_t len, uint32_t *x)
{
	memcpy(at, good, len);
	*x = *x * 1103515245u + 12345u;
	for (int f = 0; f < 1 + (int)(*x % 4); f++) {
		*x = *x * 1103515245u + 12345u;
		at[(*x >> 8) % len] ^= (uint8_t)(1u << (*x % 8));
	}
	return *x % 3 == 0 ? 1 + (*x >> 4) % len : len;
}

typedef int (*lz4_compress_fn)(const char *src, char *dst, int src_size, int dst_capacity);

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

uint32_t xxh32_ref(const uint8_t *p, size_t len);
/* Independent xxHash-32 for the test (seed 0), straight from the specification's steps */
uint32_t xxh32_ref(const uint8_t *p, size_t len)
{
	const uint32_t P1 = 2654435761u, P2 = 2246822519u, P3 = 3266489917u, P4 = 668265263u, P5 = 374761393u;
	size_t i = 0;
	uint32_t h;
#define ROTL(x, r) (((x) << (r)) | ((x) >> (32 - (r))))
#define RD(q) ((uint32_t)(q)[0] | (uint32_t)(q)[1] << 8 | (uint32_t)(q)[2] << 16 | (uint32_t)(q)[3] << 24)
	if (len >= 16) {
		uint32_t v[4] = {P1 + P2, P2, 0, 0u - P1};

		for (; i + 16 <= len; i += 16)
			for (int l = 0; l < 4; l++)
				v[l] = ROTL(v[l] + RD(p + i + 4 * l) * P2, 13) * P1;
		h = ROTL(v[0], 1) + ROTL(v[1], 7) + ROTL(v[2], 12) + ROTL(v[3], 18);
	} else {
		h = P5;
	}
	h += (uint32_t)len;
	for (; i + 4 <= len; i += 4)
		h = ROTL(h + RD(p + i) * P3, 17) * P4;
	for (; i < len; i++)
		h = ROTL(h + p[i] * P5, 11) * P1;
	h ^= h >> 15;
	h *= P2;
	h ^= h >> 13;
	h *= P3;
	return h ^ (h >> 16);
}

/* An LZ4 stream of independent blocks of `block` bytes (with checksums when asked) at out; its length */
static size_t make_lz4_stream(lz4_compress_fn lz4, const uint8_t *plain, size_t n, size_t block, bool checksums,
			      bool store_last, uint8_t *out)
{
	size_t at = 0;

	for (size_t off = 0; off < n; off += block) {
		size_t len = n - off < block ? n - off : block;
		bool store = store_last && off + block >= n;
		int c = store ? 0 : lz4((const char *)plain + off, (char *)out + at + 4, (int)len, 1 << 20);

		T_TRUE(store || c > 0);
		if (store) {
			memcpy(out + at + 4, plain + off, len);
			put32(out + at, (uint32_t)len | 0x80000000u);
			c = (int)len;
		} else {
			put32(out + at, (uint32_t)c);
		}
		if (checksums)
			put32(out + at + 4 + c, xxh32_ref(out + at + 4, (size_t)c));
		at += 4 + (size_t)c + (checksums ? 4 : 0);
	}
	return at;
}

static void test_caps(struct env *e, bool off)
{
	struct doca_devinfo *info = doca_dev_as_devinfo(e->dev);
	doca_error_t want = off ? DOCA_ERROR_NOT_SUPPORTED : DOCA_SUCCESS;
	uint64_t size = 0;
	uint32_t len = 0, max = 0;

	T_EXPECT_ERR(doca_compress_cap_task_compress_deflate_is_supported(info), want);
	T_EXPECT_ERR(doca_compress_cap_task_decompress_deflate_is_supported(info), want);
	T_EXPECT_ERR(doca_compress_cap_task_decompress_lz4_stream_is_supported(info), want);
	T_EXPECT_ERR(doca_compress_cap_task_decompress_lz4_block_is_supported(info), want);
	T_EXPECT_ERR(doca_compress_cap_task_compress_deflate_get_max_buf_size(info, &size), want);
	T_EXPECT_ERR(doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(info, &size), want);
	T_OK(doca_compress_cap_task_decompress_deflate_get_max_buf_list_len(info, &len));
	T_EXPECT_ERR(doca_compress_cap_task_compress_deflate_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_compress_cap_get_max_num_tasks(e->c, &max));
	T_TRUE(len == 1 && max >= 64);
	if (off) {
		T_TRUE(doca_sim_compress_backend_missing() != NULL);
		T_TRUE(strstr(doca_sim_compress_backend_missing(), "zlib1g") != NULL);
		T_TRUE(strstr(doca_sim_compress_backend_missing(), "liblz4-1") != NULL);
	} else {
		T_TRUE(doca_sim_compress_backend_missing() == NULL && size >= AREA);
	}
	t_say("ok capabilities %s", off ? "NOT_SUPPORTED, with the Debian packages named" : "supported");
}

static void test_deflate(struct env *e)
{
	size_t n = 200000, clen = 0, plen = 0;
	uint8_t *plain = malloc(n);
	struct run r;

	make_text(plain, n, 1);
	memcpy(src_at(e), plain, n);
	r = run_task(e, K_DEFLATE, n, AREA / 2 - GUARD, 0, &clen);
	T_OK(r.status);
	T_TRUE(clen > 0 && clen < n / 2);
	T_TRUE(r.crc == crc32_ref(plain, n) && r.other == adler32_ref(plain, n));
	memcpy(src_at(e), dst_at(e), clen);
	r = run_task(e, K_INFLATE, clen, AREA / 2 - GUARD, 0, &plen);
	T_OK(r.status);
	T_TRUE(plen == n && memcmp(dst_at(e), plain, n) == 0);
	T_TRUE(r.crc == crc32_ref(plain, n) && r.other == adler32_ref(plain, n));
	t_say("ok deflate round trip of %zu bytes (%zu compressed), CRC-32 and Adler-32 of the plain bytes", n, clen);

	/* destination one byte short of the output: TOO_BIG, nothing written past it */
	memcpy(src_at(e), plain, n);
	r = run_task(e, K_DEFLATE, n, clen - 1, 0, &plen);
	T_EXPECT_ERR(r.status, DOCA_ERROR_TOO_BIG);
	memcpy(src_at(e), dst_at(e), 0);
	free(plain);
	t_say("ok compress into a destination too small: DOCA_ERROR_TOO_BIG");
}

static void test_inflate_errors(struct env *e)
{
	size_t n = 100000, clen = 0, got = 0;
	uint8_t *plain = malloc(n), *comp;
	struct run r;
	uint32_t x = 99;
	int failures = 0;

	make_text(plain, n, 2);
	memcpy(src_at(e), plain, n);
	T_OK(run_task(e, K_DEFLATE, n, AREA / 2 - GUARD, 0, &clen).status);
	comp = malloc(clen);
	memcpy(comp, dst_at(e), clen);

	memcpy(src_at(e), comp, clen);
	r = run_task(e, K_INFLATE, clen, n - 1, 0, &got);
	T_EXPECT_ERR(r.status, DOCA_ERROR_TOO_BIG);
	r = run_task(e, K_INFLATE, clen / 2, AREA / 2 - GUARD, 0, &got);
	T_EXPECT_ERR(r.status, DOCA_ERROR_INVALID_VALUE);
	memset(src_at(e), 0xff, 64);
	r = run_task(e, K_INFLATE, 64, AREA / 2 - GUARD, 0, &got);
	T_EXPECT_ERR(r.status, DOCA_ERROR_INVALID_VALUE);
	t_say("ok decompress: small destination TOO_BIG, truncated and corrupt streams INVALID_VALUE");

	/* Fuzz: flip bytes or cut the stream; every run either succeeds within its room or fails cleanly */
	for (int i = 0; i < 300; i++) {
		size_t len = corrupted_copy(src_at(e), comp, clen, &x), room;

		room = (x % 5 == 0) ? n / 2 : AREA / 2 - GUARD;
		r = run_task(e, K_INFLATE, len, room, 0, &got);
		if (r.status != DOCA_SUCCESS) {
			T_TRUE(r.status == DOCA_ERROR_INVALID_VALUE || r.status == DOCA_ERROR_TOO_BIG);
			failures++;
		}
	}
	T_TRUE(failures > 30); /* raw deflate has no checksum: many flipped streams still decode */
	free(plain);
	free(comp);
	t_say("ok fuzz: 300 corrupted deflate streams, %d refused, none wrote past its destination", failures);
}

static void test_lz4(struct env *e, lz4_compress_fn lz4)
{
	size_t n = 300000, slen, got = 0;
	uint8_t *plain = malloc(n), *stream = malloc(AREA / 2);
	struct run r;
	uint32_t x = 7;
	int failures = 0;

	make_text(plain, n, 3);
	for (int flags = 0; flags < 4; flags++) {
		/* flags bit 0: block checksums; bit 1: independent blocks (ours are, so dependent decoding still works) */
		slen = make_lz4_stream(lz4, plain, n, 65536, flags & 1, flags == 3, stream);
		memcpy(src_at(e), stream, slen);
		r = run_task(e, K_LZ4S, slen, AREA / 2 - GUARD, flags, &got);
		T_OK(r.status);
		T_TRUE(got == n && memcmp(dst_at(e), plain, n) == 0);
		T_TRUE(r.crc == crc32_ref(plain, n) && r.other == __builtin_bswap32(xxh32_ref(plain, n)));
	}
	t_say("ok lz4 stream of %zu bytes in 64 KiB blocks: with and without block checksums, a stored block", n);

	/* One bare block */
	slen = (size_t)lz4((const char *)plain, (char *)src_at(e), 60000, AREA / 2);
	r = run_task(e, K_LZ4B, slen, AREA / 2 - GUARD, 0, &got);
	T_OK(r.status);
	T_TRUE(got == 60000 && memcmp(dst_at(e), plain, 60000) == 0 && r.other == __builtin_bswap32(xxh32_ref(plain, 60000)));
	r = run_task(e, K_LZ4B, slen, 59999, 0, &got);
	T_EXPECT_ERR(r.status, DOCA_ERROR_INVALID_VALUE);
	t_say("ok lz4 block: decompressed with CRC-32 and xxHash-32; one byte short INVALID_VALUE");

	/* A bad block checksum, a truncated stream */
	slen = make_lz4_stream(lz4, plain, n, 65536, true, false, stream);
	memcpy(src_at(e), stream, slen);
	src_at(e)[slen - 1] ^= 1;
	T_EXPECT_ERR(run_task(e, K_LZ4S, slen, AREA / 2 - GUARD, 1, &got).status, DOCA_ERROR_INVALID_VALUE);
	memcpy(src_at(e), stream, slen);
	T_EXPECT_ERR(run_task(e, K_LZ4S, slen - 9, AREA / 2 - GUARD, 1, &got).status, DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(run_task(e, K_LZ4S, slen, n - 1, 1, &got).status, DOCA_ERROR_INVALID_VALUE);
	t_say("ok lz4 stream: bad block checksum, truncation and a small destination fail with INVALID_VALUE");

	slen = make_lz4_stream(lz4, plain, n, 65536, false, false, stream);
	for (int i = 0; i < 300; i++) {
		size_t len = corrupted_copy(src_at(e), stream, slen, &x), room;

		room = (x % 5 == 0) ? n / 2 : AREA / 2 - GUARD;
		r = run_task(e, (x % 7 == 0) ? K_LZ4B : K_LZ4S, len, room, (int)(x >> 12) & 3, &got);
		if (r.status != DOCA_SUCCESS) {
			T_TRUE(r.status == DOCA_ERROR_INVALID_VALUE || r.status == DOCA_ERROR_TOO_BIG);
			failures++;
		}
	}
	free(plain);
	free(stream);
	t_say("ok fuzz: 300 corrupted lz4 inputs, %d refused, none wrote past its destination", failures);
}

/* One LZ4 stream task (independent blocks, no checksums) between two bufs; its run */
static struct run lz4s_between(struct env *e, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_compress_task_decompress_lz4_stream *t;
	struct run r = {0};
	union doca_data ud = {.ptr = &r};

	T_OK(doca_compress_task_decompress_lz4_stream_alloc_init(e->c, false, true, src, dst, ud, &t));
	T_OK(doca_task_submit(doca_compress_task_decompress_lz4_stream_as_task(t)));
	t_progress_until(e->pe, &r.done);
	T_TRUE(r.done == 1);
	return r;
}

/*
 * Memory of another process (a map created from a PCI export), as on a DPU decompressing into the host's memory
 * (NVIDIA's comch_to_rdma_gga_offload): the output lands in the exporter's memory, inside the buffer only; a source
 * there is read; an export without PCI write is NOT_PERMITTED as a destination; once the exporter's map is destroyed
 * (a revoked link) the task fails and nothing is written. The import is in this process: the device checks it as a
 * remote one (export, range, pages).
 */
static void test_exported(struct env *e, lz4_compress_fn lz4)
{
	const size_t n = 3 * 65536 + 100, host_len = 1u << 19;
	uint8_t *plain = malloc(n), *stream = malloc(AREA / 2), *host = aligned_alloc(4096, host_len);
	struct doca_mmap *hmap, *imported, *romap, *roimport;
	struct doca_buf *src, *dst;
	const void *desc;
	size_t dlen, slen, got;
	struct run r;

	T_TRUE(plain != NULL && stream != NULL && host != NULL);
	make_text(plain, n, 9);
	slen = make_lz4_stream(lz4, plain, n, 65536, false, true, stream);
	memcpy(src_at(e), stream, slen);
	memset(host, 0x5a, host_len);
	hmap = t_mmap(e->dev, host, host_len, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	T_OK(doca_mmap_export_pci(hmap, e->dev, &desc, &dlen));
	T_OK(doca_mmap_create_from_export(NULL, desc, dlen, e->dev, &imported));
	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, src_at(e), slen, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, imported, host + 4096, n, &dst));
	r = lz4s_between(e, src, dst);
	T_OK(r.status);
	T_OK(doca_buf_get_data_len(dst, &got));
	T_TRUE(got == n && memcmp(host + 4096, plain, n) == 0 && r.crc == crc32_ref(plain, n));
	T_TRUE(host[4095] == 0x5a && host[4096 + n] == 0x5a); /* nothing around the buffer touched */
	/* the stream itself in the exporter's memory, decompressed back into local memory */
	memcpy(host + 4096 + n, stream, slen);
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, imported, host + 4096 + n, slen, &src));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, dst_at(e), n, &dst));
	T_OK(lz4s_between(e, src, dst).status);
	T_TRUE(memcmp(dst_at(e), plain, n) == 0);
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	t_say("ok lz4 stream into and out of another process's memory (a PCI export): exact bytes, nothing around them");

	/* exported read-only: not a destination */
	romap = t_mmap(e->dev, host, host_len, DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	T_OK(doca_mmap_export_pci(romap, e->dev, &desc, &dlen));
	T_OK(doca_mmap_create_from_export(NULL, desc, dlen, e->dev, &roimport));
	memset(host, 0x5a, host_len);
	T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, src_at(e), slen, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, roimport, host, n, &dst));
	T_EXPECT_ERR(lz4s_between(e, src, dst).status, DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_buf_get_data_len(dst, &got));
	T_TRUE(got == 0 && host[0] == 0x5a && host[n - 1] == 0x5a);
	T_OK(doca_buf_dec_refcount(dst, NULL));
	/* the exporter's map destroyed: the import's next task fails, nothing written */
	T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, imported, host, n, &dst));
	T_OK(doca_mmap_destroy(hmap));
	r = lz4s_between(e, src, dst);
	T_TRUE(r.status != DOCA_SUCCESS);
	T_OK(doca_buf_get_data_len(dst, &got));
	T_TRUE(got == 0 && host[0] == 0x5a && host[n - 1] == 0x5a);
	t_say("ok exported read-only: NOT_PERMITTED; exporter's map destroyed: %s; the memory untouched",
	      doca_error_get_name(r.status));
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	T_OK(doca_mmap_destroy(imported));
	T_OK(doca_mmap_destroy(roimport));
	T_OK(doca_mmap_destroy(romap));
	free(plain);
	free(stream);
	free(host);
}

static void test_stop_in_flight(struct env *e)
{
	struct run r = {0};
	union doca_data ud = {.ptr = &r};
	struct doca_buf *src[3], *dst[3];
	enum doca_ctx_states state;

	make_text(src_at(e), 3000, 4);
	for (int i = 0; i < 3; i++) {
		struct doca_compress_task_compress_deflate *t;

		T_OK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, src_at(e) + i * 1000, 1000, &src[i]));
		T_OK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, dst_at(e) + i * 4096, 4096, &dst[i]));
		T_OK(doca_compress_task_compress_deflate_alloc_init(e->c, src[i], dst[i], ud, &t));
		T_OK(doca_task_submit(doca_compress_task_compress_deflate_as_task(t)));
	}
	T_EXPECT_ERR(doca_ctx_stop(doca_compress_as_ctx(e->c)), DOCA_ERROR_IN_PROGRESS);
	while (r.done < 3)
		doca_pe_progress(e->pe);
	T_TRUE(r.status != DOCA_SUCCESS);
	for (int i = 0; i < 10; i++)
		doca_pe_progress(e->pe);
	T_OK(doca_ctx_get_state(doca_compress_as_ctx(e->c), &state));
	T_TRUE(state == DOCA_CTX_STATE_IDLE);
	for (int i = 0; i < 3; i++) {
		T_OK(doca_buf_dec_refcount(src[i], NULL));
		T_OK(doca_buf_dec_refcount(dst[i], NULL));
	}
	t_say("ok stop with 3 tasks in flight: flushed with %s, context idle", doca_error_get_name(r.status));
}

int main(int argc, char **argv)
{
	bool off = argc > 1 && strcmp(argv[1], "off") == 0;
	struct env e = {0};
	void *lz4_lib = NULL;
	lz4_compress_fn lz4 = NULL;
	struct doca_ctx *ctx;

	e.dev = t_open_first_dev();
	e.area = t_local_area(e.dev, AREA + GUARD, 4096, 16, &e.mmap, &e.inv);
	T_OK(doca_pe_create(&e.pe));
	T_OK(doca_compress_create(e.dev, &e.c));
	ctx = doca_compress_as_ctx(e.c);
	test_caps(&e, off);
	T_OK(doca_compress_task_compress_deflate_set_conf(e.c, on_deflate, on_deflate, 8));
	T_OK(doca_compress_task_decompress_deflate_set_conf(e.c, on_inflate, on_inflate, 8));
	T_OK(doca_compress_task_decompress_lz4_stream_set_conf(e.c, on_lz4s, on_lz4s, 8));
	T_OK(doca_compress_task_decompress_lz4_block_set_conf(e.c, on_lz4b, on_lz4b, 8));
	T_EXPECT_ERR(doca_compress_task_compress_deflate_set_conf(e.c, on_deflate, on_deflate, 1u << 20),
		     DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_pe_connect_ctx(e.pe, ctx));
	if (off) {
		T_EXPECT_ERR(doca_ctx_start(ctx), DOCA_ERROR_NOT_SUPPORTED);
		t_say("ok start with unsupported kinds configured: DOCA_ERROR_NOT_SUPPORTED");
	} else {
		T_OK(doca_ctx_start(ctx));
		test_deflate(&e);
		test_inflate_errors(&e);
		lz4_lib = dlopen("liblz4.so.1", RTLD_NOW);
		T_TRUE(lz4_lib != NULL);
		*(void **)&lz4 = dlsym(lz4_lib, "LZ4_compress_default");
		T_TRUE(lz4 != NULL);
		test_lz4(&e, lz4);
		test_exported(&e, lz4);
		test_stop_in_flight(&e);
		T_EXPECT_ERR(doca_compress_destroy(e.c), DOCA_SUCCESS);
		e.c = NULL;
	}
	if (e.c != NULL)
		T_OK(doca_compress_destroy(e.c));
	t_local_close(e.pe, e.inv, e.mmap, e.dev, e.area);
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	(void)cur;
	t_say("PASS compress_tasks");
	return 0;
}
