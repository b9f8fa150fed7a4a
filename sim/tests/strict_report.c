/*
 * Strict mode's reports (run with DOCA_SIM_STRICT=1): this program does, on purpose, what DOCA leaves undefined or
 * forbids, each a known number of times, and leaves objects alive at exit. tests/sim-behaviour.test.ts checks that
 * every kind is printed once and counted in the exit summary. The device stays safe throughout: every bad call is
 * refused or harmless, so the program still finishes and prints "PASS strict_report".
 */
#include <doca_dma.h>
#include <doca_rdma.h>

#include "sim_test_util.h"

#define LEN 4096

static int completed;

static void on_done(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)task;
	(void)tud;
	(void)cud;
	completed++; /* never freed: reported at exit (task-not-freed) */
}

static struct doca_pe *reenter_pe;

/* The cases where a task freed in flight meets its own callback (see main) */
static struct doca_dma *victim;  /* an idle context a callback destroys */
static int resubmits_left;       /* the resubmit case: how often the callback submits its task again */
static int done3;

static void on_receive(struct doca_rdma_task_receive *task, union doca_data tud, union doca_data cud)
{
	(void)task, (void)tud, (void)cud; /* flushed by the stop: nothing to do */
}

static void on_done3(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)cud;
	done3++;
	if (tud.u64 == 1 && resubmits_left > 0) {
		resubmits_left--; /* the program owns the task again: the free it asked for in flight is void */
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	}
	if (tud.u64 == 2 && victim != NULL) {
		T_OK(doca_dma_destroy(victim)); /* another context: the task freed in flight is still freed after this */
		victim = NULL;
	}
}

static void on_done_reenter(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	T_TRUE(doca_pe_progress(reenter_pe) == 0); /* progress-reentered: refused */
	completed++;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

int main(void)
{
	struct doca_dev *dev = t_open_first_dev();
	uint8_t *mem = calloc(1, LEN);
	struct doca_mmap *mmap, *gone, *unstarted;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_dma_task_memcpy *tasks[5], *t;
	const void *desc;
	size_t desc_len;
	union doca_data none = {.u64 = 0};

	T_TRUE(mem != NULL);
	mmap = t_mmap(dev, mem, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_buf_inventory_create(8, &inv));
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 1024, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 2048, 1024, &dst));

	/* data-outside-buffer x3: DOCA_SUCCESS, as on DOCA */
	T_OK(doca_buf_set_data(src, mem + 1000, 100));
	T_OK(doca_buf_set_data(src, mem + 512, 1024));
	T_OK(doca_buf_set_data_len(src, 4000));
	T_OK(doca_buf_set_data(src, mem, 64));

	/* destroy-with-children: an mmap and an inventory holding bufs */
	T_EXPECT_ERR(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	T_EXPECT_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);

	/* export-not-started */
	T_OK(doca_mmap_create(&unstarted));
	T_OK(doca_mmap_set_memrange(unstarted, mem, LEN));
	T_OK(doca_mmap_set_permissions(unstarted, DOCA_ACCESS_FLAG_PCI_READ_ONLY));
	T_OK(doca_mmap_add_dev(unstarted, dev));
	T_EXPECT_ERR(doca_mmap_export_pci(unstarted, dev, &desc, &desc_len), DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_mmap_destroy(unstarted));

	/* use-after-destroy (an mmap twice, a pe, a DMA context): in strict mode the handle is quarantined and the call refused (without strict mode the
	 * memory is freed, as on DOCA, and touching it would be a real use-after-free: skipped) */
	if (getenv("DOCA_SIM_STRICT") != NULL && strcmp(getenv("DOCA_SIM_STRICT"), "0") != 0) {
		T_OK(doca_mmap_create(&gone));
		T_OK(doca_mmap_destroy(gone));
		T_EXPECT_ERR(doca_mmap_set_memrange(gone, mem, LEN), DOCA_ERROR_INVALID_VALUE);
		T_EXPECT_ERR(doca_mmap_start(gone), DOCA_ERROR_INVALID_VALUE);
		{
			struct doca_pe *gone_pe;
			struct doca_dma *gone_dma;

			T_OK(doca_pe_create(&gone_pe));
			T_OK(doca_pe_destroy(gone_pe));
			T_TRUE(doca_pe_progress(gone_pe) == 0);
			T_OK(doca_dma_create(dev, &gone_dma));
			T_OK(doca_dma_destroy(gone_dma));
			T_EXPECT_ERR(doca_ctx_start(doca_dma_as_ctx(gone_dma)), DOCA_ERROR_INVALID_VALUE);
		}
	}

	T_OK(doca_pe_create(&pe));
	T_OK(doca_dma_create(dev, &dma));
	T_OK(doca_dma_task_memcpy_set_conf(dma, on_done, on_done, 8));
	T_OK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	T_OK(doca_ctx_start(doca_dma_as_ctx(dma)));

	/* free-inflight-task x5, each one misuse counted once: three tasks freed in flight, and twice NVIDIA's
	 * secure_channel pattern (release the task's buf, then free the task, before stopping): not also a
	 * release-held-buf. The device frees each after its callback, so the pool of 8 has room for 5 more below. */
	for (int i = 0; i < 5; i++) {
		struct doca_buf *own = dst;
		if (i >= 3)
			T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 1536 + 64 * i, 64, &own));
		T_OK(doca_dma_task_memcpy_alloc_init(dma, src, own, none, &tasks[i]));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(tasks[i])));
		if (i >= 3)
			T_OK(doca_buf_dec_refcount(own, NULL));
		doca_task_free(doca_dma_task_memcpy_as_task(tasks[i]));
	}
	/* destroy-with-children: a pe with a context */
	T_EXPECT_ERR(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	while (completed < 5)
		doca_pe_progress(pe);
	/* five more, completed and never freed: task-not-freed x5 at exit */
	for (int i = 0; i < 5; i++) {
		T_OK(doca_dma_task_memcpy_alloc_init(dma, src, dst, none, &tasks[i]));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(tasks[i])));
	}
	while (completed < 10)
		doca_pe_progress(pe);

	/* release-held-buf x1: the destination released while its copy is in flight stays out of the inventory until
	 * the copy's callback ran (the inventory must not hand it out while DOCA writes it) */
	{
		struct doca_buf *held;
		struct doca_dma_task_memcpy *th;
		int before = completed;
		uint32_t free_before, free_after;

		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 1024, 512, &held));
		T_OK(doca_dma_task_memcpy_alloc_init(dma, src, held, none, &th));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(th)));
		T_OK(doca_buf_inventory_get_num_free_elements(inv, &free_before));
		T_OK(doca_buf_dec_refcount(held, NULL));
		T_OK(doca_buf_inventory_get_num_free_elements(inv, &free_after));
		T_TRUE(free_after == free_before);
		while (completed == before)
			doca_pe_progress(pe);
		T_OK(doca_buf_inventory_get_num_free_elements(inv, &free_after));
		T_TRUE(free_after == free_before + 1);
		doca_task_free(doca_dma_task_memcpy_as_task(th));
	}

	/* Each misuse once, whatever the callback does next (a third context on the same pe, its own pool of 4):
	 *  - freed in flight twice, then its callback resubmits it: one free-inflight-task; the task stays the
	 *    program's (the pool does not hand its slot out) and is freed normally after its second completion;
	 *  - freed in flight, its callback destroys another (idle) context: one free-inflight-task, still freed after;
	 *  - a buf two tasks read, released while both are in flight, one of them freed in flight: one
	 *    free-inflight-task and one release-held-buf (the other task was not freed) */
	{
		struct doca_dma *dma3;
		struct doca_dma_task_memcpy *r, *d, *a, *b, *other;
		struct doca_buf *shared;
		union doca_data resub = {.u64 = 1}, destroyer = {.u64 = 2};

		T_OK(doca_dma_create(dev, &dma3));
		T_OK(doca_dma_task_memcpy_set_conf(dma3, on_done3, on_done3, 4));
		T_OK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma3)));
		T_OK(doca_ctx_start(doca_dma_as_ctx(dma3)));
		T_OK(doca_dma_create(dev, &victim));
		T_OK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(victim)));

		resubmits_left = 1;
		T_OK(doca_dma_task_memcpy_alloc_init(dma3, src, dst, resub, &r));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(r)));
		doca_task_free(doca_dma_task_memcpy_as_task(r));
		doca_task_free(doca_dma_task_memcpy_as_task(r));
		while (done3 < 2)
			doca_pe_progress(pe);
		T_OK(doca_dma_task_memcpy_alloc_init(dma3, src, dst, none, &other));
		T_TRUE(other != r); /* r is still the program's */
		doca_task_free(doca_dma_task_memcpy_as_task(other));
		doca_task_free(doca_dma_task_memcpy_as_task(r));

		T_OK(doca_dma_task_memcpy_alloc_init(dma3, src, dst, destroyer, &d));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(d)));
		doca_task_free(doca_dma_task_memcpy_as_task(d));
		while (done3 < 3)
			doca_pe_progress(pe);
		T_TRUE(victim == NULL);

		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 3584, 64, &shared));
		T_OK(doca_buf_set_data(shared, mem + 3584, 64));
		T_OK(doca_dma_task_memcpy_alloc_init(dma3, shared, dst, none, &a));
		T_OK(doca_dma_task_memcpy_alloc_init(dma3, shared, dst, none, &b));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(a)));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(b)));
		T_OK(doca_buf_dec_refcount(shared, NULL));
		doca_task_free(doca_dma_task_memcpy_as_task(b));
		while (done3 < 5)
			doca_pe_progress(pe);
		doca_task_free(doca_dma_task_memcpy_as_task(a));

		/* every task of dma3 is back in its pool: all four can be taken again, each once; one freed twice (never
		 * submitted) is refused the second time, so the pool does not hand it out twice */
		{
			struct doca_dma_task_memcpy *four[4], *x;
			for (int i = 0; i < 4; i++)
				T_OK(doca_dma_task_memcpy_alloc_init(dma3, src, dst, none, &four[i]));
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < i; j++)
					T_TRUE(four[i] != four[j]);
			for (int i = 0; i < 4; i++)
				doca_task_free(doca_dma_task_memcpy_as_task(four[i]));
			doca_task_free(doca_dma_task_memcpy_as_task(four[0])); /* use-after-destroy, refused */
			for (int i = 0; i < 4; i++)
				T_OK(doca_dma_task_memcpy_alloc_init(dma3, src, dst, none, &four[i]));
			/* a pool of 4 with nothing free: had the second free gone through, a fifth would be handed out */
			T_EXPECT_ERR(doca_dma_task_memcpy_alloc_init(dma3, src, dst, none, &x), DOCA_ERROR_NO_MEMORY);
			for (int i = 0; i < 4; i++)
				doca_task_free(doca_dma_task_memcpy_as_task(four[i]));
		}
		T_OK(doca_ctx_stop(doca_dma_as_ctx(dma3)));
		T_OK(doca_dma_destroy(dma3));
	}

	/* An RDMA receive (a task of its own allocation, not a pool's) freed in flight with its buffer released, flushed by
	 * the stop, then freed again: one free-inflight-task, and the second free is refused (use-after-destroy) instead
	 * of freeing the memory the device already freed after the flush */
	{
		struct doca_rdma *rdma;
		struct doca_rdma_task_receive *rt;
		struct doca_buf *rb;
		enum doca_ctx_states state = DOCA_CTX_STATE_STOPPING;

		T_OK(doca_rdma_create(dev, &rdma));
		T_OK(doca_rdma_set_permissions(rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
		T_OK(doca_rdma_task_receive_set_conf(rdma, on_receive, on_receive, 2));
		T_OK(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)));
		T_OK(doca_ctx_start(doca_rdma_as_ctx(rdma)));
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 3072, 256, &rb));
		T_OK(doca_rdma_task_receive_allocate_init(rdma, rb, none, &rt));
		T_OK(doca_task_submit(doca_rdma_task_receive_as_task(rt)));
		T_OK(doca_buf_dec_refcount(rb, NULL));
		doca_task_free(doca_rdma_task_receive_as_task(rt));
		T_TRUE(doca_ctx_stop(doca_rdma_as_ctx(rdma)) == DOCA_ERROR_IN_PROGRESS);
		while (state != DOCA_CTX_STATE_IDLE) {
			doca_pe_progress(pe);
			T_OK(doca_ctx_get_state(doca_rdma_as_ctx(rdma), &state));
		}
		doca_task_free(doca_rdma_task_receive_as_task(rt));
		T_OK(doca_rdma_destroy(rdma));
	}

	/* submit-not-running x2 */
	T_OK(doca_dma_task_memcpy_alloc_init(dma, src, dst, none, &t));
	T_OK(doca_ctx_stop(doca_dma_as_ctx(dma))); /* nothing in flight: IDLE at once */
	T_EXPECT_ERR(doca_task_submit(doca_dma_task_memcpy_as_task(t)), DOCA_ERROR_BAD_STATE);
	T_EXPECT_ERR(doca_task_submit(doca_dma_task_memcpy_as_task(t)), DOCA_ERROR_BAD_STATE);

	/* progress-reentered x1, on a second pe */
	{
		struct doca_dma *dma2;
		struct doca_dma_task_memcpy *t2;
		struct doca_buf *d2;
		int before = completed;

		T_OK(doca_pe_create(&reenter_pe));
		T_OK(doca_dma_create(dev, &dma2));
		T_OK(doca_dma_task_memcpy_set_conf(dma2, on_done_reenter, on_done_reenter, 2));
		T_OK(doca_pe_connect_ctx(reenter_pe, doca_dma_as_ctx(dma2)));
		T_OK(doca_ctx_start(doca_dma_as_ctx(dma2)));
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 3072, 1024, &d2));
		T_OK(doca_dma_task_memcpy_alloc_init(dma2, src, d2, none, &t2));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t2)));
		while (completed == before)
			doca_pe_progress(reenter_pe);
		/* left alive on purpose: leak reports at exit */
	}

	/* leaks at exit: the pes, contexts, bufs, inventory, mmap and device are left alive */
	t_say("PASS strict_report");
	return 0;
}
