/*
 * Software DOCA device: the compress context (libdoca_compress). Prototypes, task kinds and callback types follow
 * DOCA 3.x's doca_compress.h. Deflate is raw deflate (no zlib or gzip framing), as the hardware produces it; the
 * checksums of a task cover the uncompressed bytes. The LZ4 tasks take the blocks of a stream without the frame
 * (stream task) or one bare compressed block (block task). The device runs them with zlib and liblz4, loaded at run
 * time: where one is missing its tasks are reported NOT_SUPPORTED (doca_sim_compress_backend_missing says why).
 */
#ifndef DOCA_COMPRESS_H_
#define DOCA_COMPRESS_H_

#include <inttypes.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_compress;

/* create, destroy (DOCA_ERROR_IN_USE unless the context is idle), as_ctx */
DOCA_SIM_CTX_DECL(DOCA_EXPERIMENTAL, compress)

/* The sum of the num_tasks given to the four set_conf calls may not exceed this */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks);

/*
 * The functions every compress task kind has, declared once for the four kinds: each use expands to DOCA's own
 * prototypes for that kind (set_conf, as_task, the capability queries, the buffer accessors, the CRC-32 of the
 * uncompressed bytes, meaningful after a successful completion only)
 */
#define DOCA_SIM_COMPRESS_TASK_DECL(kind) \
	struct doca_compress_task_##kind; \
	typedef void (*doca_compress_task_##kind##_completion_cb_t)(struct doca_compress_task_##kind * task, \
								   union doca_data task_user_data, \
								   union doca_data ctx_user_data); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_cap_task_##kind##_is_supported(const struct doca_devinfo *devinfo); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_cap_task_##kind##_get_max_buf_size(const struct doca_devinfo *devinfo, \
								      uint64_t *max_buffer_size); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_cap_task_##kind##_get_max_buf_list_len(const struct doca_devinfo *devinfo, \
									  uint32_t *max_buf_list_len); \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_task_##kind##_set_conf(struct doca_compress *compress, \
							  doca_compress_task_##kind##_completion_cb_t task_completion_cb, \
							  doca_compress_task_##kind##_completion_cb_t task_error_cb, \
							  uint32_t num_tasks); \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_compress_task_##kind##_as_task(struct doca_compress_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_compress_task_##kind##_set_src(struct doca_compress_task_##kind *task, \
						 struct doca_buf const *src_buff); \
	DOCA_EXPERIMENTAL \
	struct doca_buf const *doca_compress_task_##kind##_get_src(const struct doca_compress_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	void doca_compress_task_##kind##_set_dst(struct doca_compress_task_##kind *task, struct doca_buf *dst_buff); \
	DOCA_EXPERIMENTAL \
	struct doca_buf *doca_compress_task_##kind##_get_dst(const struct doca_compress_task_##kind *task); \
	DOCA_EXPERIMENTAL \
	uint32_t doca_compress_task_##kind##_get_crc_cs(const struct doca_compress_task_##kind *task);

/* alloc_init of the kinds that take nothing but their buffers (all but the LZ4 stream kind) */
#define DOCA_SIM_COMPRESS_TASK_ALLOC_DECL(kind) \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_task_##kind##_alloc_init(struct doca_compress *compress, \
							    struct doca_buf const *src_buff, \
							    struct doca_buf *dst_buff, \
							    union doca_data user_data, \
							    struct doca_compress_task_##kind **task);

/* ---- deflate compress ---- */

DOCA_SIM_COMPRESS_TASK_DECL(compress_deflate)
DOCA_SIM_COMPRESS_TASK_ALLOC_DECL(compress_deflate)

/* Adler-32 of the uncompressed input; meaningful after a successful completion only */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *task);

/* ---- deflate decompress (the CRC-32 is of the decompressed output) ---- */

DOCA_SIM_COMPRESS_TASK_DECL(decompress_deflate)
DOCA_SIM_COMPRESS_TASK_ALLOC_DECL(decompress_deflate)

/* Adler-32 of the decompressed output; after a successful completion only */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *task);

/* ---- LZ4 stream decompress: the blocks of an LZ4 frame, without its magic, descriptor, end mark and checksum ---- */

DOCA_SIM_COMPRESS_TASK_DECL(decompress_lz4_stream)

/* has_block_checksum: 1 when each block is followed by its xxHash-32; are_blocks_independent: 0 when a block may
 * refer to the bytes of the blocks before it */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_stream_alloc_init(struct doca_compress *compress,
								 uint8_t has_block_checksum,
								 uint8_t are_blocks_independent,
								 struct doca_buf const *src_buff,
								 struct doca_buf *dst_buff,
								 union doca_data user_data,
								 struct doca_compress_task_decompress_lz4_stream **task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_has_block_checksum(
	struct doca_compress_task_decompress_lz4_stream *task,
	uint8_t has_block_checksum);

DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_has_block_checksum(
	const struct doca_compress_task_decompress_lz4_stream *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_are_blocks_independent(
	struct doca_compress_task_decompress_lz4_stream *task,
	uint8_t are_blocks_independent);

DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_are_blocks_independent(
	const struct doca_compress_task_decompress_lz4_stream *task);

/* xxHash-32 (seed 0) of the decompressed stream, byte-swapped (the frame's content checksum word read big-endian, as
 * NVIDIA's decompress_lz4_stream sample compares it); after a successful completion */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_stream_get_xxh_cs(
	const struct doca_compress_task_decompress_lz4_stream *task);

/* ---- LZ4 block decompress: one compressed block's data, without its size word or checksum ---- */

DOCA_SIM_COMPRESS_TASK_DECL(decompress_lz4_block)
DOCA_SIM_COMPRESS_TASK_ALLOC_DECL(decompress_lz4_block)

/* xxHash-32 (seed 0) of the decompressed block, byte-swapped like the stream task's; after a successful completion */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_block_get_xxh_cs(const struct doca_compress_task_decompress_lz4_block *task);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_COMPRESS_H_ */
