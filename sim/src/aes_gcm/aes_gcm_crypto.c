/*
 * OpenSSL's libcrypto, loaded with dlopen so the software device builds without libssl-dev and loads without
 * libcrypto: only the few EVP functions AES-GCM needs, declared here (OpenSSL 3's ABI). DOCA_SIM_LIBCRYPTO names
 * another file to load (tests use a missing one to check the NOT_SUPPORTED path).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aes_gcm_internal.h"

/* OpenSSL 3 control codes (include/openssl/evp.h: EVP_CTRL_AEAD_SET_IVLEN, _GET_TAG, _SET_TAG) */
#define CTRL_AEAD_SET_IVLEN 0x9
#define CTRL_AEAD_GET_TAG 0x10
#define CTRL_AEAD_SET_TAG 0x11

struct sim_crypto_ctx;
struct evp_cipher;

static struct {
	struct sim_crypto_ctx *(*ctx_new)(void);
	void (*ctx_free)(struct sim_crypto_ctx *);
	const struct evp_cipher *(*aes_128_gcm)(void);
	const struct evp_cipher *(*aes_256_gcm)(void);
	int (*encrypt_init)(struct sim_crypto_ctx *, const struct evp_cipher *, void *, const uint8_t *,
			    const uint8_t *);
	int (*decrypt_init)(struct sim_crypto_ctx *, const struct evp_cipher *, void *, const uint8_t *,
			    const uint8_t *);
	int (*encrypt_update)(struct sim_crypto_ctx *, uint8_t *, int *, const uint8_t *, int);
	int (*decrypt_update)(struct sim_crypto_ctx *, uint8_t *, int *, const uint8_t *, int);
	int (*encrypt_final)(struct sim_crypto_ctx *, uint8_t *, int *);
	int (*decrypt_final)(struct sim_crypto_ctx *, uint8_t *, int *);
	int (*ctrl)(struct sim_crypto_ctx *, int, int, void *);
} evp;

static char reason[512];
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	const char *path = getenv("DOCA_SIM_LIBCRYPTO");
	void *lib;

	if (path == NULL || path[0] == '\0')
		path = "libcrypto.so.3";
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		snprintf(reason, sizeof(reason),
			 "AES-GCM needs OpenSSL's libcrypto.so.3 (Debian/Ubuntu package libssl3): %s", dlerror());
		return;
	}
#define SYM(field, name) \
	do { \
		void *sym_ = dlsym(lib, name); \
		memcpy(&evp.field, &sym_, sizeof(sym_)); \
		if (sym_ == NULL) { \
			snprintf(reason, sizeof(reason), "AES-GCM: %s lacks %s (OpenSSL 3 expected, package libssl3)", \
				 path, name); \
			return; \
		} \
	} while (0)
	SYM(ctx_new, "EVP_CIPHER_CTX_new");
	SYM(ctx_free, "EVP_CIPHER_CTX_free");
	SYM(aes_128_gcm, "EVP_aes_128_gcm");
	SYM(aes_256_gcm, "EVP_aes_256_gcm");
	SYM(encrypt_init, "EVP_EncryptInit_ex");
	SYM(decrypt_init, "EVP_DecryptInit_ex");
	SYM(encrypt_update, "EVP_EncryptUpdate");
	SYM(decrypt_update, "EVP_DecryptUpdate");
	SYM(encrypt_final, "EVP_EncryptFinal_ex");
	SYM(decrypt_final, "EVP_DecryptFinal_ex");
	SYM(ctrl, "EVP_CIPHER_CTX_ctrl");
#undef SYM
	loaded = true; /* the library stays loaded for the process lifetime */
}

const char *sim_crypto_unavailable(void)
{
	pthread_once(&once, load);
	return loaded ? NULL : reason;
}

struct sim_crypto_ctx *sim_crypto_ctx_new(void)
{
	return sim_crypto_unavailable() == NULL ? evp.ctx_new() : NULL;
}

void sim_crypto_ctx_free(struct sim_crypto_ctx *ctx)
{
	if (ctx != NULL && loaded)
		evp.ctx_free(ctx);
}

bool sim_crypto_gcm(struct sim_crypto_ctx *ctx, bool encrypt, const uint8_t *key, size_t key_len,
		    const uint8_t iv[12], const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    uint8_t *out, uint8_t *tag, size_t tag_len)
{
	const struct evp_cipher *cipher = key_len == 16 ? evp.aes_128_gcm() : evp.aes_256_gcm();
	int n = 0;
	uint8_t scratch[16];

	if (ctx == NULL)
		return false;
	if (encrypt) {
		if (evp.encrypt_init(ctx, cipher, NULL, NULL, NULL) != 1 ||
		    evp.ctrl(ctx, CTRL_AEAD_SET_IVLEN, 12, NULL) != 1 || evp.encrypt_init(ctx, NULL, NULL, key, iv) != 1)
			return false;
		if (aad_len > 0 && evp.encrypt_update(ctx, NULL, &n, aad, (int)aad_len) != 1)
			return false;
		if (len > 0 && evp.encrypt_update(ctx, out, &n, in, (int)len) != 1)
			return false;
		return evp.encrypt_final(ctx, scratch, &n) == 1 &&
		       evp.ctrl(ctx, CTRL_AEAD_GET_TAG, (int)tag_len, tag) == 1;
	}
	if (evp.decrypt_init(ctx, cipher, NULL, NULL, NULL) != 1 || evp.ctrl(ctx, CTRL_AEAD_SET_IVLEN, 12, NULL) != 1 ||
	    evp.decrypt_init(ctx, NULL, NULL, key, iv) != 1)
		return false;
	if (aad_len > 0 && evp.decrypt_update(ctx, NULL, &n, aad, (int)aad_len) != 1)
		return false;
	if (len > 0 && evp.decrypt_update(ctx, out, &n, in, (int)len) != 1)
		return false;
	if (evp.ctrl(ctx, CTRL_AEAD_SET_TAG, (int)tag_len, tag) != 1)
		return false;
	return evp.decrypt_final(ctx, scratch, &n) == 1;
}
