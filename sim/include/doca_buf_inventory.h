/*
 * Software DOCA device: a fixed pool of doca_buf descriptors.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;
struct doca_buf_inventory;

DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory);

/* DOCA_ERROR_IN_USE while bufs are still taken */
DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

/* Take a buf for [addr, addr+len) with data [data, data+data_len); the range must lie inside the mmap's range
 * (DOCA_ERROR_INVALID_VALUE) and the inventory must have a free element (DOCA_ERROR_NO_MEMORY). */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory,
						struct doca_mmap *mmap,
						void *addr,
						size_t len,
						void *data,
						size_t data_len,
						struct doca_buf **buf);

/* A buf covering [addr, addr+len) holding no data yet (typical DMA destination) */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap,
							      void *addr,
							      size_t len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

/* A buf whose data is all of [data, data+data_len) (typical DMA source) */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap,
							      void *data,
							      size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

/* Point a taken buf (a list head of one element, no task in flight) at [addr, addr+len) with data
 * [data, data+data_len) of the same mmap, without going back to its inventory. The range must lie inside the mmap's
 * range (DOCA_ERROR_INVALID_VALUE); a buf in a list or held by a submitted task is DOCA_ERROR_NOT_PERMITTED. */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_reuse_by_args(struct doca_buf *buf, void *addr, size_t len, void *data,
						  size_t data_len);

/* Reuse as an empty buffer over [addr, addr+len) (a destination) */
static inline doca_error_t doca_buf_inventory_buf_reuse_by_addr(struct doca_buf *buf, void *addr, size_t len)
{
	return doca_buf_inventory_buf_reuse_by_args(buf, addr, len, addr, 0);
}

/* Reuse as a buffer whose data is all of [data, data+data_len) (a source) */
static inline doca_error_t doca_buf_inventory_buf_reuse_by_data(struct doca_buf *buf, void *data, size_t data_len)
{
	return doca_buf_inventory_buf_reuse_by_args(buf, data, data_len, data, data_len);
}

DOCA_STABLE
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory,
					const struct doca_buf *src_buf,
					struct doca_buf **dst_buf);

DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory, uint32_t *num_of_elements);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory, union doca_data *user_data);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
