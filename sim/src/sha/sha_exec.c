/*
 * Running SHA tasks with libcrypto.so.3 (Debian libssl3), loaded at first use: EVP digests, one EVP_MD_CTX per
 * partial session. A hash task appends the digest to its destination; a partial part feeds the session and only the
 * final part appends the digest. Non-final parts must be whole blocks (DOCA leaves others undefined: here they fail).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_lib.h"
#include "sha_internal.h"

struct crypto_fns {
	void *(*md_ctx_new)(void);
	void (*md_ctx_free)(void *ctx);
	const void *(*sha1)(void);
	const void *(*sha256)(void);
	const void *(*sha512)(void);
	int (*init)(void *ctx, const void *md, void *engine);
	int (*update)(void *ctx, const void *data, size_t len);
	int (*final)(void *ctx, unsigned char *md, unsigned int *len);
};

static struct crypto_fns crypto;
static bool crypto_ok;
static char missing[160];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const struct sim_backend_symbol crypto_symbols[] = {
	{&crypto.md_ctx_new, "EVP_MD_CTX_new"},
	{&crypto.md_ctx_free, "EVP_MD_CTX_free"},
	{&crypto.sha1, "EVP_sha1"},
	{&crypto.sha256, "EVP_sha256"},
	{&crypto.sha512, "EVP_sha512"},
	{&crypto.init, "EVP_DigestInit_ex"},
	{&crypto.update, "EVP_DigestUpdate"},
	{&crypto.final, "EVP_DigestFinal_ex"},
};

static void load(void)
{
	void *h = sim_backend_open("libcrypto.so.3", "crypto");

	if (h == NULL) {
		snprintf(missing, sizeof(missing), "libcrypto.so.3 not loaded (Debian package libssl3): SHA not supported");
		sim_log(SIM_LOG_DEBUG, "sha: %s", missing);
		return;
	}
	crypto_ok = sim_backend_resolve(h, crypto_symbols, sizeof(crypto_symbols) / sizeof(crypto_symbols[0]));
	if (!crypto_ok)
		snprintf(missing, sizeof(missing), "libcrypto.so.3 lacks an EVP digest function (Debian package libssl3)");
}

bool sim_sha_available(void)
{
	pthread_once(&once, load);
	return crypto_ok;
}

const char *doca_sim_sha_backend_missing(void)
{
	pthread_once(&once, load);
	return missing[0] != '\0' ? missing : NULL;
}

bool sim_sha_sizes(enum doca_sha_algorithm algorithm, uint32_t *digest, uint32_t *block)
{
	switch (algorithm) {
	case DOCA_SHA_ALGORITHM_SHA1:
		*digest = 20;
		*block = 64;
		return true;
	case DOCA_SHA_ALGORITHM_SHA256:
		*digest = 32;
		*block = 64;
		return true;
	case DOCA_SHA_ALGORITHM_SHA512:
		*digest = 64;
		*block = 128;
		return true;
	default:
		return false;
	}
}

static const void *md_of(enum doca_sha_algorithm algorithm)
{
	return algorithm == DOCA_SHA_ALGORITHM_SHA1 ? crypto.sha1() :
	       algorithm == DOCA_SHA_ALGORITHM_SHA256 ? crypto.sha256() : crypto.sha512();
}

doca_error_t sim_sha_validate(const struct sim_sha_task *t)
{
	const struct doca_buf *src = t->src;
	const struct doca_buf *dst = t->dst;
	uint32_t digest, block;

	if (!sim_sha_sizes(t->algorithm, &digest, &block))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: unknown algorithm %d", (int)t->algorithm);
	if (src == NULL || dst == NULL || src->mmap == NULL || dst->mmap == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: missing or released buffer");
	if (t->kind == SIM_SHA_PARTIAL) {
		if (t->broken)
			return sim_fail(DOCA_ERROR_BAD_STATE, "sha partial: an earlier part failed; reset the task");
		if (t->has_result)
			return sim_fail(DOCA_ERROR_BAD_STATE, "sha partial: session finished; reset the task first");
		if (!t->is_final && src->data_len % block != 0)
			return sim_fail(DOCA_ERROR_INVALID_VALUE,
					"sha partial: a non-final part of %zu bytes is not a multiple of %u",
					src->data_len, block);
	}
	if (src->list_len != 1 || dst->list_len != 1)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: buffer lists are not supported (max list length 1)");
	if (!sim_buf_data_fits(src, src->data, src->data_len) || !sim_buf_data_fits(dst, dst->data, dst->data_len))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: data outside its buffer");
	if (src->mmap->from_export || dst->mmap->from_export)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "sha: memory of another process (local memory only)");
	if (!(dst->mmap->permissions & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE))
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "sha: destination is read-only");
	if (src->data_len > SIM_SHA_MAX_SRC_BUF_SIZE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: %zu source bytes exceed the max", src->data_len);
	if (sim_buf_tail_room(dst) < digest)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "sha: destination has %zu bytes free, the digest needs %u",
				sim_buf_tail_room(dst), digest);
	if (!sim_sha_available())
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "sha: %s", missing);
	return DOCA_SUCCESS;
}

void sim_sha_session_free(struct sim_sha_task *t)
{
	if (t->md_ctx != NULL)
		crypto.md_ctx_free(t->md_ctx);
	t->md_ctx = NULL;
	t->started = false;
	t->is_final = false;
	t->has_result = false;
	t->broken = false;
}

doca_error_t sim_sha_execute(struct sim_sha_task *t)
{
	struct doca_buf *dst = t->dst;
	unsigned char *out = (unsigned char *)dst->data + dst->data_len;
	unsigned int len = 0;
	bool whole = t->kind == SIM_SHA_HASH;
	void *ctx = whole ? NULL : t->md_ctx;
	bool ok;

	if (ctx == NULL) {
		ctx = crypto.md_ctx_new();
		if (ctx == NULL || crypto.init(ctx, md_of(t->algorithm), NULL) != 1) {
			if (ctx != NULL)
				crypto.md_ctx_free(ctx);
			if (!whole)
				t->broken = true;
			return sim_fail(DOCA_ERROR_NO_MEMORY, "sha: EVP digest setup failed");
		}
		if (!whole)
			t->md_ctx = ctx;
	}
	ok = crypto.update(ctx, t->src->data, t->src->data_len) == 1;
	if (ok && (whole || t->is_final)) {
		ok = crypto.final(ctx, out, &len) == 1;
		if (ok)
			dst->data_len += len;
	}
	if (whole) {
		crypto.md_ctx_free(ctx);
	} else if (!ok) {
		t->broken = true;
	} else if (t->is_final) {
		crypto.md_ctx_free(t->md_ctx);
		t->md_ctx = NULL;
		t->has_result = true;
	}
	return ok ? DOCA_SUCCESS : sim_fail(DOCA_ERROR_DRIVER, "sha: libcrypto digest failed");
}
