/*
 * The C side of the accelerator rows (benchmarks/accel.ts): deflate and SHA-256 of batches of equal pieces, either
 * through the DOCA device (libdoca_compress / libdoca_sha, DEPTH tasks in flight, resubmitted from their callbacks)
 * or by calling the backing library directly (zlib's raw deflate, libcrypto's EVP SHA-256, loaded with dlopen as the
 * device loads them). Each cell warms up first, untimed (driver-common.h, cell_clock). One JSON line: {"mode", "size",
 * "ops", "seconds", "cpu"} (cpu: the process's CPU seconds in the measured part).
 *
 *   accel-driver deflate-device|deflate-zlib|sha-device|sha-crypto SIZE SECONDS DEPTH
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_compress.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sha.h>

#define DRIVER_NAME "accel-driver"
#include "driver-common.h"

#define MAX_DEPTH 64

/* Text-like bytes, the same kind the TypeScript side deflates */
static void fill(uint8_t *p, size_t n)
{
	static const char *words[] = {"doca ", "compress ", "deflate ", "block ", "software ", "device ", "\n"};
	uint32_t x = 1;

	for (size_t i = 0; i < n;) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = words[(x >> 16) % 7];
		for (; *w != '\0' && i < n; w++)
			p[i++] = (uint8_t)*w;
	}
}

struct bench {
	bool sha;
	size_t size;
	struct cell_clock clock;
	uint64_t done;
	int inflight;
	bool stopping;
	struct doca_buf *dst[MAX_DEPTH];
};

static void resubmit(struct doca_task *task, struct doca_buf *dst, struct bench *b)
{
	if (doca_task_get_status(task) != DOCA_SUCCESS)
		die("task", doca_error_get_name(doca_task_get_status(task)));
	b->done++;
	doca_buf_reset_data_len(dst);
	if (cell_tick(&b->clock, b->done)) {
		OK(doca_task_submit(task));
		return;
	}
	doca_task_free(task);
	b->inflight--;
}

static void on_deflate(struct doca_compress_task_compress_deflate *t, union doca_data tud, union doca_data cud)
{
	struct bench *b = cud.ptr;

	resubmit(doca_compress_task_compress_deflate_as_task(t), b->dst[tud.u64], b);
}

static void on_sha(struct doca_sha_task_hash *t, union doca_data tud, union doca_data cud)
{
	struct bench *b = cud.ptr;

	resubmit(doca_sha_task_hash_as_task(t), b->dst[tud.u64], b);
}

static void run_device(struct bench *b, int depth, double seconds)
{
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_ctx *ctx;
	struct doca_compress *compress = NULL;
	struct doca_sha *sha = NULL;
	size_t room = b->size + b->size / 8 + 1024;
	uint8_t *mem = malloc(b->size + room * (size_t)depth);
	struct doca_buf *src;
	union doca_data cud = {.ptr = b};
	unsigned long long ops;
	double elapsed, cpu;

	fill(mem, b->size);
	dev = open_first_dev();
	OK(doca_pe_create(&pe));
	mmap = started_mmap(dev, mem, b->size + room * (size_t)depth, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	OK(doca_buf_inventory_create((size_t)depth + 1, &inv));
	OK(doca_buf_inventory_start(inv));
	OK(doca_buf_inventory_buf_get_by_data(inv, mmap, mem, b->size, &src));
	for (int i = 0; i < depth; i++)
		OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + b->size + room * (size_t)i, room, &b->dst[i]));
	if (b->sha) {
		OK(doca_sha_create(dev, &sha));
		OK(doca_sha_task_hash_set_conf(sha, on_sha, on_sha, 6));
		ctx = doca_sha_as_ctx(sha);
	} else {
		OK(doca_compress_create(dev, &compress));
		OK(doca_compress_task_compress_deflate_set_conf(compress, on_deflate, on_deflate, (uint32_t)depth));
		ctx = doca_compress_as_ctx(compress);
	}
	OK(doca_ctx_set_user_data(ctx, cud));
	OK(doca_pe_connect_ctx(pe, ctx));
	OK(doca_ctx_start(ctx));
	cell_begin(&b->clock, seconds);
	for (int i = 0; i < depth; i++) {
		union doca_data tud = {.u64 = (uint64_t)i};
		struct doca_task *task;

		if (b->sha) {
			struct doca_sha_task_hash *t;
			OK(doca_sha_task_hash_alloc_init(sha, DOCA_SHA_ALGORITHM_SHA256, src, b->dst[i], tud, &t));
			task = doca_sha_task_hash_as_task(t);
		} else {
			struct doca_compress_task_compress_deflate *t;
			OK(doca_compress_task_compress_deflate_alloc_init(compress, src, b->dst[i], tud, &t));
			task = doca_compress_task_compress_deflate_as_task(t);
		}
		OK(doca_task_submit(task));
		b->inflight++;
	}
	while (b->inflight > 0)
		doca_pe_progress(pe);
	cell_end(&b->clock, b->done, &ops, &elapsed, &cpu);
	printf("{\"mode\":\"%s\",\"size\":%zu,\"ops\":%llu,\"seconds\":%.6f,\"cpu\":%.6f}\n",
	       b->sha ? "sha-device" : "deflate-device", b->size, ops, elapsed, cpu);
	OK(doca_ctx_stop(ctx));
	for (int i = 0; i < depth; i++)
		doca_buf_dec_refcount(b->dst[i], NULL);
	doca_buf_dec_refcount(src, NULL);
	if (b->sha)
		OK(doca_sha_destroy(sha));
	else
		OK(doca_compress_destroy(compress));
	OK(doca_pe_destroy(pe));
	OK(doca_buf_inventory_destroy(inv));
	OK(doca_mmap_destroy(mmap));
	OK(doca_dev_close(dev));
	free(mem);
}

/* zlib's z_stream as zlib.h declares it (no zlib headers needed) */
struct z_stream_s {
	const uint8_t *next_in;
	unsigned avail_in;
	unsigned long total_in;
	uint8_t *next_out;
	unsigned avail_out;
	unsigned long total_out;
	const char *msg;
	void *state, *zalloc, *zfree, *opaque;
	int data_type;
	unsigned long adler, reserved;
};

static void *sym(void *lib, const char *name)
{
	void *p = lib != NULL ? dlsym(lib, name) : NULL;

	if (p == NULL) {
		fprintf(stderr, "accel-driver: %s not found\n", name);
		exit(1);
	}
	return p;
}

static void run_library(struct bench *b, double seconds)
{
	uint8_t *src = malloc(b->size), *dst = malloc(b->size + b->size / 8 + 1024);
	uint8_t digest[64];
	unsigned long long done = 0, ops;
	double elapsed, cpu;
	struct cell_clock clock;

	fill(src, b->size);
	if (b->sha) {
		void *lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
		void *(*ctx_new)(void);
		const void *(*sha256)(void);
		int (*init)(void *, const void *, void *), (*update)(void *, const void *, size_t), (*final)(void *, uint8_t *, unsigned *);
		void *ctx;

		*(void **)&ctx_new = sym(lib, "EVP_MD_CTX_new");
		*(void **)&sha256 = sym(lib, "EVP_sha256");
		*(void **)&init = sym(lib, "EVP_DigestInit_ex");
		*(void **)&update = sym(lib, "EVP_DigestUpdate");
		*(void **)&final = sym(lib, "EVP_DigestFinal_ex");
		ctx = ctx_new();
		cell_begin(&clock, seconds);
		do {
			unsigned len;

			init(ctx, sha256(), NULL);
			update(ctx, src, b->size);
			final(ctx, digest, &len);
			done++;
		} while (cell_tick(&clock, done));
	} else {
		void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
		const char *(*version)(void);
		int (*init)(struct z_stream_s *, int, int, int, int, int, const char *, int), (*deflate)(struct z_stream_s *, int);
		int (*end_)(struct z_stream_s *);

		*(void **)&version = sym(lib, "zlibVersion");
		*(void **)&init = sym(lib, "deflateInit2_");
		*(void **)&deflate = sym(lib, "deflate");
		*(void **)&end_ = sym(lib, "deflateEnd");
		cell_begin(&clock, seconds);
		do {
			struct z_stream_s s;

			memset(&s, 0, sizeof(s));
			init(&s, -1, 8, -15, 8, 0, version(), (int)sizeof(s));
			s.next_in = src;
			s.avail_in = (unsigned)b->size;
			s.next_out = dst;
			s.avail_out = (unsigned)(b->size + b->size / 8 + 1024);
			if (deflate(&s, 4) != 1) {
				fprintf(stderr, "accel-driver: zlib deflate did not finish\n");
				exit(1);
			}
			end_(&s);
			done++;
		} while (cell_tick(&clock, done));
	}
	cell_end(&clock, done, &ops, &elapsed, &cpu);
	printf("{\"mode\":\"%s\",\"size\":%zu,\"ops\":%llu,\"seconds\":%.6f,\"cpu\":%.6f}\n",
	       b->sha ? "sha-crypto" : "deflate-zlib", b->size, ops, elapsed, cpu);
	free(src);
	free(dst);
}

int main(int argc, char **argv)
{
	struct bench b = {0};
	double seconds;
	int depth;

	if (argc != 5) {
		fprintf(stderr, "usage: accel-driver deflate-device|deflate-zlib|sha-device|sha-crypto SIZE SECONDS DEPTH\n");
		return 2;
	}
	b.sha = strncmp(argv[1], "sha", 3) == 0;
	b.size = (size_t)strtoull(argv[2], NULL, 10);
	seconds = atof(argv[3]);
	depth = atoi(argv[4]);
	if (b.size == 0 || seconds <= 0 || depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "accel-driver: bad SIZE, SECONDS or DEPTH\n");
		return 2;
	}
	if (strstr(argv[1], "device") != NULL)
		run_device(&b, depth, seconds);
	else
		run_library(&b, seconds);
	return 0;
}
