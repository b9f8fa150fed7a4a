/*
 * Shared by the files of libdoca_compress: the context, its one task struct (four kinds), and the backends (zlib and
 * liblz4, loaded with dlopen so the device builds and loads without them).
 */
#ifndef SIM_COMPRESS_INTERNAL_H_
#define SIM_COMPRESS_INTERNAL_H_

#include <doca_compress.h>
#include <doca_sim.h>

#include "internal.h"
#include "task_pool.h"

/* Capabilities of the software device (DOCA leaves them to the device: these are its own) */
#define SIM_COMPRESS_MAX_BUF_SIZE (128ull << 20) /* bytes per task, source and destination alike */
#define SIM_COMPRESS_MAX_BUF_LIST_LEN 1u         /* no buffer lists */
#define SIM_COMPRESS_MAX_NUM_TASKS 65536u        /* the sum over the four kinds */

enum sim_compress_kind {
	SIM_COMPRESS_DEFLATE,
	SIM_DECOMPRESS_DEFLATE,
	SIM_DECOMPRESS_LZ4_STREAM,
	SIM_DECOMPRESS_LZ4_BLOCK,
	SIM_COMPRESS_KIND_COUNT_,
};

/* Every kind's task has this layout: the public task types are this struct under four names */
struct sim_compress_task {
	struct doca_task task; /* first: the generic code sees a struct doca_task */
	enum sim_compress_kind kind;
	const struct doca_buf *src;
	struct doca_buf *dst;
	uint32_t crc_cs;
	uint32_t adler_cs; /* deflate kinds */
	uint32_t xxh_cs;   /* LZ4 kinds */
	uint8_t has_block_checksum;
	uint8_t are_blocks_independent;
};

struct doca_compress {
	struct doca_ctx ctx; /* first: doca_compress_as_ctx is a cast */
	struct sim_task_pool pools[SIM_COMPRESS_KIND_COUNT_]; /* one a kind (task_pool.c) */
};

/* Backends (compress_backend.c) */
enum sim_compress_backend { SIM_BACKEND_ZLIB, SIM_BACKEND_LZ4 };
/* True when the library the kind needs is loaded (the first call loads it) */
bool sim_compress_kind_available(enum sim_compress_kind kind);
/* Checks (validate) and runs one task; the task's status */
doca_error_t sim_compress_validate(const struct sim_compress_task *t);
doca_error_t sim_compress_execute(struct sim_compress_task *t);

#endif /* SIM_COMPRESS_INTERNAL_H_ */
