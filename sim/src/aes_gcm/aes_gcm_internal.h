/*
 * Shared between the files of libdoca_aes_gcm: OpenSSL's libcrypto loaded at run time (aes_gcm_crypto.c) and the
 * context, keys and tasks (aes_gcm.c).
 */
#ifndef SIM_AES_GCM_INTERNAL_H_
#define SIM_AES_GCM_INTERNAL_H_

#include <doca_aes_gcm.h>

#include "internal.h"
#include "task_pool.h"

/* Device limits the capability queries answer (DOCA leaves the values to the device) */
#define SIM_AES_GCM_MAX_BUF_SIZE (2u * 1024u * 1024u)
#define SIM_AES_GCM_MAX_LIST_LEN 32u
#define SIM_AES_GCM_MAX_NUM_TASKS 65536u
#define SIM_AES_GCM_MAX_IV_LEN 12u

/* ---- libcrypto (dlopen'ed: the device builds and loads without it; the capability queries then answer
 * NOT_SUPPORTED and doca_sim_aes_gcm_status() says why) ---- */
/* NULL when AES-GCM can run, else a one-line reason */
const char *sim_crypto_unavailable(void);
struct sim_crypto_ctx; /* OpenSSL's EVP_CIPHER_CTX and the key and direction it was last set up with */
struct sim_crypto_ctx *sim_crypto_ctx_new(void);
void sim_crypto_ctx_free(struct sim_crypto_ctx *ctx);
/* AES-GCM of one message with a 12-byte IV: encrypt writes len bytes to out and tag_len bytes to tag; decrypt
 * checks tag and writes len bytes to out (false when the tag does not verify: out is then garbage, never used) */
bool sim_crypto_gcm(struct sim_crypto_ctx *ctx, bool encrypt, const uint8_t *key, size_t key_len,
		    const uint8_t iv[12], const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
		    uint8_t *out, uint8_t *tag, size_t tag_len);

struct doca_aes_gcm_key {
	uint32_t magic;
	struct doca_aes_gcm *owner;
	enum doca_aes_gcm_key_type type;
	uint8_t bytes[32];
	size_t len;
};

struct sim_aes_task {
	struct doca_task task; /* first */
	bool decrypt;
	const struct doca_buf *src;
	struct doca_buf *dst;
	struct doca_aes_gcm_key *key;
	uint8_t iv[SIM_AES_GCM_MAX_IV_LEN];
	uint32_t iv_len;
	uint32_t tag_size;
	uint32_t aad_size;
};

struct doca_aes_gcm_task_encrypt { struct sim_aes_task t; };
struct doca_aes_gcm_task_decrypt { struct sim_aes_task t; };

struct doca_aes_gcm {
	struct doca_ctx ctx; /* first */
	struct sim_task_pool pools[2]; /* 0 encrypt, 1 decrypt (task_pool.c) */
	size_t live_keys;
	struct sim_crypto_ctx *crypto; /* made at the first task, freed with the context */
};

#endif /* SIM_AES_GCM_INTERNAL_H_ */
