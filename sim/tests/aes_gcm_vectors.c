/*
 * AES-GCM on the software device against known answers: test cases 2, 4, 14 and 16 of McGrew and Viega's GCM
 * specification (the vectors NIST's GCM validation and OpenSSL's own tests carry), encrypted through DOCA tasks
 * with the AAD at the start of the source and checked as AAD, ciphertext, tag in the destination; decrypted back;
 * a forged tag, a flipped ciphertext byte or a changed AAD fails with DOCA_ERROR_AUTHENTICATION and leaves the
 * destination untouched; a 96-bit tag is the 128-bit one cut short; mis-sized buffers and bad parameters fail with
 * DOCA errors. `aes_gcm_vectors fuzz N SEED`: random sizes, buffer lists and tampering. `aes_gcm_vectors missing`
 * (with DOCA_SIM_LIBCRYPTO naming no file): every capability answers NOT_SUPPORTED and the status names libssl3.
 */
#include <doca_aes_gcm.h>

#include "accel_test_util.h"

struct vector {
	const char *key, *iv, *pt, *aad, *ct, *tag;
};

static const struct vector vectors[] = {
	{"00000000000000000000000000000000", "000000000000000000000000", "00000000000000000000000000000000", "",
	 "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"},
	{"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
	 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de6"
	 "57ba637b39",
	 "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	 "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac"
	 "973d58e091",
	 "5bc94fbc3221a5db94fae95ae7121a47"},
	{"0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
	 "00000000000000000000000000000000", "", "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
	{"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
	 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de6"
	 "57ba637b39",
	 "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	 "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a"
	 "0abcc9f662",
	 "76fc6ece0f4e1768cddf8853bb2d551b"},
};

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		T_TRUE(sscanf(hex + 2 * i, "%2x", &v) == 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

struct env {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_aes_gcm *aes;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	struct doca_mmap *mmap;
	int done;
	doca_error_t status;
};

#define MEM_LEN (1u << 20)
#define DST_OFF (MEM_LEN / 2)

T_RECORDING_CB(enc_cb, doca_aes_gcm_task_encrypt, doca_aes_gcm_task_encrypt_as_task, struct env)
T_RECORDING_CB(dec_cb, doca_aes_gcm_task_decrypt, doca_aes_gcm_task_decrypt_as_task, struct env)

static void env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->dev = t_open_first_dev();
	T_OK(doca_aes_gcm_cap_task_encrypt_is_supported(doca_dev_as_devinfo(e->dev)));
	T_OK(doca_aes_gcm_cap_task_decrypt_is_tag_96_supported(doca_dev_as_devinfo(e->dev)));
	T_OK(doca_pe_create(&e->pe));
	T_OK(doca_aes_gcm_create(e->dev, &e->aes));
	T_OK(doca_pe_connect_ctx(e->pe, doca_aes_gcm_as_ctx(e->aes)));
	T_OK(doca_aes_gcm_task_encrypt_set_conf(e->aes, enc_cb, enc_cb, 8));
	T_OK(doca_aes_gcm_task_decrypt_set_conf(e->aes, dec_cb, dec_cb, 8));
	T_OK(doca_ctx_start(doca_aes_gcm_as_ctx(e->aes)));
	e->mem = t_local_area(e->dev, MEM_LEN, 64, 128, &e->mmap, &e->inv);
}

static void env_close(struct env *e)
{
	T_OK(doca_ctx_stop(doca_aes_gcm_as_ctx(e->aes)));
	T_OK(doca_aes_gcm_destroy(e->aes));
	t_local_close(e->pe, e->inv, e->mmap, e->dev, e->mem);
}

/* One task over mem[0, in_len) into mem[DST_OFF, DST_OFF + room); its status */
static doca_error_t run(struct env *e, bool decrypt, struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t iv_len,
			uint32_t tag, uint32_t aad, size_t in_len, size_t room, unsigned pieces)
{
	struct doca_buf *s = t_buf_list(e->inv, e->mmap, e->mem, in_len, pieces, true);
	struct doca_buf *d = t_buf_list(e->inv, e->mmap, e->mem + DST_OFF, room, pieces, false);
	union doca_data ud = {.ptr = e};
	int before = e->done;
	double deadline = t_now() + 10.0;

	if (decrypt) {
		struct doca_aes_gcm_task_decrypt *t;

		T_OK(doca_aes_gcm_task_decrypt_alloc_init(e->aes, s, d, key, iv, iv_len, tag, aad, ud, &t));
		T_OK(doca_task_submit(doca_aes_gcm_task_decrypt_as_task(t)));
	} else {
		struct doca_aes_gcm_task_encrypt *t;

		T_OK(doca_aes_gcm_task_encrypt_alloc_init(e->aes, s, d, key, iv, iv_len, tag, aad, ud, &t));
		T_OK(doca_task_submit(doca_aes_gcm_task_encrypt_as_task(t)));
	}
	while (e->done == before) {
		doca_pe_progress(e->pe);
		T_TRUE(t_now() < deadline);
	}
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	return e->status;
}

static void known_answers(struct env *e)
{
	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
		uint8_t key[32], iv[12], pt[64], aad[32], ct[64], tag[16], *dst = e->mem + DST_OFF;
		size_t klen = unhex(vectors[v].key, key), ivlen = unhex(vectors[v].iv, iv), plen = unhex(vectors[v].pt, pt);
		size_t alen = unhex(vectors[v].aad, aad), clen = unhex(vectors[v].ct, ct);
		struct doca_aes_gcm_key *k;

		T_TRUE(unhex(vectors[v].tag, tag) == 16 && clen == plen);
		T_OK(doca_aes_gcm_key_create(e->aes, key, klen == 16 ? DOCA_AES_GCM_KEY_128 : DOCA_AES_GCM_KEY_256, &k));
		for (uint32_t tag_size = 12; tag_size <= 16; tag_size += 4) {
			memcpy(e->mem, aad, alen);
			memcpy(e->mem + alen, pt, plen);
			T_OK(run(e, false, k, iv, (uint32_t)ivlen, tag_size, (uint32_t)alen, alen + plen, alen + plen + 16, 1));
			T_TRUE(memcmp(dst, aad, alen) == 0);
			T_TRUE(memcmp(dst + alen, ct, clen) == 0);
			T_TRUE(memcmp(dst + alen + clen, tag, tag_size) == 0);
			/* and back: the destination becomes the source */
			memcpy(e->mem, dst, alen + clen + tag_size);
			memset(dst, 0, alen + plen + 16);
			T_OK(run(e, true, k, iv, (uint32_t)ivlen, tag_size, (uint32_t)alen, alen + clen + tag_size,
				 alen + plen, 1));
			T_TRUE(memcmp(dst, aad, alen) == 0 && memcmp(dst + alen, pt, plen) == 0);
		}
		/* a forged tag: authentication error, destination untouched */
		memcpy(e->mem, aad, alen);
		memcpy(e->mem + alen, ct, clen);
		memcpy(e->mem + alen + clen, tag, 16);
		e->mem[alen + clen + 15] ^= 1;
		memset(dst, 0x77, alen + plen);
		T_EXPECT_ERR(run(e, true, k, iv, (uint32_t)ivlen, 16, (uint32_t)alen, alen + clen + 16, alen + plen, 1),
			     DOCA_ERROR_AUTHENTICATION);
		for (size_t x = 0; x < alen + plen; x++)
			T_TRUE(dst[x] == 0x77);
		T_OK(doca_aes_gcm_key_destroy(k));
	}
	t_say("ok GCM test cases 2, 4, 14, 16: AAD, ciphertext and 96/128-bit tag as published, decrypted back, "
	      "forged tag DOCA_ERROR_AUTHENTICATION with the destination untouched");
}

static void bad_input(struct env *e)
{
	uint8_t key[16] = {0}, iv[12] = {0};
	struct doca_aes_gcm_key *k;
	struct doca_aes_gcm_task_encrypt *t;
	struct doca_buf *s, *d;
	union doca_data ud = {.ptr = e};

	T_EXPECT_ERR(doca_aes_gcm_key_create(e->aes, key, (enum doca_aes_gcm_key_type)3, &k), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_aes_gcm_key_create(e->aes, key, DOCA_AES_GCM_KEY_128, &k));
	T_EXPECT_ERR(doca_aes_gcm_destroy(e->aes), DOCA_ERROR_IN_USE);
	s = t_buf_list(e->inv, e->mmap, e->mem, 64, 1, true);
	d = t_buf_list(e->inv, e->mmap, e->mem + DST_OFF, 128, 1, false);
	T_EXPECT_ERR(doca_aes_gcm_task_encrypt_alloc_init(e->aes, s, d, k, iv, 13, 16, 0, ud, &t),
		     DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_aes_gcm_task_encrypt_alloc_init(e->aes, s, d, k, iv, 12, 8, 0, ud, &t),
		     DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	/* destination one byte short of data + tag; decrypt source shorter than AAD + tag; AAD past the data */
	T_EXPECT_ERR(run(e, false, k, iv, 12, 16, 0, 64, 79, 1), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(run(e, true, k, iv, 12, 16, 8, 20, 64, 1), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(run(e, false, k, iv, 12, 16, 65, 64, 128, 1), DOCA_ERROR_INVALID_VALUE);
	/* a 0-byte IV is the all-zero 96-bit IV (test case 2's) */
	memset(e->mem, 0, 16);
	T_OK(run(e, false, k, iv, 0, 16, 0, 16, 32, 1));
	{
		uint8_t want[32];

		unhex("0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf", want);
		T_TRUE(memcmp(e->mem + DST_OFF, want, 32) == 0);
	}
	T_OK(doca_aes_gcm_key_destroy(k));
	t_say("ok bad key type, IV over 12 bytes, tag of 8, short destination, short source, AAD past the data: "
	      "DOCA_ERROR_INVALID_VALUE; a 0-byte IV is zero-padded");
}

static void fuzz(struct env *e, unsigned rounds, unsigned seed)
{
	uint8_t key[32], iv[12];
	unsigned rejected = 0;
	uint8_t *plain = malloc(70000), *sealed = malloc(70100);

	T_TRUE(plain != NULL && sealed != NULL);
	rng_state = 0x243f6a8885a308d3ull ^ seed;
	for (unsigned r = 0; r < rounds; r++) {
		bool wide = rnd(2);
		uint32_t tag = rnd(2) ? 16 : 12, iv_len = rnd(13), aad = rnd(64);
		size_t len = rnd(4) == 0 ? rnd(70000) : rnd(300), total = aad + len;
		unsigned pieces = 1 + rnd(4);
		struct doca_aes_gcm_key *k;

		for (size_t i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)rnd(256);
		for (size_t i = 0; i < sizeof(iv); i++)
			iv[i] = (uint8_t)rnd(256);
		t_fill(plain, total, r + seed);
		T_OK(doca_aes_gcm_key_create(e->aes, key, wide ? DOCA_AES_GCM_KEY_256 : DOCA_AES_GCM_KEY_128, &k));
		memcpy(e->mem, plain, total);
		T_OK(run(e, false, k, iv, iv_len, tag, aad, total, total + tag, pieces));
		memcpy(sealed, e->mem + DST_OFF, total + tag);
		memcpy(e->mem, sealed, total + tag);
		T_OK(run(e, true, k, iv, iv_len, tag, aad, total + tag, total, 1 + rnd(4)));
		T_TRUE(memcmp(e->mem + DST_OFF, plain, total) == 0);
		/* tamper with one byte anywhere (AAD, ciphertext or tag): never accepted */
		memcpy(e->mem, sealed, total + tag);
		e->mem[rnd((uint32_t)(total + tag))] ^= (uint8_t)(1 + rnd(255));
		T_EXPECT_ERR(run(e, true, k, iv, iv_len, tag, aad, total + tag, total, pieces), DOCA_ERROR_AUTHENTICATION);
		/* a destination one byte short */
		T_EXPECT_ERR(run(e, true, k, iv, iv_len, tag, aad, total + tag, total - 1 + (total == 0), pieces),
			     total == 0 ? DOCA_ERROR_AUTHENTICATION : DOCA_ERROR_INVALID_VALUE);
		rejected += 2;
		T_OK(doca_aes_gcm_key_destroy(k));
	}
	free(plain);
	free(sealed);
	t_say("ok fuzz: %u rounds encrypted and decrypted back, %u tampered or mis-sized tasks rejected", rounds,
	      rejected);
}

int main(int argc, char **argv)
{
	struct env e;

	if (argc >= 2 && strcmp(argv[1], "missing") == 0) {
		struct doca_dev *dev = t_open_first_dev();
		struct doca_aes_gcm *aes;
		const char *why = doca_sim_aes_gcm_status();

		T_TRUE(why != NULL && strstr(why, "libssl3") != NULL);
		T_EXPECT_ERR(doca_aes_gcm_cap_task_encrypt_is_supported(doca_dev_as_devinfo(dev)), DOCA_ERROR_NOT_SUPPORTED);
		T_EXPECT_ERR(doca_aes_gcm_cap_task_decrypt_is_supported(doca_dev_as_devinfo(dev)), DOCA_ERROR_NOT_SUPPORTED);
		T_EXPECT_ERR(doca_aes_gcm_create(dev, &aes), DOCA_ERROR_NOT_SUPPORTED);
		T_OK(doca_dev_close(dev));
		t_say("ok without libcrypto: NOT_SUPPORTED, status: %s", why);
		t_say("PASS aes_gcm_vectors missing");
		return 0;
	}
	T_TRUE(doca_sim_aes_gcm_status() == NULL);
	env_open(&e);
	if (argc >= 2 && strcmp(argv[1], "fuzz") == 0) {
		fuzz(&e, argc >= 3 ? (unsigned)atoi(argv[2]) : 200, argc >= 4 ? (unsigned)atoi(argv[3]) : 1);
		env_close(&e);
		T_TRUE(doca_sim_live_objects() == 0);
		t_say("PASS aes_gcm_vectors fuzz");
		return 0;
	}
	known_answers(&e);
	bad_input(&e);
	env_close(&e);
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	t_say("PASS aes_gcm_vectors");
	return 0;
}
