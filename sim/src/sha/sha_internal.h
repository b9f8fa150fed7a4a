/*
 * Shared by the files of libdoca_sha: the context, its two task pools, and libcrypto (loaded with dlopen so the device
 * builds and loads without OpenSSL).
 */
#ifndef SIM_SHA_INTERNAL_H_
#define SIM_SHA_INTERNAL_H_

#include <doca_sha.h>
#include <doca_sim.h>

#include "internal.h"
#include "task_pool.h"

/* Capabilities of the software device (DOCA leaves them to the device: these are its own) */
#define SIM_SHA_MAX_SRC_BUF_SIZE (128ull << 20)
#define SIM_SHA_MAX_LIST_LEN 1u
#define SIM_SHA_MAX_LOG_NUM_TASKS 16u

enum sim_sha_kind { SIM_SHA_HASH, SIM_SHA_PARTIAL, SIM_SHA_KIND_COUNT_ };

struct sim_sha_task {
	struct doca_task task; /* first: the generic code sees a struct doca_task */
	enum sim_sha_kind kind;
	enum doca_sha_algorithm algorithm;
	const struct doca_buf *src;
	struct doca_buf *dst;
	/* partial hash session */
	void *md_ctx;        /* libcrypto's EVP_MD_CTX, created at the session's first part */
	bool started;        /* a part was submitted since alloc_init or reset */
	bool is_final;       /* the next (or last) submission is the final part */
	bool has_result;     /* the final part completed: dst holds the digest */
	bool broken;         /* a part failed: the session must be reset */
};

struct doca_sha {
	struct doca_ctx ctx; /* first */
	struct sim_task_pool pools[SIM_SHA_KIND_COUNT_]; /* one a kind (task_pool.c) */
};

/* Digest and block sizes of an algorithm; false for a value outside the enum */
bool sim_sha_sizes(enum doca_sha_algorithm algorithm, uint32_t *digest, uint32_t *block);
/* True when libcrypto is loaded */
bool sim_sha_available(void);
doca_error_t sim_sha_validate(const struct sim_sha_task *t);
doca_error_t sim_sha_execute(struct sim_sha_task *t);
/* Free a partial session's digest state (task free, reset) */
void sim_sha_session_free(struct sim_sha_task *t);

#endif /* SIM_SHA_INTERNAL_H_ */
