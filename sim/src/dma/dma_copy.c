/*
 * Data movement of the DMA memcpy task. Local memory is copied with memcpy; memory of another process (an mmap created
 * from an export) through sim_remote_copy (remote.c: one process_vm_readv/writev per piece, repeated only if the
 * kernel transfers part of it, after the export, range, page and protection checks). The export permissions are
 * checked here, and never a byte outside the exported range is accessed.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "dma_internal.h"
#include "vma.h"

#define PCI_ACCESS (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)

doca_error_t sim_dma_validate(const struct doca_dma *dma, const struct doca_dma_task_memcpy *task)
{
	const struct sim_caps *caps = &dma->ctx.dev->info->caps;
	const struct doca_buf *src = task->src;
	const struct doca_buf *dst = task->dst;
	uint64_t total = 0, room = 0;
	uint32_t n = 0;

	if (src == NULL || dst == NULL || src->mmap == NULL || dst->mmap == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: missing or released buffer");
	if (src->list_len == 0 || dst->list_len == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: a buffer is not the head of its list");
	/* DOCA leaves a data section outside its buffer undefined; here it never reaches memory */
	for (const struct doca_buf *b = src; b != NULL; b = b->next)
		if (!sim_buf_data_fits(b, b->data, b->data_len))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: source data outside its buffer");
	for (const struct doca_buf *b = dst; b != NULL; b = b->next)
		if (!sim_buf_data_fits(b, b->data, b->data_len))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: destination data outside its buffer");
	/* Source: the data of every element, in list order (gather) */
	for (const struct doca_buf *b = src; b != NULL; b = b->next, n++)
		total += b->data_len;
	if (n > caps->dma_max_buf_list_len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: source list of %u exceeds %u", n,
				caps->dma_max_buf_list_len);
	/* Destination: the free tail of every element, in list order (scatter) */
	n = 0;
	for (const struct doca_buf *b = dst; b != NULL; b = b->next, n++)
		room += sim_buf_tail_room(b);
	if (n > caps->dma_max_buf_list_len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: destination list of %u exceeds %u", n,
				caps->dma_max_buf_list_len);
	if (total > caps->dma_max_buf_size)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: %llu bytes exceed the max buf size %llu",
				(unsigned long long)total, (unsigned long long)caps->dma_max_buf_size);
	if (total > room)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "dma memcpy: %llu bytes do not fit the destination (%llu free)",
				(unsigned long long)total, (unsigned long long)room);
	return DOCA_SUCCESS;
}

/* Permission and liveness checks for one side, traced when it is remote */
static doca_error_t check_side(const struct doca_mmap *mmap, uint64_t addr, size_t len, bool is_dst)
{
	doca_error_t err = DOCA_SUCCESS;

	if (!mmap->from_export) {
		if (is_dst && !(mmap->permissions & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE))
			err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "dma memcpy: local destination is read-only");
		return err;
	}
	if (is_dst && !(mmap->permissions & DOCA_ACCESS_FLAG_PCI_READ_WRITE))
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "dma memcpy: remote destination exported without PCI_READ_WRITE");
	else if (!is_dst && !(mmap->permissions & PCI_ACCESS))
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "dma memcpy: remote source exported without PCI read access");
	else
		err = sim_remote_check(mmap, addr, len);
	sim_trace_remote(mmap, addr, len, is_dst ? 'w' : 'r', err == DOCA_SUCCESS ? "allowed" : doca_error_get_name(err));
	return err;
}

/* Copy one piece whose source and destination are each contiguous */
static doca_error_t copy_piece(const struct doca_mmap *smap, uint64_t from, const struct doca_mmap *dmap, uint64_t to,
			       size_t len)
{
	bool src_remote = smap->from_export && smap->remote.pid != getpid();
	bool dst_remote = dmap->from_export && dmap->remote.pid != getpid();

	if (src_remote && dst_remote)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "dma memcpy: both buffers are in other processes");
	if (src_remote)
		return sim_remote_copy(smap, true, (void *)(uintptr_t)to, from, len);
	if (dst_remote)
		return sim_remote_copy(dmap, false, (void *)(uintptr_t)from, to, len);
	/* same process: re-check imported mmaps of our own exports like remote ones (a page gone would crash us) */
	if (smap->from_export && (sim_remote_check(smap, from, len) != DOCA_SUCCESS ||
				  sim_remote_check_pages(smap, from, len, SIM_VMA_READ) != DOCA_SUCCESS))
		return DOCA_ERROR_NOT_PERMITTED;
	if (dmap->from_export && (sim_remote_check(dmap, to, len) != DOCA_SUCCESS ||
				  sim_remote_check_pages(dmap, to, len, SIM_VMA_WRITE) != DOCA_SUCCESS))
		return DOCA_ERROR_NOT_PERMITTED;
	memmove((void *)(uintptr_t)to, (const void *)(uintptr_t)from, len);
	return DOCA_SUCCESS;
}

/* Bytes the copy will put into each destination element, filled in list order */
static size_t dst_share(const struct doca_buf *dst, const struct doca_buf *elem, size_t total)
{
	for (const struct doca_buf *b = dst; b != NULL; b = b->next) {
		size_t take = sim_buf_tail_room(b) < total ? sim_buf_tail_room(b) : total;

		if (b == elem)
			return take;
		total -= take;
	}
	return 0;
}

doca_error_t sim_dma_execute(const struct doca_dma *dma, struct doca_dma_task_memcpy *task)
{
	const struct doca_buf *src = task->src;
	struct doca_buf *dst = task->dst;
	const struct doca_buf *s;
	struct doca_buf *d;
	size_t total = 0, s_off = 0, d_off = 0;
	doca_error_t err = DOCA_SUCCESS;

	/* Check every element before moving any byte: a task either copies everything or nothing it was refused */
	for (s = src; s != NULL && err == DOCA_SUCCESS; s = s->next) {
		total += s->data_len;
		if (!sim_mmap_has_dev(s->mmap, dma->ctx.dev))
			err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "dma memcpy: the DMA device was not added to the source mmap");
		else if (s->data_len > 0)
			err = check_side(s->mmap, (uint64_t)(uintptr_t)s->data, s->data_len, false);
	}
	for (d = dst; d != NULL && err == DOCA_SUCCESS; d = d->next) {
		size_t share = dst_share(dst, d, total);

		if (!sim_mmap_has_dev(d->mmap, dma->ctx.dev))
			err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "dma memcpy: the DMA device was not added to the destination mmap");
		else if (share > 0)
			err = check_side(d->mmap, (uint64_t)(uintptr_t)d->data + d->data_len, share, true);
	}
	if (err != DOCA_SUCCESS)
		return err;

	/* Walk both lists; with single buffers this is exactly one memcpy or one process_vm call */
	s = src;
	d = dst;
	while (total > 0 && s != NULL && d != NULL) {
		size_t s_left = s->data_len - s_off;
		size_t d_left = sim_buf_tail_room(d) - d_off;
		size_t piece = s_left < d_left ? s_left : d_left;

		if (piece > 0) {
			err = copy_piece(s->mmap, (uint64_t)(uintptr_t)s->data + s_off, d->mmap,
					 (uint64_t)(uintptr_t)d->data + d->data_len + d_off, piece);
			if (err != DOCA_SUCCESS)
				return err;
			s_off += piece;
			d_off += piece;
			total -= piece;
		}
		if (s_off == s->data_len) {
			s = s->next;
			s_off = 0;
		}
		if (d_off == sim_buf_tail_room(d) || total == 0) {
			d->data_len += d_off;
			d = d->next;
			d_off = 0;
		}
	}
	return DOCA_SUCCESS;
}
