/*
 * DOCA AES-GCM (libdoca_aes_gcm): prototypes, enum values and types as DOCA 3.x's public doca_aes_gcm.h declares
 * them, with our own comments. The buffer layout the software device uses (sim/README.md, "AES-GCM"):
 *   encrypt: source = AAD (aad_size bytes) then plaintext; destination receives AAD, ciphertext, tag (tag_size bytes)
 *   decrypt: source = AAD, ciphertext, tag;                 destination receives AAD, plaintext
 * appended after the data the destination already holds. A decrypt whose tag does not verify fails and leaves the
 * destination untouched.
 */
#ifndef DOCA_AES_GCM_H_
#define DOCA_AES_GCM_H_

#include <inttypes.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The context ---- */
struct doca_aes_gcm;

/* create, destroy (IN_USE while keys of it are alive; BAD_STATE unless idle), as_ctx */
DOCA_SIM_CTX_DECL(DOCA_EXPERIMENTAL, aes_gcm)
/* The sum of the encrypt and decrypt task counts may not exceed this */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_get_max_num_tasks(struct doca_aes_gcm *aes_gcm, uint32_t *max_num_tasks);

/* ---- Keys ---- */
struct doca_aes_gcm_key;

enum doca_aes_gcm_key_type {
	DOCA_AES_GCM_KEY_128 = 1, /* 16-byte key */
	DOCA_AES_GCM_KEY_256 = 2, /* 32-byte key */
};

DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_key_create(struct doca_aes_gcm *aes_gcm,
				     const void *raw_key,
				     enum doca_aes_gcm_key_type raw_key_type,
				     struct doca_aes_gcm_key **key);
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_key_destroy(struct doca_aes_gcm_key *key);

/*
 * Encrypt and decrypt have the same functions: one macro declares them for a kind, expanding to DOCA's own
 * prototypes (iv_length: 0 to 12 bytes; tag_size: 12 or 16 bytes)
 */
#define DOCA_SIM_AES_GCM_TASK_DECL(kind) \
	struct doca_aes_gcm_task_##kind; \
	typedef void (*doca_aes_gcm_task_##kind##_completion_cb_t)(struct doca_aes_gcm_task_##kind *task, \
								  union doca_data task_user_data, \
								  union doca_data ctx_user_data); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_is_supported(const struct doca_devinfo *devinfo); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_get_max_iv_len(const struct doca_devinfo *devinfo, uint32_t *max_iv_len); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_is_tag_96_supported(const struct doca_devinfo *devinfo); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_is_tag_128_supported(const struct doca_devinfo *devinfo); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_is_key_type_supported(const struct doca_devinfo *devinfo, \
									 enum doca_aes_gcm_key_type key_type); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_get_max_buf_size(const struct doca_devinfo *devinfo, \
								    uint64_t *max_buffer_size); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_cap_task_##kind##_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, \
									     uint32_t *max_list_num_elem); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_task_##kind##_set_conf(struct doca_aes_gcm *aes_gcm, \
							doca_aes_gcm_task_##kind##_completion_cb_t task_completion_cb, \
							doca_aes_gcm_task_##kind##_completion_cb_t task_error_cb, \
							uint32_t num_tasks); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_aes_gcm_task_##kind##_alloc_init(struct doca_aes_gcm *aes_gcm, \
							  struct doca_buf const *src_buff, \
							  struct doca_buf *dst_buff, \
							  struct doca_aes_gcm_key *key, \
							  const uint8_t *iv, \
							  uint32_t iv_length, \
							  uint32_t tag_size, \
							  uint32_t aad_size, \
							  union doca_data user_data, \
							  struct doca_aes_gcm_task_##kind **task); \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_aes_gcm_task_##kind##_as_task(struct doca_aes_gcm_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_aes_gcm_task_##kind##_set_src(struct doca_aes_gcm_task_##kind *task, struct doca_buf const *src_buff); \
	DOCA_EXPERIMENTAL \
	struct doca_buf const *doca_aes_gcm_task_##kind##_get_src(const struct doca_aes_gcm_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_aes_gcm_task_##kind##_set_dst(struct doca_aes_gcm_task_##kind *task, struct doca_buf *dst_buff); \
	DOCA_EXPERIMENTAL \
	struct doca_buf *doca_aes_gcm_task_##kind##_get_dst(const struct doca_aes_gcm_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_aes_gcm_task_##kind##_set_key(struct doca_aes_gcm_task_##kind *task, struct doca_aes_gcm_key *key); \
	DOCA_EXPERIMENTAL \
	struct doca_aes_gcm_key *doca_aes_gcm_task_##kind##_get_key(const struct doca_aes_gcm_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_aes_gcm_task_##kind##_set_iv(struct doca_aes_gcm_task_##kind *task, const uint8_t *iv, uint32_t iv_length); \
	DOCA_EXPERIMENTAL \
	const uint8_t *doca_aes_gcm_task_##kind##_get_iv(const struct doca_aes_gcm_task_##kind *task, uint32_t *iv_length); \
	DOCA_EXPERIMENTAL \
	void doca_aes_gcm_task_##kind##_set_tag_size(struct doca_aes_gcm_task_##kind *task, uint32_t tag_size); \
	DOCA_EXPERIMENTAL \
	uint32_t doca_aes_gcm_task_##kind##_get_tag_size(const struct doca_aes_gcm_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_aes_gcm_task_##kind##_set_aad_size(struct doca_aes_gcm_task_##kind *task, uint32_t aad_size); \
	DOCA_EXPERIMENTAL \
	uint32_t doca_aes_gcm_task_##kind##_get_aad_size(const struct doca_aes_gcm_task_##kind *task);

/* ---- Encrypt ---- */
DOCA_SIM_AES_GCM_TASK_DECL(encrypt)

/* ---- Decrypt ---- */
DOCA_SIM_AES_GCM_TASK_DECL(decrypt)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_AES_GCM_H_ */
