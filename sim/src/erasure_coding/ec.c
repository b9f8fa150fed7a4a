/*
 * libdoca_erasure_coding: the EC context and its four task kinds (galois_mul, create, update, recover), each with a
 * pool sized by its _set_conf (no allocation per task). Submit only queues; the blocks are computed in the
 * context's progress hook, so a stop can flush tasks that have not run and every callback comes from
 * doca_pe_progress, as with DMA.
 */
#include <stdlib.h>
#include <string.h>

#include "ec_internal.h"
#include "accessors.h"

static const char *const kind_names[SIM_EC_KINDS_] = {"ec_galois_mul", "ec_create", "ec_update", "ec_recover"};

doca_error_t sim_ec_validate(const struct doca_ec *ec, const struct sim_ec_task *task, size_t *block_size)
{
	const struct doca_ec_matrix *mx = task->matrix;
	size_t in_len, block;
	doca_error_t err;

	if (mx == NULL || mx->magic != SIM_MAGIC_LIVE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: no live matrix", kind_names[task->kind]);
	if ((task->kind == SIM_EC_CREATE || task->kind == SIM_EC_GALOIS_MUL) && mx->kind != SIM_EC_MATRIX_CODING)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: needs a coding matrix", kind_names[task->kind]);
	if (task->kind == SIM_EC_UPDATE && mx->kind != SIM_EC_MATRIX_UPDATE && mx->kind != SIM_EC_MATRIX_CODING)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec_update: needs an update (or raw) matrix");
	if (task->kind == SIM_EC_RECOVER && mx->kind == SIM_EC_MATRIX_UPDATE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec_recover: needs a recover (or raw) matrix");
	err = sim_bufs_check_src_dst(task->src, task->dst, ec->ctx.dev, SIM_EC_MAX_BUF_LIST_LEN);
	if (err != DOCA_SUCCESS)
		return err;
	in_len = sim_bufs_data_len(task->src);
	if (in_len == 0 || in_len % mx->in != 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %zu source bytes are not %zu whole blocks",
				kind_names[task->kind], in_len, mx->in);
	block = in_len / mx->in;
	if (block % SIM_EC_BLOCK_ALIGN != 0 || block > SIM_EC_MAX_BLOCK_SIZE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: block size %zu (a multiple of %u up to %u)",
				kind_names[task->kind], block, SIM_EC_BLOCK_ALIGN, SIM_EC_MAX_BLOCK_SIZE);
	if (sim_bufs_tail_room(task->dst) < block * mx->out)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %zu output blocks of %zu bytes do not fit the destination",
				kind_names[task->kind], mx->out, block);
	if (block_size != NULL)
		*block_size = block;
	return DOCA_SUCCESS;
}

doca_error_t sim_ec_execute(const struct doca_ec *ec, struct sim_ec_task *task)
{
	const struct doca_ec_matrix *mx = task->matrix;
	const uint8_t *in;
	uint8_t *copy = NULL, *out;
	size_t block = 0;
	doca_error_t err = sim_ec_validate(ec, task, &block);

	if (err != DOCA_SUCCESS)
		return err;
	in = sim_bufs_direct(task->src);
	if (in == NULL) {
		copy = malloc(block * mx->in);
		if (copy == NULL)
			return DOCA_ERROR_NO_MEMORY;
		err = sim_bufs_read(task->src, copy, block * mx->in);
		if (err != DOCA_SUCCESS) {
			free(copy);
			return err;
		}
		in = copy;
	}
	out = calloc(mx->out, block);
	if (out == NULL) {
		free(copy);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (size_t o = 0; o < mx->out; o++)
		for (size_t i = 0; i < mx->in; i++)
			sim_gf_mul_add_region(out + o * block, in + i * block, mx->coef[i * mx->out + o], block);
	err = sim_bufs_append(task->dst, out, block * mx->out);
	free(out);
	free(copy);
	return err;
}

static doca_error_t task_validate(const struct doca_task *task)
{
	return sim_ec_validate((const struct doca_ec *)task->ctx, (const struct sim_ec_task *)task, NULL);
}

static doca_error_t task_execute(struct doca_task *task)
{
	return sim_ec_execute((const struct doca_ec *)task->ctx, (struct sim_ec_task *)task);
}

#define EC_KIND(name) \
	{ \
		SIM_POOL_KIND_FIELDS(name, struct sim_ec_task), \
		.validate = task_validate, .execute = task_execute, \
	}

static const struct sim_task_kind task_kinds[SIM_EC_KINDS_] = {
	EC_KIND("ec_galois_mul"), EC_KIND("ec_create"), EC_KIND("ec_update"), EC_KIND("ec_recover"),
};
static const struct sim_task_kind *const kinds[SIM_EC_KINDS_] = {
	&task_kinds[0], &task_kinds[1], &task_kinds[2], &task_kinds[3],
};

static doca_error_t ec_start(struct doca_ctx *ctx)
{
	struct doca_ec *ec = (struct doca_ec *)ctx;

	if (ctx->dev == NULL)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "ec: no device");
	if (!sim_pools_configured(ec->pools, SIM_EC_KINDS_))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "ec: no task kind was configured (doca_ec_task_*_set_conf)");
	return DOCA_SUCCESS;
}

static const struct sim_ctx_ops ec_ctx_ops = SIM_POOLED_CTX_OPS("ec", ec_start);

SIM_POOLED_CTX_API(ec, ec_ctx_ops, ec->pools, kinds, SIM_EC_KINDS_, DOCA_ERROR_BAD_STATE)

SIM_GETTER(doca_ec_cap_get_max_block_size, const struct doca_devinfo, devinfo, uint64_t, max_block_size,
	SIM_EC_MAX_BLOCK_SIZE)

SIM_GETTER(doca_ec_cap_get_max_buf_list_len, const struct doca_devinfo, devinfo, uint32_t, max_buf_list_len,
	SIM_EC_MAX_BUF_LIST_LEN)

static doca_error_t cap_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

static doca_error_t set_conf(struct doca_ec *ec, enum sim_ec_task_kind kind, sim_task_cb_t ok, sim_task_cb_t fail,
			     uint32_t num_tasks, const char *func)
{
	if (ec == NULL || num_tasks > SIM_EC_MAX_NUM_TASKS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid callbacks or task count %u", func, num_tasks);
	SIM_RETURN_IF_DEAD(ec, ctx.magic, "ec", DOCA_ERROR_INVALID_VALUE);
	return sim_pool_conf(&ec->pools[kind], &ec->ctx, kinds[kind], ok, fail, num_tasks, func);
}

static doca_error_t alloc_init(struct doca_ec *ec, enum sim_ec_task_kind kind, const struct doca_ec_matrix *matrix,
			       const struct doca_buf *src, struct doca_buf *dst, union doca_data user_data,
			       struct sim_ec_task **task, const char *func)
{
	doca_error_t err;

	if (ec == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sim_pool_alloc_live(&ec->pools[kind], &ec->ctx, "ec", kinds[kind], src, dst, user_data,
				  (struct doca_task **)task, func);
	if (err != DOCA_SUCCESS)
		return err;
	(*task)->kind = kind;
	(*task)->matrix = matrix;
	return DOCA_SUCCESS;
}

/* The per-kind API: the same functions under each kind's names */
#define EC_TASK_API(name, KIND, matrix_field, src_field, dst_field, dst_getter) \
	doca_error_t doca_ec_cap_task_##name##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		return cap_supported(devinfo); \
	} \
	SIM_POOLED_SET_CONF(ec, name, KIND, uint32_t, num_tasks) \
	doca_error_t doca_ec_task_##name##_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *matrix, \
							 const struct doca_buf *src, struct doca_buf *dst, \
							 union doca_data user_data, \
							 struct doca_ec_task_##name **task) \
	{ \
		return alloc_init(ec, KIND, matrix, src, dst, user_data, (struct sim_ec_task **)task, __func__); \
	} \
	SIM_VALUE_GETTER(struct doca_task *, doca_ec_task_##name##_as_task, struct doca_ec_task_##name, task, NULL, \
		&task->t.task) \
	SIM_VALUE_SETTER(doca_ec_task_##name##_set_##matrix_field, struct doca_ec_task_##name, task, \
		const struct doca_ec_matrix *, matrix, task->t.matrix) \
	SIM_VALUE_GETTER(const struct doca_ec_matrix *, doca_ec_task_##name##_get_##matrix_field, \
		const struct doca_ec_task_##name, task, NULL, task->t.matrix) \
	SIM_VALUE_SETTER(doca_ec_task_##name##_set_##src_field, struct doca_ec_task_##name, task, \
		const struct doca_buf *, src, task->t.src) \
	SIM_VALUE_GETTER(const struct doca_buf *, doca_ec_task_##name##_get_##src_field, \
		const struct doca_ec_task_##name, task, NULL, task->t.src) \
	SIM_VALUE_SETTER(doca_ec_task_##name##_set_##dst_field, struct doca_ec_task_##name, task, struct doca_buf *, \
		dst, task->t.dst) \
	SIM_VALUE_GETTER(struct doca_buf *, doca_ec_task_##name##_get_##dst_getter, const struct doca_ec_task_##name, \
		task, NULL, task->t.dst)

EC_TASK_API(galois_mul, SIM_EC_GALOIS_MUL, coding_matrix, src_buf, dst_buf, dst_buf)
EC_TASK_API(create, SIM_EC_CREATE, coding_matrix, original_data_blocks, rdnc_blocks, rdnc_blocks)
EC_TASK_API(update, SIM_EC_UPDATE, update_matrix, original_updated_and_rdnc_blocks, updated_rdnc_blocks,
	    updated_rdnc_blocks)
EC_TASK_API(recover, SIM_EC_RECOVER, recover_matrix, available_blocks, recovered_data_blocks, recovered_data)
