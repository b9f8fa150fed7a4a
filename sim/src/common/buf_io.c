/*
 * Reading and writing the bytes of buffer lists for the accelerator libraries (erasure coding, AES-GCM): a task's
 * source is the data of every element in list order, its output is appended after each element's data, filling
 * the free tail of one element after the other (as DMA scatters). Memory of another process (an mmap created from
 * an export) goes through sim_remote_copy with its checks; a task's bytes never reach outside the buffers.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "vma.h"

#define PCI_ACCESS (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)

size_t sim_bufs_data_len(const struct doca_buf *list)
{
	size_t total = 0;

	for (const struct doca_buf *b = list; b != NULL; b = b->next)
		total += b->data_len;
	return total;
}

size_t sim_bufs_tail_room(const struct doca_buf *list)
{
	size_t total = 0;

	for (const struct doca_buf *b = list; b != NULL; b = b->next)
		total += sim_buf_tail_room(b);
	return total;
}

doca_error_t sim_bufs_check(const struct doca_buf *list, const struct doca_dev *dev, uint32_t max_list_len,
			    bool is_dst)
{
	uint32_t n = 0;

	if (list == NULL || list->mmap == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "accel: missing or released buffer");
	if (list->list_len == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "accel: a buffer is not the head of its list");
	for (const struct doca_buf *b = list; b != NULL; b = b->next, n++) {
		if (b->mmap == NULL || !sim_buf_data_fits(b, b->data, b->data_len))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "accel: data outside its buffer");
		if (dev != NULL && !sim_mmap_has_dev(b->mmap, dev))
			return sim_fail(DOCA_ERROR_NOT_PERMITTED, "accel: the device was not added to a buffer's mmap");
		if (b->mmap->rdma_remote)
			return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "accel: a buffer of an RDMA peer's memory");
		if (b->mmap->from_export) {
			if (is_dst && !(b->mmap->permissions & DOCA_ACCESS_FLAG_PCI_READ_WRITE))
				return sim_fail(DOCA_ERROR_NOT_PERMITTED, "accel: remote destination is read-only");
			if (!is_dst && !(b->mmap->permissions & PCI_ACCESS))
				return sim_fail(DOCA_ERROR_NOT_PERMITTED, "accel: remote source without PCI read access");
		} else if (is_dst && !(b->mmap->permissions & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)) {
			return sim_fail(DOCA_ERROR_NOT_PERMITTED, "accel: local destination is read-only");
		}
	}
	if (n > max_list_len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "accel: list of %u elements exceeds %u", n, max_list_len);
	return DOCA_SUCCESS;
}

/* One contiguous piece between local memory `local` and [addr, addr + len) of buf's mmap */
static doca_error_t move_piece(const struct doca_buf *b, uint64_t addr, void *local, size_t len, bool read)
{
	const struct doca_mmap *mmap = b->mmap;

	if (len == 0)
		return DOCA_SUCCESS;
	if (!mmap->from_export) {
		if (read)
			memmove(local, (const void *)(uintptr_t)addr, len);
		else
			memmove((void *)(uintptr_t)addr, local, len);
		return DOCA_SUCCESS;
	}
	if (mmap->remote.pid != getpid())
		return sim_remote_copy(mmap, read, local, addr, len);
	if (sim_remote_check(mmap, addr, len) != DOCA_SUCCESS ||
	    sim_remote_check_pages(mmap, addr, len, read ? SIM_VMA_READ : SIM_VMA_WRITE) != DOCA_SUCCESS)
		return DOCA_ERROR_NOT_PERMITTED;
	if (read)
		memmove(local, (const void *)(uintptr_t)addr, len);
	else
		memmove((void *)(uintptr_t)addr, local, len);
	return DOCA_SUCCESS;
}

doca_error_t sim_bufs_read(const struct doca_buf *list, void *out, size_t len)
{
	uint8_t *to = out;

	for (const struct doca_buf *b = list; b != NULL && len > 0; b = b->next) {
		size_t piece = b->data_len < len ? b->data_len : len;
		doca_error_t err = move_piece(b, (uint64_t)(uintptr_t)b->data, to, piece, true);

		if (err != DOCA_SUCCESS)
			return err;
		to += piece;
		len -= piece;
	}
	return len == 0 ? DOCA_SUCCESS : sim_fail(DOCA_ERROR_INVALID_VALUE, "accel: source shorter than expected");
}

const uint8_t *sim_bufs_direct(const struct doca_buf *list)
{
	if (list == NULL || list->next != NULL || list->mmap == NULL || list->mmap->from_export)
		return NULL;
	return list->data;
}

uint8_t *sim_bufs_direct_tail(struct doca_buf *list, size_t len)
{
	if (sim_bufs_direct(list) == NULL || sim_buf_tail_room(list) < len)
		return NULL;
	return (uint8_t *)list->data + list->data_len;
}

doca_error_t sim_bufs_append(struct doca_buf *list, const void *in, size_t len)
{
	const uint8_t *from = in;

	if (sim_bufs_tail_room(list) < len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "accel: %zu bytes do not fit the destination", len);
	for (struct doca_buf *b = list; b != NULL && len > 0; b = b->next) {
		size_t room = sim_buf_tail_room(b);
		size_t piece = room < len ? room : len;
		doca_error_t err = move_piece(b, (uint64_t)(uintptr_t)b->data + b->data_len, (void *)from, piece, false);

		if (err != DOCA_SUCCESS)
			return err;
		b->data_len += piece;
		from += piece;
		len -= piece;
	}
	return DOCA_SUCCESS;
}
