/*
 * C side of benchmarks/accel-ea.ts: erasure coding (create, N = 8 data + M = 2 redundancy blocks) and AES-256-GCM
 * encryption, either as DOCA tasks on the device (BATCH tasks in flight, each resubmitted when it completes) or as
 * the same math called directly (a table GF(2^8) multiply over 0x11d like the device's; OpenSSL's EVP AES-GCM, loaded
 * with dlopen like the device does). Warms up untimed (driver-common.h, cell_clock), then runs for SECONDS and prints
 * one line: "bytes=B seconds=S ops=N cpu=C" (C: the process's CPU seconds in the measured part).
 *   accel-ea-driver ec|aes device|direct PAYLOAD_BYTES BATCH SECONDS
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_aes_gcm.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_erasure_coding.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#define DRIVER_NAME "accel-ea-driver"
#include "driver-common.h"

#define N_DATA 8
#define N_RDNC 2
#define MAX_BATCH 256

/* ---- the math, called directly ---- */
static uint8_t gf[256][256];

static void gf_init(void)
{
	uint8_t exp[512], log[256];
	unsigned x = 1;

	for (unsigned i = 0; i < 255; i++) {
		exp[i] = (uint8_t)x;
		log[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	for (unsigned i = 255; i < 512; i++)
		exp[i] = exp[i - 255];
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			gf[a][b] = (a && b) ? exp[log[a] + log[b]] : 0;
}

/* dst ^= row[src], eight bytes a turn combined in a word: the same loop as the software device's, so the device is
 * compared with the math done as well as it does it (a byte-at-a-time reference flattered the device) */
__attribute__((aligned(64))) static void mul_add(uint8_t *dst, const uint8_t *src, const uint8_t *row, size_t len)
{
	size_t x = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; x + 8 <= len; x += 8) {
		uint64_t word, product = (uint64_t)row[src[x]] | (uint64_t)row[src[x + 1]] << 8 |
					 (uint64_t)row[src[x + 2]] << 16 | (uint64_t)row[src[x + 3]] << 24 |
					 (uint64_t)row[src[x + 4]] << 32 | (uint64_t)row[src[x + 5]] << 40 |
					 (uint64_t)row[src[x + 6]] << 48 | (uint64_t)row[src[x + 7]] << 56;

		memcpy(&word, dst + x, sizeof(word));
		word ^= product;
		memcpy(dst + x, &word, sizeof(word));
	}
#endif
	for (; x < len; x++)
		dst[x] ^= row[src[x]];
}

static void ec_direct(const uint8_t *data, uint8_t *out, size_t block, const uint8_t *coef)
{
	memset(out, 0, N_RDNC * block);
	for (size_t j = 0; j < N_RDNC; j++)
		for (size_t i = 0; i < N_DATA; i++) {
			const uint8_t *row = gf[coef[i * N_RDNC + j]];
			const uint8_t *src = data + i * block;
			uint8_t *dst = out + j * block;

			mul_add(dst, src, row, block);
		}
}

struct evp {
	void *(*ctx_new)(void);
	const void *(*aes_256_gcm)(void);
	int (*init)(void *, const void *, void *, const uint8_t *, const uint8_t *);
	int (*update)(void *, uint8_t *, int *, const uint8_t *, int);
	int (*final)(void *, uint8_t *, int *);
	int (*ctrl)(void *, int, int, void *);
};

static void load_evp(struct evp *e)
{
	void *lib = dlopen("libcrypto.so.3", RTLD_NOW);
	void *p;

	if (lib == NULL) {
		fprintf(stderr, "libcrypto.so.3: %s\n", dlerror());
		exit(1);
	}
#define SYM(f, n) (p = dlsym(lib, n), memcpy(&e->f, &p, sizeof(p)))
	SYM(ctx_new, "EVP_CIPHER_CTX_new");
	SYM(aes_256_gcm, "EVP_aes_256_gcm");
	SYM(init, "EVP_EncryptInit_ex");
	SYM(update, "EVP_EncryptUpdate");
	SYM(final, "EVP_EncryptFinal_ex");
	SYM(ctrl, "EVP_CIPHER_CTX_ctrl");
#undef SYM
}

/* ---- the device ---- */
struct run {
	struct doca_pe *pe;
	struct doca_buf *src[MAX_BATCH], *dst[MAX_BATCH];
	int done;
	bool failed;
	struct cell_clock clock;
	unsigned long long ops;
};

static void finished(struct doca_task *task, struct run *r, struct doca_buf *dst)
{
	if (doca_task_get_status(task) != DOCA_SUCCESS)
		r->failed = true;
	r->ops++;
	doca_buf_reset_data_len(dst);
	if (cell_tick(&r->clock, r->ops) && !r->failed && doca_task_submit(task) == DOCA_SUCCESS)
		return;
	doca_task_free(task);
	r->done++;
}

static void ec_cb(struct doca_ec_task_create *t, union doca_data ud, union doca_data cd)
{
	finished(doca_ec_task_create_as_task(t), cd.ptr, doca_ec_task_create_get_rdnc_blocks(t));
	(void)ud;
}

static void aes_cb(struct doca_aes_gcm_task_encrypt *t, union doca_data ud, union doca_data cd)
{
	finished(doca_aes_gcm_task_encrypt_as_task(t), cd.ptr, doca_aes_gcm_task_encrypt_get_dst(t));
	(void)ud;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: accel-ea-driver ec|aes device|direct PAYLOAD_BYTES BATCH SECONDS\n");
		return 2;
	}
	bool ec = strcmp(argv[1], "ec") == 0, device = strcmp(argv[2], "device") == 0;
	size_t payload = strtoul(argv[3], NULL, 10);
	int batch = atoi(argv[4]);
	double seconds = atof(argv[5]);
	size_t block = payload / N_DATA, out_len = ec ? N_RDNC * block : payload + 16;
	uint8_t *mem;
	uint8_t key[32] = {1, 2, 3}, iv[12] = {4, 5, 6};
	unsigned long long measured;
	double elapsed, cpu;

	if (batch < 1 || batch > MAX_BATCH || payload == 0 || (ec && block % 64 != 0))
		return 2;
	mem = aligned_alloc(64, ((size_t)batch * (payload + out_len) + 63) / 64 * 64);
	for (size_t i = 0; i < (size_t)batch * (payload + out_len); i++)
		mem[i] = (uint8_t)(i * 131 + 7);
	if (!device) {
		unsigned long long ops = 0;
		struct cell_clock clock;
		uint8_t coef[N_DATA * N_RDNC];
		struct evp e = {0};
		void *ctx = NULL;
		int n;

		gf_init();
		/* DOCA's Cauchy matrix, as the device task uses: 1 / (i ^ (j + N)) */
		for (size_t i = 0; i < N_DATA; i++)
			for (size_t j = 0; j < N_RDNC; j++)
				for (unsigned v = 1; v < 256; v++)
					if (gf[i ^ (j + N_DATA)][v] == 1)
						coef[i * N_RDNC + j] = (uint8_t)v;
		if (!ec) {
			load_evp(&e);
			ctx = e.ctx_new();
			/* the key set up once, as a program encrypting many messages under one key does (and the device
			 * does between tasks under the same key): each message then only sets its IV */
			if (ctx == NULL || e.init(ctx, e.aes_256_gcm(), NULL, key, NULL) != 1)
				return 1;
		}
		cell_begin(&clock, seconds);
		do {
			for (int k = 0; k < batch; k++) {
				uint8_t *src = mem + (size_t)k * payload, *dst = mem + (size_t)batch * payload + (size_t)k * out_len;

				if (ec)
					ec_direct(src, dst, block, coef);
				else if (e.init(ctx, NULL, NULL, NULL, iv) != 1 || e.update(ctx, dst, &n, src, (int)payload) != 1 ||
					 e.final(ctx, dst + payload, &n) != 1 || e.ctrl(ctx, 0x10, 16, dst + payload) != 1)
					return 1;
			}
			ops += (unsigned long long)batch;
		} while (cell_tick(&clock, ops));
		cell_end(&clock, ops, &measured, &elapsed, &cpu);
		printf("bytes=%llu seconds=%.6f ops=%llu cpu=%.6f\n", measured * payload, elapsed, measured, cpu);
		return 0;
	}

	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_ctx *ctx;
	struct doca_ec *ecx = NULL;
	struct doca_ec_matrix *matrix = NULL;
	struct doca_aes_gcm *aes = NULL;
	struct doca_aes_gcm_key *akey = NULL;
	struct run r = {0};
	union doca_data ud = {.ptr = &r};

	dev = open_first_dev();
	OK(doca_pe_create(&r.pe));
	mmap = started_mmap(dev, mem, (size_t)batch * (payload + out_len), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	OK(doca_buf_inventory_create(2 * (size_t)batch, &inv));
	OK(doca_buf_inventory_start(inv));
	for (int k = 0; k < batch; k++) {
		uint8_t *src = mem + (size_t)k * payload, *dst = mem + (size_t)batch * payload + (size_t)k * out_len;

		OK(doca_buf_inventory_buf_get_by_args(inv, mmap, src, payload, src, payload, &r.src[k]));
		OK(doca_buf_inventory_buf_get_by_args(inv, mmap, dst, out_len, dst, 0, &r.dst[k]));
	}
	if (ec) {
		OK(doca_ec_create(dev, &ecx));
		ctx = doca_ec_as_ctx(ecx);
		OK(doca_ec_task_create_set_conf(ecx, ec_cb, ec_cb, (uint32_t)batch));
	} else {
		OK(doca_aes_gcm_create(dev, &aes));
		ctx = doca_aes_gcm_as_ctx(aes);
		OK(doca_aes_gcm_task_encrypt_set_conf(aes, aes_cb, aes_cb, (uint32_t)batch));
	}
	OK(doca_pe_connect_ctx(r.pe, ctx));
	OK(doca_ctx_set_user_data(ctx, ud));
	OK(doca_ctx_start(ctx));
	if (ec)
		OK(doca_ec_matrix_create(ecx, DOCA_EC_MATRIX_TYPE_CAUCHY, N_DATA, N_RDNC, &matrix));
	else
		OK(doca_aes_gcm_key_create(aes, key, DOCA_AES_GCM_KEY_256, &akey));
	cell_begin(&r.clock, seconds);
	for (int k = 0; k < batch; k++) {
		struct doca_task *task;

		if (ec) {
			struct doca_ec_task_create *t;

			OK(doca_ec_task_create_allocate_init(ecx, matrix, r.src[k], r.dst[k], ud, &t));
			task = doca_ec_task_create_as_task(t);
		} else {
			struct doca_aes_gcm_task_encrypt *t;

			OK(doca_aes_gcm_task_encrypt_alloc_init(aes, r.src[k], r.dst[k], akey, iv, 12, 16, 0, ud, &t));
			task = doca_aes_gcm_task_encrypt_as_task(t);
		}
		OK(doca_task_submit(task));
	}
	while (r.done < batch)
		doca_pe_progress(r.pe);
	cell_end(&r.clock, r.ops, &measured, &elapsed, &cpu);
	printf("bytes=%llu seconds=%.6f ops=%llu cpu=%.6f\n", measured * payload, elapsed, measured, cpu);
	if (r.failed)
		return 1;
	OK(doca_ctx_stop(ctx));
	if (ec) {
		OK(doca_ec_matrix_destroy(matrix));
		OK(doca_ec_destroy(ecx));
	} else {
		OK(doca_aes_gcm_key_destroy(akey));
		OK(doca_aes_gcm_destroy(aes));
	}
	for (int k = 0; k < batch; k++) {
		doca_buf_dec_refcount(r.src[k], NULL);
		doca_buf_dec_refcount(r.dst[k], NULL);
	}
	OK(doca_buf_inventory_destroy(inv));
	OK(doca_mmap_destroy(mmap));
	OK(doca_pe_destroy(r.pe));
	OK(doca_dev_close(dev));
	free(mem);
	return 0;
}
