/*
 * doca_mmap_set_dmabuf_memrange: a memory range given as a dma-buf.
 *
 * On hardware the device imports the dma-buf (a GPU's memory, or host pages exported by /dev/udmabuf) and reaches its
 * pages without the CPU. The software device's DMA engine reaches memory through a process's address space, so its
 * stand-in asks for the dma-buf to be mapped in this process at addr, and checks that it is: every mapping covering
 * [addr, addr+len) must be that file (device and inode of dmabuf_fd) at the matching offset, and the file must be
 * long enough. Any fd that can be so mapped passes: a real dma-buf from /dev/udmabuf where the kernel offers it, or
 * a memfd where it does not (sim/README.md). The device keeps its own reference (a duplicate of the fd) until the
 * mmap is destroyed, as a dma-buf import pins the buffer.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "vma.h"

#define MAX_MAPPINGS 16

/* Is [addr, addr+len) this process's mapping of the file st at file offset `offset`? */
static doca_error_t check_mapped(const struct stat *st, uint64_t addr, uint64_t len, uint64_t offset)
{
	struct sim_vma_id maps[MAX_MAPPINGS];
	uint32_t count = 0;
	int fd = sim_vma_open_maps(getpid());
	doca_error_t err;

	if (fd < 0)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "doca_mmap_set_dmabuf_memrange: cannot read /proc/self/maps");
	err = sim_vma_record(fd, addr, len, maps, MAX_MAPPINGS, &count);
	close(fd);
	if (err != DOCA_SUCCESS)
		return sim_fail(err == DOCA_ERROR_NOT_SUPPORTED ? DOCA_ERROR_NOT_SUPPORTED : DOCA_ERROR_INVALID_VALUE,
				"doca_mmap_set_dmabuf_memrange: [0x%llx, +%llu) is not mapped in this process",
				(unsigned long long)addr, (unsigned long long)len);
	for (uint32_t i = 0; i < count; i++) {
		const struct sim_vma_id *m = &maps[i];
		uint64_t from = m->start > addr ? m->start : addr;

		if (m->inode != (uint64_t)st->st_ino || m->dev_major != major(st->st_dev) ||
		    m->dev_minor != minor(st->st_dev) || m->offset + (from - m->start) != offset + (from - addr))
			return sim_fail(DOCA_ERROR_INVALID_VALUE,
					"doca_mmap_set_dmabuf_memrange: 0x%llx is not the dma-buf mapped at offset %llu",
					(unsigned long long)from, (unsigned long long)(offset + (from - addr)));
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len)
{
	struct stat st;
	off_t size;
	int own;
	doca_error_t err;

	if (mmap == NULL || addr == NULL || len == 0 || dmabuf_fd < 0 || (uintptr_t)addr + len < (uintptr_t)addr ||
	    dmabuf_offset + len < dmabuf_offset)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid range or fd", __func__);
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	err = sim_mmap_range_settable(mmap, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	if (fstat(dmabuf_fd, &st) != 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: fd %d is not open", __func__, dmabuf_fd);
	/* a dma-buf tells its size by seeking to its end, as a memfd does */
	size = lseek(dmabuf_fd, 0, SEEK_END);
	if (size < 0 || (uint64_t)size < dmabuf_offset + len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: offset %zu + length %zu past the dma-buf's %lld bytes",
				__func__, dmabuf_offset, len, (long long)size);
	err = check_mapped(&st, (uint64_t)(uintptr_t)addr, len, dmabuf_offset);
	if (err != DOCA_SUCCESS)
		return err;
	own = fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "%s: cannot hold a reference to fd %d", __func__, dmabuf_fd);
	mmap->dmabuf_fd = own;
	mmap->has_dmabuf = true;
	mmap->base = addr;
	mmap->len = len;
	return DOCA_SUCCESS;
}
