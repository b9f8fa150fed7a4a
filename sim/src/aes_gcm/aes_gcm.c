/*
 * libdoca_aes_gcm: the AES-GCM context, its keys and its encrypt and decrypt tasks, each kind with a pool sized by
 * its _set_conf. Submit only queues; the cipher runs in the context's progress hook (OpenSSL's libcrypto, loaded at
 * run time), so a stop can flush tasks that have not run and every callback comes from doca_pe_progress.
 *
 * Layout (sim/README.md): encrypt reads AAD then plaintext and appends AAD, ciphertext, tag; decrypt reads AAD,
 * ciphertext, tag and appends AAD, plaintext, only once the tag verified (else DOCA_ERROR_AUTHENTICATION and the
 * destination is left as it was). A short IV is padded with zero bytes to 96 bits.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_sim.h>

#include "aes_gcm_internal.h"
#include "accessors.h"

static const char *kind_name(const struct sim_aes_task *t)
{
	return t->decrypt ? "aes_gcm_decrypt" : "aes_gcm_encrypt";
}

static doca_error_t validate(const struct doca_aes_gcm *aes, const struct sim_aes_task *t, size_t *payload)
{
	size_t in_len, fixed, out_len;
	doca_error_t err;

	if (t->key == NULL || t->key->magic != SIM_MAGIC_LIVE || t->key->owner != aes)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: no live key of this context", kind_name(t));
	if (t->tag_size != 12 && t->tag_size != 16)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: tag size %u (12 or 16)", kind_name(t), t->tag_size);
	if (t->iv_len > SIM_AES_GCM_MAX_IV_LEN)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: IV of %u bytes (12 at most)", kind_name(t), t->iv_len);
	err = sim_bufs_check_src_dst(t->src, t->dst, aes->ctx.dev, SIM_AES_GCM_MAX_LIST_LEN);
	if (err != DOCA_SUCCESS)
		return err;
	in_len = sim_bufs_data_len(t->src);
	fixed = (size_t)t->aad_size + (t->decrypt ? t->tag_size : 0);
	if (in_len < fixed)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %zu source bytes, fewer than the AAD%s (%zu)", kind_name(t),
				in_len, t->decrypt ? " and tag" : "", fixed);
	if (in_len > SIM_AES_GCM_MAX_BUF_SIZE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %zu source bytes exceed %u", kind_name(t), in_len,
				SIM_AES_GCM_MAX_BUF_SIZE);
	out_len = t->decrypt ? in_len - t->tag_size : in_len + t->tag_size;
	if (sim_bufs_tail_room(t->dst) < out_len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %zu output bytes do not fit the destination",
				kind_name(t), out_len);
	if (payload != NULL)
		*payload = in_len - fixed;
	return DOCA_SUCCESS;
}

static doca_error_t execute(struct doca_aes_gcm *aes, const struct sim_aes_task *t)
{
	size_t payload = 0, in_len, out_len;
	uint8_t iv[12] = {0};
	uint8_t *copy = NULL, *out, *direct;
	const uint8_t *in;
	doca_error_t err = validate(aes, t, &payload);

	if (err != DOCA_SUCCESS)
		return err;
	if (sim_crypto_unavailable() != NULL)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s", sim_crypto_unavailable());
	if (aes->crypto == NULL && (aes->crypto = sim_crypto_ctx_new()) == NULL)
		return DOCA_ERROR_NO_MEMORY;
	in_len = sim_bufs_data_len(t->src);
	in = sim_bufs_direct(t->src);
	if (in == NULL) {
		copy = malloc(in_len > 0 ? in_len : 1);
		if (copy == NULL)
			return DOCA_ERROR_NO_MEMORY;
		err = sim_bufs_read(t->src, copy, in_len);
		if (err != DOCA_SUCCESS) {
			free(copy);
			return err;
		}
		in = copy;
	}
	out_len = t->decrypt ? in_len - t->tag_size : in_len + t->tag_size;
	/* An encryption writes straight into a local destination's free tail when it does not overlap the source: the
	 * staging copy and its wipe cost a third of a 64 KiB task. A decryption always stages (what a failed one
	 * computed must never reach the destination). */
	direct = t->decrypt ? NULL : sim_bufs_direct_tail(t->dst, out_len);
	if (direct != NULL && direct < in + in_len && in < direct + out_len)
		direct = NULL;
	out = direct != NULL ? direct : malloc(out_len > 0 ? out_len : 1);
	if (out == NULL) {
		free(copy);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(iv, t->iv, t->iv_len);
	memcpy(out, in, t->aad_size);
	if (!sim_crypto_gcm(aes->crypto, !t->decrypt, t->key->bytes, t->key->len, iv, in, t->aad_size,
			    in + t->aad_size, payload, out + t->aad_size,
			    t->decrypt ? (uint8_t *)(in + t->aad_size + payload) : out + t->aad_size + payload,
			    t->tag_size))
		err = t->decrypt ? sim_fail(DOCA_ERROR_AUTHENTICATION, "aes_gcm_decrypt: the tag does not verify")
				 : sim_fail(DOCA_ERROR_DRIVER, "aes_gcm_encrypt: libcrypto failed");
	else if (direct != NULL)
		t->dst->data_len += out_len;
	else
		err = sim_bufs_append(t->dst, out, out_len);
	if (direct == NULL) {
		/* what a failed decrypt computed never leaves this function */
		memset(out, 0, out_len);
		free(out);
	} else if (err != DOCA_SUCCESS) {
		memset(direct, 0, out_len); /* a failed encryption leaves nothing half-written behind the data */
	}
	free(copy);
	return err;
}

static doca_error_t task_validate(const struct doca_task *task)
{
	return validate((const struct doca_aes_gcm *)task->ctx, (const struct sim_aes_task *)task, NULL);
}

static doca_error_t task_execute(struct doca_task *task)
{
	return execute((struct doca_aes_gcm *)task->ctx, (const struct sim_aes_task *)task);
}

#define AES_KIND(name) \
	{ \
		SIM_POOL_KIND_FIELDS(name, struct sim_aes_task), \
		.validate = task_validate, .execute = task_execute, \
	}

/* 0 encrypt, 1 decrypt, as the context's pools */
static const struct sim_task_kind task_kinds[2] = {AES_KIND("aes_gcm_encrypt"), AES_KIND("aes_gcm_decrypt")};
static const struct sim_task_kind *const kinds[2] = {&task_kinds[0], &task_kinds[1]};

static doca_error_t aes_start(struct doca_ctx *ctx)
{
	struct doca_aes_gcm *aes = (struct doca_aes_gcm *)ctx;

	if (sim_crypto_unavailable() != NULL)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s", sim_crypto_unavailable());
	if (!sim_pools_configured(aes->pools, 2))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "aes_gcm: no task kind was configured");
	return DOCA_SUCCESS;
}

static const struct sim_ctx_ops aes_ctx_ops = SIM_POOLED_CTX_OPS("aes_gcm", aes_start);

const char *doca_sim_aes_gcm_status(void)
{
	return sim_crypto_unavailable();
}

doca_error_t doca_aes_gcm_create(struct doca_dev *dev, struct doca_aes_gcm **aes_gcm)
{
	if (dev == NULL || aes_gcm == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (sim_crypto_unavailable() != NULL)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s", sim_crypto_unavailable());
	return sim_pooled_create(dev, sizeof(**aes_gcm), &aes_ctx_ops, (void **)aes_gcm);
}

doca_error_t doca_aes_gcm_destroy(struct doca_aes_gcm *aes_gcm)
{
	struct sim_crypto_ctx *crypto;
	doca_error_t err;

	SIM_RETURN_IF_NULL_OR_DEAD(aes_gcm, ctx.magic, "aes_gcm");
	if (aes_gcm->live_keys > 0)
		return sim_fail(DOCA_ERROR_IN_USE, "%s: %zu keys are not destroyed", __func__, aes_gcm->live_keys);
	crypto = aes_gcm->crypto; /* read first: a successful destroy frees the object */
	err = sim_pooled_destroy((struct doca_ctx *)aes_gcm, "aes_gcm", aes_gcm->pools, kinds, 2, DOCA_ERROR_BAD_STATE,
				 __func__);
	if (err == DOCA_SUCCESS)
		sim_crypto_ctx_free(crypto);
	return err;
}

SIM_VALUE_GETTER(struct doca_ctx *, doca_aes_gcm_as_ctx, struct doca_aes_gcm, aes_gcm, NULL, &aes_gcm->ctx)

SIM_GETTER(doca_aes_gcm_cap_get_max_num_tasks, struct doca_aes_gcm, aes_gcm, uint32_t, max_num_tasks,
	SIM_AES_GCM_MAX_NUM_TASKS)

doca_error_t doca_aes_gcm_key_create(struct doca_aes_gcm *aes_gcm, const void *raw_key,
				     enum doca_aes_gcm_key_type raw_key_type, struct doca_aes_gcm_key **key)
{
	struct doca_aes_gcm_key *k;

	if (aes_gcm == NULL || raw_key == NULL || key == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(aes_gcm, ctx.magic, "aes_gcm", DOCA_ERROR_INVALID_VALUE);
	if (raw_key_type != DOCA_AES_GCM_KEY_128 && raw_key_type != DOCA_AES_GCM_KEY_256)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: unknown key type %d", __func__, (int)raw_key_type);
	if (sim_crypto_unavailable() != NULL)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s", sim_crypto_unavailable());
	SIM_NEW_HANDLE_OR_RETURN(k);
	k->owner = aes_gcm;
	k->type = raw_key_type;
	k->len = raw_key_type == DOCA_AES_GCM_KEY_128 ? 16 : 32;
	memcpy(k->bytes, raw_key, k->len);
	aes_gcm->live_keys++;
	sim_live_inc(SIM_KIND_ACCEL_HANDLE);
	*key = k;
	return DOCA_SUCCESS;
}

doca_error_t doca_aes_gcm_key_destroy(struct doca_aes_gcm_key *key)
{
	SIM_RETURN_IF_NULL_OR_DEAD(key, magic, "aes_gcm_key");
	key->owner->live_keys--;
	sim_live_dec(SIM_KIND_ACCEL_HANDLE);
	memset(key->bytes, 0, sizeof(key->bytes));
	sim_release(key, &key->magic);
	return DOCA_SUCCESS;
}

static doca_error_t cap_check(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return sim_crypto_unavailable() == NULL ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t set_conf(struct doca_aes_gcm *aes, int which, sim_task_cb_t ok, sim_task_cb_t fail,
			     uint32_t num_tasks, const char *func)
{
	if (aes == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: no context", func);
	SIM_RETURN_IF_DEAD(aes, ctx.magic, "aes_gcm", DOCA_ERROR_INVALID_VALUE);
	if ((uint64_t)num_tasks + aes->pools[1 - which].num_tasks > SIM_AES_GCM_MAX_NUM_TASKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: more than %u tasks in all", func,
				SIM_AES_GCM_MAX_NUM_TASKS);
	return sim_pool_conf(&aes->pools[which], &aes->ctx, kinds[which], ok, fail, num_tasks, func);
}

static void set_iv(struct sim_aes_task *t, const uint8_t *iv, uint32_t iv_length)
{
	/* kept by value; an IV longer than 12 bytes is remembered as too long and fails the task */
	memset(t->iv, 0, sizeof(t->iv));
	if (iv != NULL)
		memcpy(t->iv, iv, iv_length < sizeof(t->iv) ? iv_length : sizeof(t->iv));
	t->iv_len = iv == NULL ? 0 : iv_length;
}

static doca_error_t alloc_init(struct doca_aes_gcm *aes, int which, const struct doca_buf *src, struct doca_buf *dst,
			       struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t iv_length, uint32_t tag_size,
			       uint32_t aad_size, union doca_data user_data, struct sim_aes_task **task,
			       const char *func)
{
	struct sim_aes_task *t;
	doca_error_t err;

	if (aes == NULL || task == NULL || (iv == NULL && iv_length > 0))
		return DOCA_ERROR_INVALID_VALUE;
	if (iv_length > SIM_AES_GCM_MAX_IV_LEN || (tag_size != 12 && tag_size != 16))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: IV of %u bytes (12 at most), tag of %u (12 or 16)", func,
				iv_length, tag_size);
	err = sim_pool_alloc_live(&aes->pools[which], &aes->ctx, "aes_gcm", kinds[which], src, dst, user_data,
				  (struct doca_task **)&t, func);
	if (err != DOCA_SUCCESS)
		return err;
	t->decrypt = which == 1;
	t->key = key;
	set_iv(t, iv, iv_length);
	t->tag_size = tag_size;
	t->aad_size = aad_size;
	*task = t;
	return DOCA_SUCCESS;
}

/* A capability that holds while the crypto library is loaded (cap_check) */
#define AES_CAP_CHECK(fn) \
	doca_error_t fn(const struct doca_devinfo *devinfo) \
	{ \
		return cap_check(devinfo); \
	}

/* A capability's value, reported while the crypto library is loaded: sim_cap_u32 or sim_cap_u64 (`cap`) of `value` */
#define AES_CAP_VALUE(fn, type, cap, value) \
	doca_error_t fn(const struct doca_devinfo *devinfo, type *out) \
	{ \
		return cap(devinfo, sim_crypto_unavailable() == NULL, value, out); \
	}

#define AES_TASK_API(name, WHICH) \
	AES_CAP_CHECK(doca_aes_gcm_cap_task_##name##_is_supported) \
	AES_CAP_VALUE(doca_aes_gcm_cap_task_##name##_get_max_iv_len, uint32_t, sim_cap_u32, SIM_AES_GCM_MAX_IV_LEN) \
	AES_CAP_CHECK(doca_aes_gcm_cap_task_##name##_is_tag_96_supported) \
	AES_CAP_CHECK(doca_aes_gcm_cap_task_##name##_is_tag_128_supported) \
	doca_error_t doca_aes_gcm_cap_task_##name##_is_key_type_supported(const struct doca_devinfo *devinfo, \
									  enum doca_aes_gcm_key_type key_type) \
	{ \
		if (key_type != DOCA_AES_GCM_KEY_128 && key_type != DOCA_AES_GCM_KEY_256) \
			return DOCA_ERROR_INVALID_VALUE; \
		return cap_check(devinfo); \
	} \
	AES_CAP_VALUE(doca_aes_gcm_cap_task_##name##_get_max_buf_size, uint64_t, sim_cap_u64, \
		      SIM_AES_GCM_MAX_BUF_SIZE) \
	AES_CAP_VALUE(doca_aes_gcm_cap_task_##name##_get_max_list_buf_num_elem, uint32_t, sim_cap_u32, \
		      SIM_AES_GCM_MAX_LIST_LEN) \
	SIM_POOLED_SET_CONF(aes_gcm, name, WHICH, uint32_t, num_tasks) \
	doca_error_t doca_aes_gcm_task_##name##_alloc_init( \
		struct doca_aes_gcm *aes_gcm, struct doca_buf const *src_buff, struct doca_buf *dst_buff, \
		struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t iv_length, uint32_t tag_size, \
		uint32_t aad_size, union doca_data user_data, struct doca_aes_gcm_task_##name **task) \
	{ \
		return alloc_init(aes_gcm, WHICH, src_buff, dst_buff, key, iv, iv_length, tag_size, aad_size, \
				  user_data, (struct sim_aes_task **)task, __func__); \
	} \
	SIM_VALUE_GETTER(struct doca_task *, doca_aes_gcm_task_##name##_as_task, struct doca_aes_gcm_task_##name, \
		task, NULL, &task->t.task) \
	SIM_VALUE_SETTER(doca_aes_gcm_task_##name##_set_src, struct doca_aes_gcm_task_##name, task, \
		struct doca_buf const *, src, task->t.src) \
	SIM_VALUE_GETTER(struct doca_buf const *, doca_aes_gcm_task_##name##_get_src, \
		const struct doca_aes_gcm_task_##name, task, NULL, task->t.src) \
	SIM_VALUE_SETTER(doca_aes_gcm_task_##name##_set_dst, struct doca_aes_gcm_task_##name, task, struct doca_buf *, \
		dst, task->t.dst) \
	SIM_VALUE_GETTER(struct doca_buf *, doca_aes_gcm_task_##name##_get_dst, const struct doca_aes_gcm_task_##name, \
		task, NULL, task->t.dst) \
	SIM_VALUE_SETTER(doca_aes_gcm_task_##name##_set_key, struct doca_aes_gcm_task_##name, task, \
		struct doca_aes_gcm_key *, key, task->t.key) \
	SIM_VALUE_GETTER(struct doca_aes_gcm_key *, doca_aes_gcm_task_##name##_get_key, \
		const struct doca_aes_gcm_task_##name, task, NULL, task->t.key) \
	void doca_aes_gcm_task_##name##_set_iv(struct doca_aes_gcm_task_##name *task, const uint8_t *iv, \
					       uint32_t iv_length) \
	{ \
		if (task != NULL) \
			set_iv(&task->t, iv, iv_length); \
	} \
	const uint8_t *doca_aes_gcm_task_##name##_get_iv(const struct doca_aes_gcm_task_##name *task, \
							 uint32_t *iv_length) \
	{ \
		if (task == NULL) \
			return NULL; \
		if (iv_length != NULL) \
			*iv_length = task->t.iv_len; \
		return task->t.iv; \
	} \
	SIM_VALUE_SETTER(doca_aes_gcm_task_##name##_set_tag_size, struct doca_aes_gcm_task_##name, task, uint32_t, \
		tag_size, task->t.tag_size) \
	SIM_VALUE_GETTER(uint32_t, doca_aes_gcm_task_##name##_get_tag_size, const struct doca_aes_gcm_task_##name, \
		task, 0, task->t.tag_size) \
	SIM_VALUE_SETTER(doca_aes_gcm_task_##name##_set_aad_size, struct doca_aes_gcm_task_##name, task, uint32_t, \
		aad_size, task->t.aad_size) \
	SIM_VALUE_GETTER(uint32_t, doca_aes_gcm_task_##name##_get_aad_size, const struct doca_aes_gcm_task_##name, \
		task, 0, task->t.aad_size)

AES_TASK_API(encrypt, 0)
AES_TASK_API(decrypt, 1)
