/*
 * What the accelerator tests (compress, SHA, AES-GCM, erasure coding) share around their context: one local memory
 * area with an mmap and a started inventory over it, buffer lists cut from it, the teardown of it all, the completion
 * callback that records a task's status, and the random numbers of their fuzz loops.
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

/* A completion callback (for success and error alike) of tasks of type struct task_type whose user data points to an
 * `owner` with the fields done and status: records the task's status, counts it and frees the task */
#define T_RECORDING_CB(name, task_type, as_task, owner) \
	static void name(struct task_type *task, union doca_data task_user_data, union doca_data ctx_user_data) \
	{ \
		owner *o_ = task_user_data.ptr; \
		(void)ctx_user_data; \
		o_->status = doca_task_get_status(as_task(task)); \
		o_->done++; \
		doca_task_free(as_task(task)); \
	}

/* The fuzz loops' random numbers: xorshift64 from rng_state, which the loop seeds (nonzero) so a run repeats */
static uint64_t rng_state __attribute__((unused)); /* unused by the tests without a fuzz loop */
static inline uint32_t rnd(uint32_t below)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % below);
}

#endif /* SIM_ACCEL_TEST_UTIL_H_ */
