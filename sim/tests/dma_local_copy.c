/*
 * Local DMA copy on the software device, following the flow of NVIDIA's dma_local_copy sample: find a device with the
 * memcpy capability, map source and destination, take bufs from an inventory, run one memcpy task through a progress
 * engine, check every byte, tear everything down, and check nothing leaked.
 */
#include <doca_dma.h>

#include "sim_test_util.h"

#define COPY_LEN (1024 * 1024 + 13) /* not a multiple of anything: catches short or shifted copies */

struct state {
	int done;
	doca_error_t status;
	enum doca_ctx_states last_state;
	int state_changes;
};

static void on_done(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct state *st = ctx_user_data.ptr;

	st->status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	st->done = (int)task_user_data.u64;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void on_state(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct state *st = user_data.ptr;

	(void)ctx;
	(void)prev;
	st->last_state = next;
	st->state_changes++;
}

static struct doca_dev *open_dma_dev(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	T_OK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_dma_cap_task_memcpy_is_supported(list[i]) == DOCA_SUCCESS)
			T_OK(doca_dev_open(list[i], &dev));
	T_OK(doca_devinfo_destroy_list(list));
	T_TRUE(dev != NULL);
	return dev;
}

int main(void)
{
	struct state st = {0};
	union doca_data ud = {.ptr = &st};
	union doca_data task_ud = {.u64 = 7};
	struct doca_dev *dev = open_dma_dev();
	uint8_t *src = malloc(COPY_LEN), *dst = malloc(COPY_LEN);
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src_buf, *dst_buf;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_dma_task_memcpy *task;
	uint64_t max_size = 0;
	size_t data_len = 0;
	void *data = NULL;

	T_TRUE(src != NULL && dst != NULL);
	t_fill(src, COPY_LEN, 1);
	memset(dst, 0, COPY_LEN);

	T_OK(doca_dma_cap_task_memcpy_get_max_buf_size(doca_dev_as_devinfo(dev), &max_size));
	T_TRUE(max_size >= COPY_LEN);

	src_mmap = t_mmap(dev, src, COPY_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	dst_mmap = t_mmap(dev, dst, COPY_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_buf_inventory_create(2, &inv));
	T_OK(doca_buf_inventory_start(inv));

	T_OK(doca_pe_create(&pe));
	T_OK(doca_dma_create(dev, &dma));
	ctx = doca_dma_as_ctx(dma);
	T_OK(doca_dma_task_memcpy_set_conf(dma, on_done, on_done, 1));
	T_OK(doca_ctx_set_state_changed_cb(ctx, on_state));
	T_OK(doca_ctx_set_user_data(ctx, ud));
	T_OK(doca_pe_connect_ctx(pe, ctx));
	T_OK(doca_ctx_start(ctx));
	T_TRUE(st.last_state == DOCA_CTX_STATE_RUNNING);
	t_say("ok dma context running");

	T_OK(doca_buf_inventory_buf_get_by_addr(inv, src_mmap, src, COPY_LEN, &src_buf));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, dst_mmap, dst, COPY_LEN, &dst_buf));
	T_OK(doca_buf_set_data(src_buf, src, COPY_LEN));

	T_OK(doca_dma_task_memcpy_alloc_init(dma, src_buf, dst_buf, task_ud, &task));
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	T_TRUE(st.done == 0); /* callbacks never run inside submit */
	t_progress_until(pe, &st.done);
	T_TRUE(st.done == 7);
	T_OK(st.status);
	T_TRUE(memcmp(src, dst, COPY_LEN) == 0);
	T_OK(doca_buf_get_data(dst_buf, &data));
	T_OK(doca_buf_get_data_len(dst_buf, &data_len));
	T_TRUE(data == dst && data_len == COPY_LEN);
	t_say("ok local copy of %d bytes verified", COPY_LEN);

	T_OK(doca_buf_dec_refcount(src_buf, NULL));
	T_OK(doca_buf_dec_refcount(dst_buf, NULL));
	T_OK(doca_ctx_stop(ctx));
	T_TRUE(st.last_state == DOCA_CTX_STATE_IDLE);
	T_OK(doca_dma_destroy(dma));
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(src_mmap));
	T_OK(doca_mmap_destroy(dst_mmap));
	T_OK(doca_dev_close(dev));
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	free(src);
	free(dst);
	t_say("PASS dma_local_copy");
	return 0;
}
