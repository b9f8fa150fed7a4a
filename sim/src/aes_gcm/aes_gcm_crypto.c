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

struct evp_cipher_ctx; /* OpenSSL's EVP_CIPHER_CTX */
struct evp_cipher;

/*
 * One context's cipher state: OpenSSL's context and what it was last set up with. A task under the same key and
 * direction as the one before only sets its IV (EVP_*Init_ex with no cipher and no key): the key schedule, GHASH's
 * table and the provider's context are kept instead of being rebuilt per task (a third of a 4 KiB encryption).
 */
struct sim_crypto_ctx {
	struct evp_cipher_ctx *evp;
	/* 0: nothing usable set up (fresh, or the last task failed), 1: encrypt, 2: decrypt (OpenSSL also switches the
	 * direction on an IV-only set-up; a change of direction still sets everything up, which costs little) */
	int mode;
	size_t key_len;
	uint8_t key[32];
};

static struct {
	struct evp_cipher_ctx *(*ctx_new)(void);
	void (*ctx_free)(struct evp_cipher_ctx *);
	const struct evp_cipher *(*aes_128_gcm)(void);
	const struct evp_cipher *(*aes_256_gcm)(void);
	int (*encrypt_init)(struct evp_cipher_ctx *, const struct evp_cipher *, void *, const uint8_t *,
			    const uint8_t *);
	int (*decrypt_init)(struct evp_cipher_ctx *, const struct evp_cipher *, void *, const uint8_t *,
			    const uint8_t *);
	int (*encrypt_update)(struct evp_cipher_ctx *, uint8_t *, int *, const uint8_t *, int);
	int (*decrypt_update)(struct evp_cipher_ctx *, uint8_t *, int *, const uint8_t *, int);
	int (*encrypt_final)(struct evp_cipher_ctx *, uint8_t *, int *);
	int (*decrypt_final)(struct evp_cipher_ctx *, uint8_t *, int *);
	int (*ctrl)(struct evp_cipher_ctx *, int, int, void *);
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
	struct sim_crypto_ctx *ctx;

	if (sim_crypto_unavailable() != NULL)
		return NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return NULL;
	ctx->evp = evp.ctx_new();
	if (ctx->evp == NULL) {
		free(ctx);
		return NULL;
	}
	return ctx;
}

void sim_crypto_ctx_free(struct sim_crypto_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (loaded)
		evp.ctx_free(ctx->evp); /* OpenSSL cleanses the key schedule */
	memset(ctx->key, 0, sizeof(ctx->key));
	free(ctx);
}

/* Sets the context up for one message: the whole cipher and key when they changed, else only the new IV */
static bool begin(struct sim_crypto_ctx *ctx, bool encrypt, const uint8_t *key, size_t key_len, const uint8_t iv[12])
{
	int (*init)(struct evp_cipher_ctx *, const struct evp_cipher *, void *, const uint8_t *, const uint8_t *) =
		encrypt ? evp.encrypt_init : evp.decrypt_init;
	int mode = encrypt ? 1 : 2;

	if (ctx->mode == mode && ctx->key_len == key_len && memcmp(ctx->key, key, key_len) == 0)
		return init(ctx->evp, NULL, NULL, NULL, iv) == 1;
	ctx->mode = 0;
	if (init(ctx->evp, key_len == 16 ? evp.aes_128_gcm() : evp.aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    evp.ctrl(ctx->evp, CTRL_AEAD_SET_IVLEN, 12, NULL) != 1 || init(ctx->evp, NULL, NULL, key, iv) != 1)
		return false;
	ctx->mode = mode;
	ctx->key_len = key_len;
	memcpy(ctx->key, key, key_len);
	return true;
}

bool sim_crypto_gcm(struct sim_crypto_ctx *ctx, bool encrypt, const uint8_t *key, size_t key_len,
		    const uint8_t iv[12], const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    uint8_t *out, uint8_t *tag, size_t tag_len)
{
	int n = 0;
	uint8_t scratch[16];
	bool ok;

	if (ctx == NULL || key_len > sizeof(ctx->key))
		return false;
	if (!begin(ctx, encrypt, key, key_len, iv))
		return false;
	if (encrypt) {
		ok = (aad_len == 0 || evp.encrypt_update(ctx->evp, NULL, &n, aad, (int)aad_len) == 1) &&
		     (len == 0 || evp.encrypt_update(ctx->evp, out, &n, in, (int)len) == 1) &&
		     evp.encrypt_final(ctx->evp, scratch, &n) == 1 &&
		     evp.ctrl(ctx->evp, CTRL_AEAD_GET_TAG, (int)tag_len, tag) == 1;
	} else {
		ok = (aad_len == 0 || evp.decrypt_update(ctx->evp, NULL, &n, aad, (int)aad_len) == 1) &&
		     (len == 0 || evp.decrypt_update(ctx->evp, out, &n, in, (int)len) == 1) &&
		     evp.ctrl(ctx->evp, CTRL_AEAD_SET_TAG, (int)tag_len, tag) == 1 &&
		     evp.decrypt_final(ctx->evp, scratch, &n) == 1;
	}
	if (!ok)
		ctx->mode = 0; /* a failed message (a tag that does not verify) sets the next one up from scratch */
	return ok;
}
