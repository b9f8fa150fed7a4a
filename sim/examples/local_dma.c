/*
 * A tiny DOCA program (our own code): copies a string from one buffer to another with a DMA memcpy task and checks
 * it. Written against DOCA's public API only, so the same file builds against the real DOCA SDK or the software
 * device; README.md ("Running a DOCA C program on the software device") shows the build line.
 */
#include <stdio.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#define CHECK(call) \
	do { \
		doca_error_t err_ = (call); \
		if (err_ != DOCA_SUCCESS) { \
			fprintf(stderr, "%s: %s\n", #call, doca_error_get_name(err_)); \
			return 1; \
		} \
	} while (0)

static int done;

static void copied(struct doca_dma_task_memcpy *task, union doca_data task_data, union doca_data ctx_data)
{
	(void)task_data;
	(void)ctx_data;
	done = doca_task_get_status(doca_dma_task_memcpy_as_task(task)) == DOCA_SUCCESS ? 1 : -1;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

int main(void)
{
	static char mem[128]; /* source in the first half, destination in the second: one memory map covers both */
	char *src = mem, *dst = mem + 64;
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *from, *to;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_dma_task_memcpy *task;
	uint32_t n = 0;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_dma_cap_task_memcpy_is_supported(list[i]) == DOCA_SUCCESS)
			CHECK(doca_dev_open(list[i], &dev));
	CHECK(doca_devinfo_destroy_list(list));
	if (dev == NULL) {
		fprintf(stderr, "no device with DMA memcpy\n");
		return 1;
	}
	strcpy(src, "hello from a DOCA DMA task");
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_add_dev(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(2, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_buf_get_by_data(inv, mmap, src, strlen(src) + 1, &from));
	CHECK(doca_buf_inventory_buf_get_by_addr(inv, mmap, dst, 64, &to));

	CHECK(doca_pe_create(&pe));
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_dma_task_memcpy_set_conf(dma, copied, copied, 1));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, from, to, (union doca_data){.u64 = 0}, &task));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	while (done == 0)
		(void)doca_pe_progress(pe);

	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_buf_dec_refcount(from, NULL));
	CHECK(doca_buf_dec_refcount(to, NULL));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	if (done != 1 || strcmp(src, dst) != 0) {
		fprintf(stderr, "copy failed\n");
		return 1;
	}
	printf("copied: %s\n", dst);
	return 0;
}
