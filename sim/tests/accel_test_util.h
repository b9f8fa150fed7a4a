/*
 * What the accelerator tests (compress, SHA, AES-GCM, erasure coding) share around their context: one local memory
 * area with an mmap and a started inventory over it, buffer lists cut from it, and the teardown of it all.
 */
#ifndef SIM_ACCEL_TEST_UTIL_H_
#define SIM_ACCEL_TEST_UTIL_H_

#include <stdbool.h>
#include <stdlib.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "sim_test_util.h"

/* `len` bytes aligned to `align`, mapped read-write for dev, and an inventory of `num_bufs` over them */
static inline uint8_t *t_local_area(struct doca_dev *dev, size_t len, size_t align, uint32_t num_bufs,
				    struct doca_mmap **mmap, struct doca_buf_inventory **inv)
{
	uint8_t *area = aligned_alloc(align, (len + align - 1) / align * align);

	T_TRUE(area != NULL);
	*mmap = t_mmap(dev, area, len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_buf_inventory_create(num_bufs, inv));
	T_OK(doca_buf_inventory_start(*inv));
	return area;
}

/* After the context is destroyed: the engine, the inventory, the mmap, the device and the area */
static inline void t_local_close(struct doca_pe *pe, struct doca_buf_inventory *inv, struct doca_mmap *mmap,
				 struct doca_dev *dev, uint8_t *area)
{
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(mmap));
	T_OK(doca_dev_close(dev));
	free(area);
}

/* A buf list over [p, p + len) cut into `pieces` elements (at most one per byte); data set when `full`, all room
 * otherwise */
static inline struct doca_buf *t_buf_list(struct doca_buf_inventory *inv, struct doca_mmap *mmap, uint8_t *p,
					  size_t len, unsigned pieces, bool full)
{
	struct doca_buf *head = NULL;
	size_t off = 0;

	if (pieces > len)
		pieces = len > 0 ? (unsigned)len : 1;
	for (unsigned k = 0; k < pieces; k++) {
		size_t part = k + 1 == pieces ? len - off : len / pieces;
		struct doca_buf *b;

		T_OK(doca_buf_inventory_buf_get_by_args(inv, mmap, p + off, part, p + off, full ? part : 0, &b));
		if (head == NULL)
			head = b;
		else
			T_OK(doca_buf_chain_list(head, b));
		off += part;
	}
	return head;
}

#endif /* SIM_ACCEL_TEST_UTIL_H_ */
