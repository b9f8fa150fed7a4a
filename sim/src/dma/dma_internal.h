/*
 * Shared between dma.c (context, tasks) and dma_copy.c (validation and data movement).
 */
#ifndef SIM_DMA_INTERNAL_H_
#define SIM_DMA_INTERNAL_H_

#include <doca_dma.h>

#include "internal.h"
#include "task_pool.h"

struct doca_dma_task_memcpy {
	struct doca_task task; /* first: the generic code sees a struct doca_task */
	const struct doca_buf *src;
	struct doca_buf *dst;
};

struct doca_dma {
	struct doca_ctx ctx; /* first: doca_dma_as_ctx is a cast */
	struct sim_task_pool pool; /* memcpy tasks (task_pool.c) */
};

/* Validation (doca_task_try_submit, and before executing): buffers present, data inside their buffers, sizes within
 * the device caps and the destination's room */
doca_error_t sim_dma_validate(const struct doca_dma *dma, const struct doca_dma_task_memcpy *task);
/* Move the bytes (memcpy or process_vm_readv/writev) after the permission and export checks; the task's status */
doca_error_t sim_dma_execute(const struct doca_dma *dma, struct doca_dma_task_memcpy *task);

#endif /* SIM_DMA_INTERNAL_H_ */
