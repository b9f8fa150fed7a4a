/*
 * Error paths and state rules of mmaps, bufs, inventories, contexts and DMA tasks in one process, each asserting the
 * exact DOCA error: state errors of mmaps, out-of-range and exhausted inventories, the task pool bound, stop with tasks
 * in flight (flushed through the error callback), destroy of a running context, a read-only local destination, a
 * same-process export/import and its revocation, and the pe notification handle.
 */
#include <poll.h>

#include <doca_dma.h>

#include "sim_test_util.h"

#define LEN 4096

struct counts {
	int ok;
	int failed;
	doca_error_t last_status;
	int idle;
};

/* Counts a completed task as ok or failed in the context's counts, keeps its status and frees it */
static void record(struct doca_dma_task_memcpy *task, struct counts *c, int *counter)
{
	(*counter)++;
	c->last_status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void on_ok(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct counts *c = ctx_user_data.ptr;

	(void)task_user_data;
	record(task, c, &c->ok);
}

static void on_err(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct counts *c = ctx_user_data.ptr;

	(void)task_user_data;
	record(task, c, &c->failed);
}

static void on_state(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct counts *c = user_data.ptr;

	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_IDLE)
		c->idle++;
}

/* One copy from s to d, progressed until it lands in *counter (c.ok or c.failed, set to 0 first) */
static void copy_until(struct doca_dma *dma, struct doca_pe *pe, struct doca_buf *s, struct doca_buf *d, int *counter)
{
	union doca_data none = {0};
	struct doca_dma_task_memcpy *t;

	*counter = 0;
	T_OK(doca_dma_task_memcpy_alloc_init(dma, s, d, none, &t));
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
	while (*counter == 0)
		doca_pe_progress(pe);
}

static void test_mmap_rules(struct doca_dev *dev, uint8_t *mem)
{
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *a, *b, *c;
	const void *desc;
	size_t desc_len;
	uint16_t rc = 0;

	T_OK(doca_mmap_create(&mmap));
	T_EXPECT_ERR(doca_mmap_start(mmap), DOCA_ERROR_INVALID_VALUE); /* no range yet */
	T_EXPECT_ERR(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE),
		     DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_set_memrange(mmap, mem, LEN));
	T_EXPECT_ERR(doca_mmap_set_memrange(mmap, mem, LEN), DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_mmap_add_dev(mmap, dev));
	T_EXPECT_ERR(doca_mmap_add_dev(mmap, dev), DOCA_ERROR_ALREADY_EXIST);
	T_OK(doca_mmap_start(mmap));
	T_EXPECT_ERR(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_ERROR_BAD_STATE);
	T_EXPECT_ERR(doca_mmap_set_memrange(mmap, mem, LEN), DOCA_ERROR_BAD_STATE);
	T_EXPECT_ERR(doca_mmap_add_dev(mmap, dev), DOCA_ERROR_NOT_PERMITTED);
	/* export needs a PCI permission bit */
	T_EXPECT_ERR(doca_mmap_export_pci(mmap, dev, &desc, &desc_len), DOCA_ERROR_NOT_PERMITTED);
	T_EXPECT_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	t_say("ok mmap state rules");

	T_OK(doca_buf_inventory_create(2, &inv));
	T_EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 16, &a), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_inventory_start(inv));
	T_EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + LEN - 8, 16, &a), DOCA_ERROR_INVALID_VALUE);
	/* data outside its buffer: undefined behaviour on DOCA, which returns success (strict mode reports it) */
	T_OK(doca_buf_inventory_buf_get_by_args(inv, mmap, mem, 16, mem + 8, 16, &a));
	T_OK(doca_buf_dec_refcount(a, NULL));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 16, &a));
	T_OK(doca_buf_inventory_buf_get_by_data(inv, mmap, mem + 16, 16, &b));
	T_EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 16, &c), DOCA_ERROR_NO_MEMORY);
	t_say("ok inventory: out-of-range INVALID_VALUE, exhausted NO_MEMORY");

	T_EXPECT_ERR(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	T_EXPECT_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);
	T_OK(doca_buf_inc_refcount(a, &rc));
	T_TRUE(rc == 1);
	T_OK(doca_buf_dec_refcount(a, &rc));
	T_TRUE(rc == 2);
	T_OK(doca_buf_chain_list(a, b));
	{
		uint32_t n = 0;
		struct doca_buf *next = NULL;

		T_OK(doca_buf_get_list_len(a, &n));
		T_TRUE(n == 2);
		T_OK(doca_buf_get_next_in_list(a, &next));
		T_TRUE(next == b);
		T_EXPECT_ERR(doca_buf_dec_refcount(b, NULL), DOCA_ERROR_NOT_PERMITTED);
	}
	T_OK(doca_buf_dec_refcount(a, NULL)); /* returns the whole list */
	T_EXPECT_ERR(doca_buf_dec_refcount(a, NULL), DOCA_ERROR_BAD_STATE);
	t_say("ok buf refcounts and lists");
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(mmap));
}

int main(void)
{
	struct counts c = {0};
	union doca_data ud = {.ptr = &c}, none = {.u64 = 0};
	struct doca_dev *dev = t_open_first_dev();
	uint8_t *src = malloc(LEN), *dst = malloc(LEN), *ro = malloc(LEN);
	struct doca_mmap *src_mmap, *dst_mmap, *ro_mmap, *exported, *imported;
	struct doca_buf_inventory *inv;
	struct doca_buf *sb, *db, *rb, *ib;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_dma_task_memcpy *t1, *t2, *t3;
	const void *desc;
	size_t desc_len, inflight = 0;
	doca_notification_handle_t handle;
	enum doca_ctx_states state;

	T_TRUE(src && dst && ro);
	test_mmap_rules(dev, src);

	t_fill(src, LEN, 5);
	memset(dst, 0, LEN);
	memset(ro, 0xab, LEN);
	src_mmap = t_mmap(dev, src, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	dst_mmap = t_mmap(dev, dst, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	ro_mmap = t_mmap(dev, ro, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY);
	T_OK(doca_buf_inventory_create(8, &inv));
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_buf_inventory_buf_get_by_data(inv, src_mmap, src, LEN, &sb));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, dst_mmap, dst, LEN, &db));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, ro_mmap, ro, LEN, &rb));

	T_OK(doca_pe_create(&pe));
	T_OK(doca_dma_create(dev, &dma));
	ctx = doca_dma_as_ctx(dma);
	T_EXPECT_ERR(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	T_OK(doca_dma_task_memcpy_set_conf(dma, on_ok, on_err, 2));
	T_OK(doca_ctx_set_user_data(ctx, ud));
	T_OK(doca_ctx_set_state_changed_cb(ctx, on_state));
	T_OK(doca_pe_connect_ctx(pe, ctx));
	T_EXPECT_ERR(doca_pe_connect_ctx(pe, ctx), DOCA_ERROR_NOT_PERMITTED);
	T_EXPECT_ERR(doca_dma_task_memcpy_alloc_init(dma, sb, db, none, &t1), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_start(ctx));
	T_EXPECT_ERR(doca_dma_task_memcpy_set_conf(dma, on_ok, on_err, 2), DOCA_ERROR_BAD_STATE);

	/* Task pool bound */
	T_OK(doca_dma_task_memcpy_alloc_init(dma, sb, db, none, &t1));
	T_OK(doca_dma_task_memcpy_alloc_init(dma, sb, db, none, &t2));
	T_EXPECT_ERR(doca_dma_task_memcpy_alloc_init(dma, sb, db, none, &t3), DOCA_ERROR_NO_MEMORY);
	t_say("ok task pool exhausted: DOCA_ERROR_NO_MEMORY");
	doca_task_free(doca_dma_task_memcpy_as_task(t2));

	/* Read-only local destination: the task fails through the error callback */
	doca_dma_task_memcpy_set_dst(t1, rb);
	T_TRUE(doca_dma_task_memcpy_get_dst(t1) == rb && doca_dma_task_memcpy_get_src(t1) == sb);
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t1)));
	while (c.failed == 0)
		doca_pe_progress(pe);
	T_TRUE(c.last_status == DOCA_ERROR_NOT_PERMITTED && ro[0] == 0xab && ro[LEN - 1] == 0xab);
	t_say("ok copy into LOCAL_READ_ONLY memory: DOCA_ERROR_NOT_PERMITTED");

	/* Notification handle: readable once work is queued after request_notification */
	T_OK(doca_pe_get_notification_handle(pe, &handle));
	T_OK(doca_pe_request_notification(pe));
	T_OK(doca_dma_task_memcpy_alloc_init(dma, sb, db, none, &t1));
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t1)));
	{
		struct pollfd pfd = {.fd = handle, .events = POLLIN};

		T_TRUE(poll(&pfd, 1, 2000) == 1);
	}
	T_OK(doca_pe_clear_notification(pe, handle));
	while (c.ok == 0)
		doca_pe_progress(pe);
	T_TRUE(c.last_status == DOCA_SUCCESS && memcmp(src, dst, LEN) == 0);
	{
		/* nothing pending: armed again, the handle stays quiet */
		struct pollfd pfd = {.fd = handle, .events = POLLIN};

		T_OK(doca_pe_request_notification(pe));
		T_TRUE(poll(&pfd, 1, 50) == 0);
		T_OK(doca_pe_clear_notification(pe, handle));
	}
	t_say("ok notification handle became readable, copy verified");

	/* Stop with tasks in flight: IN_PROGRESS, flushed through the error callback, then IDLE */
	T_OK(doca_buf_reset_data_len(db));
	memset(dst, 0, LEN);
	T_OK(doca_dma_task_memcpy_alloc_init(dma, sb, db, none, &t1));
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t1)));
	T_OK(doca_pe_get_num_inflight_tasks(pe, &inflight));
	T_TRUE(inflight == 1);
	c.failed = 0;
	T_EXPECT_ERR(doca_ctx_stop(ctx), DOCA_ERROR_IN_PROGRESS);
	T_OK(doca_ctx_get_state(ctx, &state));
	T_TRUE(state == DOCA_CTX_STATE_STOPPING);
	T_EXPECT_ERR(doca_dma_destroy(dma), DOCA_ERROR_IN_USE);
	T_EXPECT_ERR(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	while (c.idle == 0)
		doca_pe_progress(pe);
	T_TRUE(c.failed == 1 && c.last_status != DOCA_SUCCESS && dst[0] == 0 && dst[LEN - 1] == 0);
	t_say("ok stop with a task in flight: DOCA_ERROR_IN_PROGRESS, task flushed with %s, context idle",
	      doca_error_get_name(c.last_status));

	T_OK(doca_ctx_stop(ctx)); /* already idle: a no-op, as NVIDIA's samples expect */
	T_OK(doca_ctx_start(ctx));

	/* Buffer lists: gather 100 + 300 bytes from a two-element source, scatter into 250 + 1000 bytes of room */
	{
		struct doca_buf *s1, *s2, *d1, *d2;
		size_t l1 = 0, l2 = 0;

		memset(dst, 0, LEN);
		T_OK(doca_buf_inventory_buf_get_by_data(inv, src_mmap, src + 10, 100, &s1));
		T_OK(doca_buf_inventory_buf_get_by_data(inv, src_mmap, src + 1000, 300, &s2));
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, dst_mmap, dst, 250, &d1));
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, dst_mmap, dst + 2000, 1000, &d2));
		T_OK(doca_buf_chain_list(s1, s2));
		T_OK(doca_buf_chain_list(d1, d2));
		copy_until(dma, pe, s1, d1, &c.ok);
		T_OK(doca_buf_get_data_len(d1, &l1));
		T_OK(doca_buf_get_data_len(d2, &l2));
		T_TRUE(l1 == 250 && l2 == 150);
		T_TRUE(memcmp(dst, src + 10, 100) == 0 && memcmp(dst + 100, src + 1000, 150) == 0);
		T_TRUE(memcmp(dst + 2000, src + 1150, 150) == 0 && dst[2150] == 0 && dst[250] == 0);
		T_OK(doca_buf_dec_refcount(s1, NULL));
		T_OK(doca_buf_dec_refcount(d1, NULL));
		t_say("ok buffer lists: gathered from 2 sources, scattered over 2 destinations");
	}

	/* Same-process export and import through the same device, then revocation */
	exported = t_mmap(dev, ro, LEN, DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	T_OK(doca_mmap_export_pci(exported, dev, &desc, &desc_len));
	T_OK(doca_mmap_create_from_export(NULL, desc, desc_len, dev, &imported));
	T_OK(doca_buf_inventory_buf_get_by_data(inv, imported, ro, LEN, &ib));
	T_OK(doca_buf_reset_data_len(db));
	copy_until(dma, pe, ib, db, &c.ok);
	T_TRUE(dst[0] == 0xab && dst[LEN - 1] == 0xab);
	T_OK(doca_mmap_stop(exported));
	T_OK(doca_buf_reset_data_len(db));
	copy_until(dma, pe, ib, db, &c.failed);
	T_TRUE(c.last_status == DOCA_ERROR_NOT_PERMITTED);
	t_say("ok same-process export/import copies, and fails with DOCA_ERROR_NOT_PERMITTED once revoked");

	T_OK(doca_buf_dec_refcount(ib, NULL));
	T_OK(doca_mmap_destroy(imported));
	T_OK(doca_mmap_destroy(exported));
	T_OK(doca_ctx_stop(ctx));
	T_OK(doca_dma_destroy(dma));
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_buf_dec_refcount(sb, NULL));
	T_OK(doca_buf_dec_refcount(db, NULL));
	T_OK(doca_buf_dec_refcount(rb, NULL));
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(src_mmap));
	T_OK(doca_mmap_destroy(dst_mmap));
	T_OK(doca_mmap_destroy(ro_mmap));
	T_OK(doca_dev_close(dev));
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	free(src);
	free(dst);
	free(ro);
	t_say("PASS dma_errors");
	return 0;
}
