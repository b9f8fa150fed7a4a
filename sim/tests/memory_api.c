/*
 * The DOCA 3.x memory calls NVIDIA's storage programs use beyond the basics, on the software device:
 *   thread safety   doca_mmap_enable_thread_safety before start and on a map created from an export; BAD_STATE after
 *   reuse           doca_buf_inventory_buf_reuse_by_addr / _by_data repoint a taken buf inside its mmap (a DMA copy
 *                   then moves the new range), also each element of a list alone (the list stays); outside the range
 *                   INVALID_VALUE; a free buf, or a buf (or a member of a list) held by a submitted task NOT_PERMITTED
 *   dma-buf         doca_mmap_set_dmabuf_memrange over a memfd mapped at addr (and over a real dma-buf from
 *                   /dev/udmabuf where the kernel has it): a DMA copy reads and writes it, also after the caller
 *                   closed its fd; the wrong offset, an unmapped address, a range past the file, a started map and a
 *                   second range are refused
 * Usage: memory_api      (prints "memory_api: ok", and "memory_api: udmabuf ok" or "memory_api: udmabuf absent")
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dma.h>
#include <doca_pe.h>

#include "sim_test_util.h"

#define PAGE 4096
#define LEN (16 * PAGE)

static volatile int done, failed;

T_COUNTING_CB(ok_cb, struct doca_dma_task_memcpy, done)
T_COUNTING_CB(err_cb, struct doca_dma_task_memcpy, failed)

struct bench {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_buf_inventory *inv;
};

static void copy(struct bench *b, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_dma_task_memcpy *t;
	union doca_data none = { 0 };
	int want = done + 1;
	double deadline = t_now() + 20;

	T_OK(doca_dma_task_memcpy_alloc_init(b->dma, src, dst, none, &t));
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
	while (done < want) {
		doca_pe_progress(b->pe);
		T_TRUE(failed == 0 && t_now() < deadline);
	}
	doca_task_free(doca_dma_task_memcpy_as_task(t));
}

static void thread_safety(struct bench *b)
{
	static uint8_t mem[PAGE] __attribute__((aligned(PAGE)));
	struct doca_mmap *m, *imported;
	const void *desc;
	size_t len;

	T_TRUE(doca_mmap_enable_thread_safety(NULL) == DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_create(&m));
	T_OK(doca_mmap_set_memrange(m, mem, sizeof(mem)));
	T_OK(doca_mmap_set_permissions(m, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	T_OK(doca_mmap_add_dev(m, b->dev));
	T_OK(doca_mmap_enable_thread_safety(m));
	T_OK(doca_mmap_start(m));
	T_TRUE(doca_mmap_enable_thread_safety(m) == DOCA_ERROR_BAD_STATE);
	/* NVIDIA's storage DPU program enables it on the map it imports (here: imported in the same process) */
	T_OK(doca_mmap_export_pci(m, b->dev, &desc, &len));
	T_OK(doca_mmap_create_from_export(NULL, desc, len, b->dev, &imported));
	T_OK(doca_mmap_enable_thread_safety(imported));
	T_OK(doca_mmap_destroy(imported));
	T_OK(doca_mmap_destroy(m));
}

static void reuse(struct bench *b)
{
	static uint8_t src[LEN] __attribute__((aligned(PAGE))), dst[LEN] __attribute__((aligned(PAGE)));
	struct doca_mmap *ms = t_mmap(b->dev, src, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_mmap *md = t_mmap(b->dev, dst, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_buf *s, *d, *other;
	void *data;
	size_t n;
	uint32_t count;

	t_fill(src, LEN, 5);
	T_OK(doca_buf_inventory_buf_get_by_data(b->inv, ms, src, PAGE, &s));
	T_OK(doca_buf_inventory_buf_get_by_addr(b->inv, md, dst, PAGE, &d));
	copy(b, s, d);
	/* repointed: the third page of src to the fifth of dst */
	T_OK(doca_buf_inventory_buf_reuse_by_data(s, src + 2 * PAGE, 2 * PAGE));
	T_OK(doca_buf_inventory_buf_reuse_by_addr(d, dst + 4 * PAGE, 2 * PAGE));
	T_OK(doca_buf_get_data(s, &data));
	T_OK(doca_buf_get_data_len(s, &n));
	T_TRUE(data == src + 2 * PAGE && n == 2 * PAGE);
	T_OK(doca_buf_get_data_len(d, &n));
	T_TRUE(n == 0);
	copy(b, s, d);
	T_TRUE(memcmp(dst, src, PAGE) == 0 && memcmp(dst + 4 * PAGE, src + 2 * PAGE, 2 * PAGE) == 0);
	T_TRUE(dst[PAGE] == 0 && dst[3 * PAGE] == 0);
	/* refusals */
	T_TRUE(doca_buf_inventory_buf_reuse_by_addr(NULL, dst, PAGE) == DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_buf_inventory_buf_reuse_by_addr(d, dst + LEN - PAGE, 2 * PAGE) == DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_buf_inventory_buf_reuse_by_data(s, dst, PAGE) == DOCA_ERROR_INVALID_VALUE); /* another mmap's */
	T_OK(doca_buf_inventory_buf_get_by_addr(b->inv, md, dst, PAGE, &other));
	T_OK(doca_buf_chain_list(d, other));
	/* each element of a list (head or member) is repointed alone and the list stays: NVIDIA's gga_offload relay
	 * repoints both halves of its erasure-coding source list before each recover */
	memset(dst, 0, LEN);
	T_OK(doca_buf_inventory_buf_reuse_by_addr(d, dst + 6 * PAGE, PAGE));
	T_OK(doca_buf_inventory_buf_reuse_by_addr(other, dst + 2 * PAGE, PAGE));
	T_OK(doca_buf_get_list_len(d, &count));
	T_TRUE(count == 2);
	T_OK(doca_buf_inventory_buf_reuse_by_data(s, src, 2 * PAGE));
	copy(b, s, d); /* scattered in list order: the first page to the head's range, the second to the member's */
	T_TRUE(memcmp(dst + 6 * PAGE, src, PAGE) == 0 && memcmp(dst + 2 * PAGE, src + PAGE, PAGE) == 0);
	T_TRUE(dst[0] == 0 && dst[4 * PAGE] == 0 && dst[7 * PAGE] == 0);
	{
		/* a member of a list a submitted task holds is not repointed under the device (tasks hold the head) */
		struct doca_dma_task_memcpy *t;
		union doca_data none = { 0 };
		int want = done + 1;
		double deadline = t_now() + 20;

		T_OK(doca_buf_inventory_buf_reuse_by_addr(d, dst, PAGE));
		T_OK(doca_buf_inventory_buf_reuse_by_addr(other, dst + PAGE, PAGE));
		T_OK(doca_dma_task_memcpy_alloc_init(b->dma, s, d, none, &t));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
		T_TRUE(doca_buf_inventory_buf_reuse_by_addr(other, dst + 3 * PAGE, PAGE) == DOCA_ERROR_NOT_PERMITTED);
		T_TRUE(doca_buf_inventory_buf_reuse_by_addr(d, dst + 3 * PAGE, PAGE) == DOCA_ERROR_NOT_PERMITTED);
		while (done < want) {
			doca_pe_progress(b->pe);
			T_TRUE(failed == 0 && t_now() < deadline);
		}
		T_OK(doca_buf_inventory_buf_reuse_by_addr(other, dst + 3 * PAGE, PAGE));
		doca_task_free(doca_dma_task_memcpy_as_task(t));
	}
	T_OK(doca_buf_dec_refcount(d, NULL));
	T_TRUE(doca_buf_inventory_buf_reuse_by_addr(d, dst, PAGE) == DOCA_ERROR_NOT_PERMITTED);     /* back home */
	T_TRUE(doca_buf_inventory_buf_reuse_by_addr(other, dst, PAGE) == DOCA_ERROR_NOT_PERMITTED); /* and its member */
	{
		/* held by a submitted task: not repointed under the device */
		struct doca_dma_task_memcpy *t;
		union doca_data none = { 0 };
		T_OK(doca_buf_inventory_buf_get_by_addr(b->inv, md, dst, PAGE, &d));
		T_OK(doca_buf_inventory_buf_reuse_by_data(s, src, PAGE));
		T_OK(doca_dma_task_memcpy_alloc_init(b->dma, s, d, none, &t));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
		T_TRUE(doca_buf_inventory_buf_reuse_by_data(s, src + PAGE, PAGE) == DOCA_ERROR_NOT_PERMITTED);
		while (done == 0 || failed != 0 || doca_buf_inventory_buf_reuse_by_data(s, src + PAGE, PAGE) != DOCA_SUCCESS)
			doca_pe_progress(b->pe);
		doca_task_free(doca_dma_task_memcpy_as_task(t));
	}
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
	T_OK(doca_mmap_destroy(ms));
	T_OK(doca_mmap_destroy(md));
}

/* LEN bytes copied from src (in map ms) to dst (in map md), which then holds t_fill's pattern 9 */
static void copy_checked(struct bench *b, struct doca_mmap *ms, uint8_t *src, struct doca_mmap *md, uint8_t *dst)
{
	struct doca_buf *s, *d;

	T_OK(doca_buf_inventory_buf_get_by_data(b->inv, ms, src, LEN, &s));
	T_OK(doca_buf_inventory_buf_get_by_addr(b->inv, md, dst, LEN, &d));
	copy(b, s, d);
	T_TRUE(t_check(dst, LEN, 9));
	T_OK(doca_buf_dec_refcount(s, NULL));
	T_OK(doca_buf_dec_refcount(d, NULL));
}

/* A local DMA copy from `plain` into the dma-buf map and back out: both directions reach the dma-buf's pages */
static void copy_through(struct bench *b, struct doca_mmap *dmabuf_map, uint8_t *mapped)
{
	static uint8_t plain[LEN] __attribute__((aligned(PAGE))), back[LEN] __attribute__((aligned(PAGE)));
	struct doca_mmap *mp = t_mmap(b->dev, plain, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_mmap *mb = t_mmap(b->dev, back, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);

	t_fill(plain, LEN, 9);
	memset(back, 0, LEN);
	copy_checked(b, mp, plain, dmabuf_map, mapped);
	copy_checked(b, dmabuf_map, mapped, mb, back);
	T_OK(doca_mmap_destroy(mp));
	T_OK(doca_mmap_destroy(mb));
}

static struct doca_mmap *dmabuf_map(struct bench *b, int fd, void *addr, size_t offset, doca_error_t want)
{
	struct doca_mmap *m;
	T_OK(doca_mmap_create(&m));
	if (doca_mmap_set_dmabuf_memrange(m, fd, addr, offset, LEN) != want) {
		fprintf(stderr, "memory_api: set_dmabuf_memrange(offset %zu) did not return %s\n", offset,
			doca_error_get_name(want));
		exit(1);
	}
	if (want != DOCA_SUCCESS) {
		T_OK(doca_mmap_destroy(m));
		return NULL;
	}
	T_OK(doca_mmap_set_permissions(m, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	T_OK(doca_mmap_add_dev(m, b->dev));
	T_OK(doca_mmap_start(m));
	return m;
}

static void dmabuf_memfd(struct bench *b)
{
	static uint8_t anon[LEN] __attribute__((aligned(PAGE)));
	int fd = memfd_create("memory-api", MFD_CLOEXEC);
	uint8_t *mapped;
	struct doca_mmap *m;

	T_TRUE(fd >= 0 && ftruncate(fd, 2 * LEN) == 0);
	/* the second half of the file, mapped */
	mapped = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, LEN);
	T_TRUE(mapped != MAP_FAILED);
	T_OK(doca_mmap_create(&m));
	T_TRUE(doca_mmap_set_dmabuf_memrange(m, -1, mapped, LEN, LEN) == DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_mmap_set_dmabuf_memrange(m, fd, NULL, LEN, LEN) == DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_mmap_set_dmabuf_memrange(m, fd, mapped, SIZE_MAX - 8, LEN) == DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_destroy(m));
	dmabuf_map(b, fd, mapped, 0, DOCA_ERROR_INVALID_VALUE);       /* mapped from LEN, not 0 */
	dmabuf_map(b, fd, anon, LEN, DOCA_ERROR_INVALID_VALUE);       /* not the dma-buf's pages */
	dmabuf_map(b, fd, mapped, 2 * LEN, DOCA_ERROR_INVALID_VALUE); /* past the end of the file */
	m = dmabuf_map(b, fd, mapped, LEN, DOCA_SUCCESS);
	T_TRUE(doca_mmap_set_dmabuf_memrange(m, fd, mapped, LEN, LEN) == DOCA_ERROR_BAD_STATE);
	/* the device holds its own reference: the caller may close its fd */
	T_TRUE(close(fd) == 0);
	copy_through(b, m, mapped);
	T_OK(doca_mmap_destroy(m));
	{
		/* a range set once cannot be set again */
		struct doca_mmap *twice;
		T_OK(doca_mmap_create(&twice));
		T_OK(doca_mmap_set_memrange(twice, anon, LEN));
		fd = memfd_create("memory-api", MFD_CLOEXEC);
		T_TRUE(fd >= 0 && ftruncate(fd, LEN) == 0);
		T_TRUE(doca_mmap_set_dmabuf_memrange(twice, fd, anon, 0, LEN) == DOCA_ERROR_NOT_PERMITTED);
		close(fd);
		T_OK(doca_mmap_destroy(twice));
	}
	munmap(mapped, LEN);
}

/* /dev/udmabuf's ioctl (include/uapi/linux/udmabuf.h), declared here so older headers build */
struct t_udmabuf_create {
	uint32_t memfd;
	uint32_t flags;
	uint64_t offset;
	uint64_t size;
};
#define T_UDMABUF_CREATE _IOW('u', 0x42, struct t_udmabuf_create)
#define T_UDMABUF_FLAGS_CLOEXEC 0x01

static void dmabuf_udmabuf(struct bench *b)
{
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	int memfd, buf;
	uint8_t *mapped;
	struct doca_mmap *m;
	struct t_udmabuf_create create = { 0 };

	if (dev < 0) {
		t_say("memory_api: udmabuf absent");
		return;
	}
	memfd = memfd_create("memory-api-udmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	T_TRUE(memfd >= 0 && ftruncate(memfd, LEN) == 0 && fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
	create.memfd = (uint32_t)memfd;
	create.flags = T_UDMABUF_FLAGS_CLOEXEC;
	create.size = LEN;
	buf = ioctl(dev, T_UDMABUF_CREATE, &create);
	T_TRUE(buf >= 0);
	mapped = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
	T_TRUE(mapped != MAP_FAILED);
	m = dmabuf_map(b, buf, mapped, 0, DOCA_SUCCESS);
	copy_through(b, m, mapped);
	T_OK(doca_mmap_destroy(m));
	munmap(mapped, LEN);
	close(buf);
	close(memfd);
	close(dev);
	t_say("memory_api: udmabuf ok");
}

int main(void)
{
	struct bench b;

	b.dev = t_open_first_dev();
	T_OK(doca_pe_create(&b.pe));
	T_OK(doca_dma_create(b.dev, &b.dma));
	T_OK(doca_dma_task_memcpy_set_conf(b.dma, ok_cb, err_cb, 4));
	T_OK(doca_pe_connect_ctx(b.pe, doca_dma_as_ctx(b.dma)));
	T_OK(doca_ctx_start(doca_dma_as_ctx(b.dma)));
	T_OK(doca_buf_inventory_create(8, &b.inv));
	T_OK(doca_buf_inventory_start(b.inv));
	thread_safety(&b);
	t_say("memory_api: thread safety ok");
	reuse(&b);
	t_say("memory_api: reuse ok");
	dmabuf_memfd(&b);
	dmabuf_udmabuf(&b);
	t_say("memory_api: dma-buf ok");
	t_say("memory_api: ok");
	return 0;
}
