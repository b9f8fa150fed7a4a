/*
 * libdoca_compress: the compress context, its four task pools and capability queries. Like DMA, a submit only queues:
 * the work runs in the context's progress hook (compress_exec.c), so a stop can flush what has not run and every
 * callback comes from doca_pe_progress.
 */
#include <stdlib.h>
#include <string.h>

#include "compress_internal.h"

static const char *const kind_names[SIM_COMPRESS_KIND_COUNT_] = {
	"compress_deflate", "decompress_deflate", "decompress_lz4_stream", "decompress_lz4_block",
};

static void task_free(struct doca_task *task)
{
	struct sim_compress_task *t = (struct sim_compress_task *)task;
	struct sim_compress_pool *pool = &t->compress->pools[t->kind];

	sim_task_fini(task);
	t->src = NULL;
	t->dst = NULL;
	task->next = pool->free_tasks;
	pool->free_tasks = task;
}

static size_t task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	const struct sim_compress_task *t = (const struct sim_compress_task *)task;
	size_t n = 0;

	if (t->src != NULL)
		out[n++] = (struct doca_buf *)t->src;
	if (t->dst != NULL)
		out[n++] = t->dst;
	return n;
}

static const struct sim_task_ops task_ops[SIM_COMPRESS_KIND_COUNT_] = {
	{ .kind = "compress_deflate", .free = task_free, .bufs = task_bufs },
	{ .kind = "decompress_deflate", .free = task_free, .bufs = task_bufs },
	{ .kind = "decompress_lz4_stream", .free = task_free, .bufs = task_bufs },
	{ .kind = "decompress_lz4_block", .free = task_free, .bufs = task_bufs },
};

static doca_error_t compress_start(struct doca_ctx *ctx)
{
	struct doca_compress *c = (struct doca_compress *)ctx;
	uint32_t total = 0;

	for (int k = 0; k < SIM_COMPRESS_KIND_COUNT_; k++) {
		if (c->pools[k].num_tasks > 0 && !sim_compress_kind_available((enum sim_compress_kind)k))
			return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "compress: %s configured but its library is missing (%s)",
					kind_names[k], doca_sim_compress_backend_missing());
		total += c->pools[k].num_tasks;
	}
	if (total == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "compress: no task kind was configured (set_conf)");
	return DOCA_SUCCESS;
}

static doca_error_t compress_stop(struct doca_ctx *ctx)
{
	struct doca_compress *c = (struct doca_compress *)ctx;
	struct doca_task *task = c->pending_head;

	/* Tasks that have not run are flushed: their error callback reports it, no byte is written */
	c->pending_head = NULL;
	c->pending_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;

		sim_task_complete(task, SIM_TASK_FLUSHED_STATUS);
		task = next;
	}
	return DOCA_SUCCESS;
}

static int compress_progress(struct doca_ctx *ctx)
{
	struct doca_compress *c = (struct doca_compress *)ctx;
	struct doca_task *task = c->pending_head;

	if (task == NULL)
		return 0;
	c->pending_head = NULL;
	c->pending_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;
		struct sim_compress_task *t = (struct sim_compress_task *)task;
		/* doca_task_submit does not validate (DOCA): an invalid task fails here, through its error callback */
		doca_error_t err = sim_compress_validate(t);

		if (err != DOCA_SUCCESS)
			sim_strict_report(SIM_RULE_INVALID_TASK, "doca_task_submit", task->ops->kind, task,
					  "completed with %s", doca_error_get_name(err));
		else
			err = sim_compress_execute(t);
		sim_task_complete(task, err);
		task = next;
	}
	return 1;
}

static doca_error_t compress_submit(struct doca_ctx *ctx, struct doca_task *task)
{
	struct doca_compress *c = (struct doca_compress *)ctx;

	task->next = NULL;
	if (c->pending_tail != NULL)
		c->pending_tail->next = task;
	else
		c->pending_head = task;
	c->pending_tail = task;
	sim_pe_signal(ctx->pe);
	return DOCA_SUCCESS;
}

static doca_error_t compress_validate(struct doca_ctx *ctx, struct doca_task *task)
{
	(void)ctx;
	return sim_compress_validate((const struct sim_compress_task *)task);
}

static const struct sim_ctx_ops compress_ctx_ops = {
	.kind = "compress",
	.start = compress_start,
	.stop = compress_stop,
	.progress = compress_progress,
	.submit = compress_submit,
	.validate = compress_validate,
};

doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **compress)
{
	struct doca_compress *c;

	if (dev == NULL || compress == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sim_ctx_init(&c->ctx, &compress_ctx_ops, dev);
	*compress = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_compress_destroy(struct doca_compress *compress)
{
	doca_error_t err;

	if (compress == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(compress, ctx.magic, "compress", DOCA_ERROR_INVALID_VALUE);
	if (!sim_ctx_is_idle(&compress->ctx))
		return sim_fail(DOCA_ERROR_IN_USE, "%s: context is not idle", __func__);
	err = sim_ctx_fini(&compress->ctx);
	if (err != DOCA_SUCCESS)
		return err;
	for (int k = 0; k < SIM_COMPRESS_KIND_COUNT_; k++)
		free(compress->pools[k].tasks);
	sim_release(compress, &compress->ctx.magic);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress)
{
	return compress == NULL ? NULL : &compress->ctx;
}

doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks)
{
	if (compress == NULL || max_num_tasks == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_tasks = SIM_COMPRESS_MAX_NUM_TASKS;
	return DOCA_SUCCESS;
}

static doca_error_t set_conf(struct doca_compress *c, enum sim_compress_kind kind, sim_task_cb_t done,
			     sim_task_cb_t failed, uint32_t num_tasks, const char *func)
{
	struct sim_compress_pool *pool;
	struct sim_compress_task *tasks;
	uint32_t others = 0;

	if (c == NULL || done == NULL || failed == NULL || num_tasks == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or task count %u", func, num_tasks);
	for (int k = 0; k < SIM_COMPRESS_KIND_COUNT_; k++)
		if (k != (int)kind)
			others += c->pools[k].num_tasks;
	if ((uint64_t)others + num_tasks > SIM_COMPRESS_MAX_NUM_TASKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %u tasks exceed the context's %u", func, num_tasks,
				SIM_COMPRESS_MAX_NUM_TASKS - others);
	if (c->ctx.state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not idle", func);
	pool = &c->pools[kind];
	for (uint32_t i = 0; i < pool->num_tasks; i++)
		if (pool->tasks[i].task.ops != NULL)
			return sim_fail(DOCA_ERROR_IN_USE, "%s: tasks are still allocated", func);
	tasks = calloc(num_tasks, sizeof(*tasks));
	if (tasks == NULL)
		return DOCA_ERROR_NO_MEMORY;
	free(pool->tasks);
	pool->tasks = tasks;
	pool->num_tasks = num_tasks;
	pool->free_tasks = NULL;
	for (uint32_t i = num_tasks; i-- > 0;) {
		tasks[i].compress = c;
		tasks[i].kind = kind;
		tasks[i].task.next = pool->free_tasks;
		pool->free_tasks = &tasks[i].task;
	}
	pool->success_cb = done;
	pool->error_cb = failed;
	return DOCA_SUCCESS;
}

static doca_error_t alloc_init(struct doca_compress *c, enum sim_compress_kind kind, const struct doca_buf *src,
			       struct doca_buf *dst, union doca_data user_data, struct sim_compress_task **out,
			       const char *func)
{
	struct sim_compress_pool *pool;
	struct sim_compress_task *t;

	if (c == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(c, ctx.magic, "compress", DOCA_ERROR_INVALID_VALUE);
	if (c->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: context is not running", func);
	pool = &c->pools[kind];
	if (pool->free_tasks == NULL)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "%s: all %u tasks are allocated", func, pool->num_tasks);
	t = (struct sim_compress_task *)pool->free_tasks;
	pool->free_tasks = t->task.next;
	sim_task_init(&t->task, &task_ops[kind], &c->ctx, pool->success_cb, pool->error_cb, user_data);
	t->src = src;
	t->dst = dst;
	t->crc_cs = 0;
	t->adler_cs = 0;
	t->xxh_cs = 0;
	t->has_block_checksum = 0;
	t->are_blocks_independent = 0;
	*out = t;
	return DOCA_SUCCESS;
}

static doca_error_t cap_supported(const struct doca_devinfo *devinfo, enum sim_compress_kind kind)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return sim_compress_kind_available(kind) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t cap_max_buf_size(const struct doca_devinfo *devinfo, enum sim_compress_kind kind, uint64_t *size)
{
	if (devinfo == NULL || size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_compress_kind_available(kind))
		return DOCA_ERROR_NOT_SUPPORTED;
	*size = SIM_COMPRESS_MAX_BUF_SIZE;
	return DOCA_SUCCESS;
}

static doca_error_t cap_max_list_len(const struct doca_devinfo *devinfo, uint32_t *len)
{
	if (devinfo == NULL || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*len = SIM_COMPRESS_MAX_BUF_LIST_LEN;
	return DOCA_SUCCESS;
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
	doca_error_t doca_compress_task_##name##_set_conf(struct doca_compress *compress, \
							  doca_compress_task_##name##_completion_cb_t task_completion_cb, \
							  doca_compress_task_##name##_completion_cb_t task_error_cb, \
							  uint32_t num_tasks) \
	{ \
		return set_conf(compress, KIND, sim_task_cb_cast(task_completion_cb), sim_task_cb_cast(task_error_cb), \
				num_tasks, __func__); \
	} \
	struct doca_task *doca_compress_task_##name##_as_task(struct doca_compress_task_##name *task) \
	{ \
		return task == NULL ? NULL : &((struct sim_compress_task *)task)->task; \
	} \
	void doca_compress_task_##name##_set_src(struct doca_compress_task_##name *task, \
						 struct doca_buf const *src_buff) \
	{ \
		if (task != NULL) \
			((struct sim_compress_task *)task)->src = src_buff; \
	} \
	struct doca_buf const *doca_compress_task_##name##_get_src(const struct doca_compress_task_##name *task) \
	{ \
		return task == NULL ? NULL : ((const struct sim_compress_task *)task)->src; \
	} \
	void doca_compress_task_##name##_set_dst(struct doca_compress_task_##name *task, struct doca_buf *dst_buff) \
	{ \
		if (task != NULL) \
			((struct sim_compress_task *)task)->dst = dst_buff; \
	} \
	struct doca_buf *doca_compress_task_##name##_get_dst(const struct doca_compress_task_##name *task) \
	{ \
		return task == NULL ? NULL : ((const struct sim_compress_task *)task)->dst; \
	} \
	uint32_t doca_compress_task_##name##_get_crc_cs(const struct doca_compress_task_##name *task) \
	{ \
		return task == NULL ? 0 : ((const struct sim_compress_task *)task)->crc_cs; \
	}

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

uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *task)
{
	return task == NULL ? 0 : ((const struct sim_compress_task *)task)->adler_cs;
}

uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *task)
{
	return task == NULL ? 0 : ((const struct sim_compress_task *)task)->adler_cs;
}

uint32_t doca_compress_task_decompress_lz4_stream_get_xxh_cs(const struct doca_compress_task_decompress_lz4_stream *task)
{
	return task == NULL ? 0 : ((const struct sim_compress_task *)task)->xxh_cs;
}

uint32_t doca_compress_task_decompress_lz4_block_get_xxh_cs(const struct doca_compress_task_decompress_lz4_block *task)
{
	return task == NULL ? 0 : ((const struct sim_compress_task *)task)->xxh_cs;
}

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

void doca_compress_task_decompress_lz4_stream_set_has_block_checksum(
	struct doca_compress_task_decompress_lz4_stream *task, uint8_t has_block_checksum)
{
	if (task != NULL)
		((struct sim_compress_task *)task)->has_block_checksum = has_block_checksum != 0;
}

uint8_t doca_compress_task_decompress_lz4_stream_get_has_block_checksum(
	const struct doca_compress_task_decompress_lz4_stream *task)
{
	return task == NULL ? 0 : ((const struct sim_compress_task *)task)->has_block_checksum;
}

void doca_compress_task_decompress_lz4_stream_set_are_blocks_independent(
	struct doca_compress_task_decompress_lz4_stream *task, uint8_t are_blocks_independent)
{
	if (task != NULL)
		((struct sim_compress_task *)task)->are_blocks_independent = are_blocks_independent != 0;
}

uint8_t doca_compress_task_decompress_lz4_stream_get_are_blocks_independent(
	const struct doca_compress_task_decompress_lz4_stream *task)
{
	return task == NULL ? 0 : ((const struct sim_compress_task *)task)->are_blocks_independent;
}
