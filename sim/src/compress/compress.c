/*
 * libdoca_compress: the compress context, its four task pools and capability queries. Like DMA, a submit only queues:
 * the work runs in the context's progress hook (compress_exec.c), so a stop can flush what has not run and every
 * callback comes from doca_pe_progress.
 */
#include <stdlib.h>
#include <string.h>

#include "compress_internal.h"
#include "accessors.h"

static doca_error_t task_validate(const struct doca_task *task)
{
	return sim_compress_validate((const struct sim_compress_task *)task);
}

static doca_error_t task_execute(struct doca_task *task)
{
	return sim_compress_execute((struct sim_compress_task *)task);
}

#define COMPRESS_KIND(name) \
	{ \
		SIM_POOL_KIND_FIELDS(name, struct sim_compress_task), \
		.validate = task_validate, .execute = task_execute, \
	}

static const struct sim_task_kind task_kinds[SIM_COMPRESS_KIND_COUNT_] = {
	COMPRESS_KIND("compress_deflate"),
	COMPRESS_KIND("decompress_deflate"),
	COMPRESS_KIND("decompress_lz4_stream"),
	COMPRESS_KIND("decompress_lz4_block"),
};
static const struct sim_task_kind *const kinds[SIM_COMPRESS_KIND_COUNT_] = {
	&task_kinds[0], &task_kinds[1], &task_kinds[2], &task_kinds[3],
};

static doca_error_t compress_start(struct doca_ctx *ctx)
{
	struct doca_compress *c = (struct doca_compress *)ctx;

	for (int k = 0; k < SIM_COMPRESS_KIND_COUNT_; k++)
		if (c->pools[k].num_tasks > 0 && !sim_compress_kind_available((enum sim_compress_kind)k))
			return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "compress: %s configured but its library is missing (%s)",
					task_kinds[k].ops.kind, doca_sim_compress_backend_missing());
	if (!sim_pools_configured(c->pools, SIM_COMPRESS_KIND_COUNT_))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "compress: no task kind was configured (set_conf)");
	return DOCA_SUCCESS;
}

static const struct sim_ctx_ops compress_ctx_ops = SIM_POOLED_CTX_OPS("compress", compress_start);

SIM_POOLED_CTX_API(compress, compress_ctx_ops, compress->pools, kinds, SIM_COMPRESS_KIND_COUNT_, DOCA_ERROR_IN_USE)

SIM_GETTER(doca_compress_cap_get_max_num_tasks, struct doca_compress, compress, uint32_t, max_num_tasks,
	SIM_COMPRESS_MAX_NUM_TASKS)

static doca_error_t set_conf(struct doca_compress *c, enum sim_compress_kind kind, sim_task_cb_t done,
			     sim_task_cb_t failed, uint32_t num_tasks, const char *func)
{
	uint32_t others = 0;

	if (c == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: no context", func);
	for (int k = 0; k < SIM_COMPRESS_KIND_COUNT_; k++)
		if (k != (int)kind)
			others += c->pools[k].num_tasks;
	if ((uint64_t)others + num_tasks > SIM_COMPRESS_MAX_NUM_TASKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %u tasks exceed the context's %u", func, num_tasks,
				SIM_COMPRESS_MAX_NUM_TASKS - others);
	return sim_pool_conf(&c->pools[kind], &c->ctx, kinds[kind], done, failed, num_tasks, func);
}

static doca_error_t alloc_init(struct doca_compress *c, enum sim_compress_kind kind, const struct doca_buf *src,
			       struct doca_buf *dst, union doca_data user_data, struct sim_compress_task **out,
			       const char *func)
{
	doca_error_t err;

	if (c == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sim_pool_alloc_live(&c->pools[kind], &c->ctx, "compress", kinds[kind], src, dst, user_data,
				  (struct doca_task **)out, func);
	if (err == DOCA_SUCCESS)
		(*out)->kind = kind;
	return err;
}

static doca_error_t cap_supported(const struct doca_devinfo *devinfo, enum sim_compress_kind kind)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return sim_compress_kind_available(kind) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t cap_max_buf_size(const struct doca_devinfo *devinfo, enum sim_compress_kind kind, uint64_t *size)
{
	return sim_cap_u64(devinfo, sim_compress_kind_available(kind), SIM_COMPRESS_MAX_BUF_SIZE, size);
}

static doca_error_t cap_max_list_len(const struct doca_devinfo *devinfo, uint32_t *len)
{
	return sim_cap_u32(devinfo, true, SIM_COMPRESS_MAX_BUF_LIST_LEN, len);
}

/* The functions every kind has, under its DOCA names: capability queries, set_conf, alloc_init (but the LZ4 stream
 * kind's, which takes two flags more), as_task and the buffer accessors */
#define KIND_FUNCTIONS(name, KIND) \
	doca_error_t doca_compress_cap_task_##name##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		return cap_supported(devinfo, KIND); \
	} \
	doca_error_t doca_compress_cap_task_##name##_get_max_buf_size(const struct doca_devinfo *devinfo, \
								      uint64_t *max_buffer_size) \
	{ \
		return cap_max_buf_size(devinfo, KIND, max_buffer_size); \
	} \
	doca_error_t doca_compress_cap_task_##name##_get_max_buf_list_len(const struct doca_devinfo *devinfo, \
									  uint32_t *max_buf_list_len) \
	{ \
		return cap_max_list_len(devinfo, max_buf_list_len); \
	} \
	SIM_POOLED_SET_CONF(compress, name, KIND, uint32_t, num_tasks) \
	SIM_VALUE_GETTER(struct doca_task *, doca_compress_task_##name##_as_task, struct doca_compress_task_##name, \
		task, NULL, &((struct sim_compress_task *)task)->task) \
	SIM_VALUE_SETTER(doca_compress_task_##name##_set_src, struct doca_compress_task_##name, task, \
		struct doca_buf const *, src_buff, ((struct sim_compress_task *)task)->src) \
	SIM_VALUE_GETTER(struct doca_buf const *, doca_compress_task_##name##_get_src, \
		const struct doca_compress_task_##name, task, NULL, ((const struct sim_compress_task *)task)->src) \
	SIM_VALUE_SETTER(doca_compress_task_##name##_set_dst, struct doca_compress_task_##name, task, \
		struct doca_buf *, dst_buff, ((struct sim_compress_task *)task)->dst) \
	SIM_VALUE_GETTER(struct doca_buf *, doca_compress_task_##name##_get_dst, \
		const struct doca_compress_task_##name, task, NULL, ((const struct sim_compress_task *)task)->dst) \
	SIM_VALUE_GETTER(uint32_t, doca_compress_task_##name##_get_crc_cs, const struct doca_compress_task_##name, \
		task, 0, ((const struct sim_compress_task *)task)->crc_cs)

#define SIMPLE_ALLOC(name, KIND) \
	doca_error_t doca_compress_task_##name##_alloc_init(struct doca_compress *compress, \
							    struct doca_buf const *src_buff, struct doca_buf *dst_buff, \
							    union doca_data user_data, \
							    struct doca_compress_task_##name **task) \
	{ \
		return alloc_init(compress, KIND, src_buff, dst_buff, user_data, (struct sim_compress_task **)task, \
				  __func__); \
	}

KIND_FUNCTIONS(compress_deflate, SIM_COMPRESS_DEFLATE)
KIND_FUNCTIONS(decompress_deflate, SIM_DECOMPRESS_DEFLATE)
KIND_FUNCTIONS(decompress_lz4_stream, SIM_DECOMPRESS_LZ4_STREAM)
KIND_FUNCTIONS(decompress_lz4_block, SIM_DECOMPRESS_LZ4_BLOCK)
SIMPLE_ALLOC(compress_deflate, SIM_COMPRESS_DEFLATE)
SIMPLE_ALLOC(decompress_deflate, SIM_DECOMPRESS_DEFLATE)
SIMPLE_ALLOC(decompress_lz4_block, SIM_DECOMPRESS_LZ4_BLOCK)

SIM_VALUE_GETTER(uint32_t, doca_compress_task_compress_deflate_get_adler_cs,
	const struct doca_compress_task_compress_deflate, task, 0, ((const struct sim_compress_task *)task)->adler_cs)

SIM_VALUE_GETTER(uint32_t, doca_compress_task_decompress_deflate_get_adler_cs,
	const struct doca_compress_task_decompress_deflate, task, 0, ((const struct sim_compress_task *)task)->adler_cs)

SIM_VALUE_GETTER(uint32_t, doca_compress_task_decompress_lz4_stream_get_xxh_cs,
	const struct doca_compress_task_decompress_lz4_stream, task, 0,
	((const struct sim_compress_task *)task)->xxh_cs)

SIM_VALUE_GETTER(uint32_t, doca_compress_task_decompress_lz4_block_get_xxh_cs,
	const struct doca_compress_task_decompress_lz4_block, task, 0, ((const struct sim_compress_task *)task)->xxh_cs)

doca_error_t doca_compress_task_decompress_lz4_stream_alloc_init(struct doca_compress *compress,
								 uint8_t has_block_checksum,
								 uint8_t are_blocks_independent,
								 struct doca_buf const *src_buff, struct doca_buf *dst_buff,
								 union doca_data user_data,
								 struct doca_compress_task_decompress_lz4_stream **task)
{
	struct sim_compress_task *t = NULL;
	doca_error_t err = alloc_init(compress, SIM_DECOMPRESS_LZ4_STREAM, src_buff, dst_buff, user_data, &t, __func__);

	if (err != DOCA_SUCCESS)
		return err;
	t->has_block_checksum = has_block_checksum != 0;
	t->are_blocks_independent = are_blocks_independent != 0;
	*task = (struct doca_compress_task_decompress_lz4_stream *)t;
	return DOCA_SUCCESS;
}

/* The LZ4 stream task's two flags: set_<flag> stores 0 or 1 (any nonzero is 1), get_<flag> reads it back */
#define LZ4_STREAM_FLAG(flag) \
	void doca_compress_task_decompress_lz4_stream_set_##flag(struct doca_compress_task_decompress_lz4_stream *task, \
								 uint8_t flag) \
	{ \
		if (task != NULL) \
			((struct sim_compress_task *)task)->flag = flag != 0; \
	} \
	SIM_VALUE_GETTER(uint8_t, doca_compress_task_decompress_lz4_stream_get_##flag, \
		const struct doca_compress_task_decompress_lz4_stream, task, 0, ((const struct sim_compress_task *)task)->flag)

LZ4_STREAM_FLAG(has_block_checksum)
LZ4_STREAM_FLAG(are_blocks_independent)
