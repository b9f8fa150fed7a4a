/*
 * Software DOCA device: memory maps. An mmap describes one memory range, who may access it (permissions) and which
 * devices may; doca_mmap_export_pci publishes it for the other side of the PCIe link, which maps it with
 * doca_mmap_create_from_export. Stopping or destroying the exporter revokes every import.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_mmap;

/* Called on destroy of a started mmap to release its range (doca_mmap_set_free_cb) */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *cookie);

DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap);

/* DOCA_ERROR_NOT_PERMITTED while bufs still point into the mmap; implies stop */
DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/* Frees the export descriptor and invalidates every mmap created from it */
DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);

DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Serialise the mmap for the other side of PCIe; the descriptor is owned by the mmap (valid until stop/destroy).
 * Needs a started mmap with DOCA_ACCESS_FLAG_PCI_READ_ONLY or _PCI_READ_WRITE and dev added to it. */
DOCA_STABLE
doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap,
				  const struct doca_dev *dev,
				  const void **export_desc,
				  size_t *export_desc_len);

/* Map memory exported by another process; dev must be connected to the exporting device */
/* Publish a started mmap for RDMA peers (doca_rdma): the descriptor carries the range, the RDMA permissions and a
 * random key; a peer's doca_mmap_create_from_export of it names this memory in its RDMA tasks. dev must be added.
 * An mmap created from a PCI export may be re-exported so (a memory chain: the peer's RDMA reaches the exporter's
 * memory, with the RDMA rights the exporter granted and its PCI rights intersected; sim/RDMA.md). */
DOCA_STABLE
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len);

DOCA_STABLE
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data,
					  const void *export_desc,
					  size_t export_desc_len,
					  struct doca_dev *dev,
					  struct doca_mmap **mmap);

/* The range can be set once, before start */
DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/* The range as a dma-buf: dmabuf_fd (a dma-buf, e.g. from /dev/udmabuf, or on the software device a memfd) mapped
 * at addr in this process from dmabuf_offset, len bytes. The device holds its own reference to the fd until the mmap
 * is destroyed. Same state rules as doca_mmap_set_memrange (sim/README.md: the stand-in's checks). */
DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len);

DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

DOCA_STABLE
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices);

DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

DOCA_STABLE
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs);

DOCA_STABLE
doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported);

DOCA_STABLE
doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export);

/* Bit mask of enum doca_access_flag; before start */
/* Allow the mmap (and bufs over it) to be used from several threads at once. Before doca_mmap_start, or on an mmap
 * created from an export; BAD_STATE on a started one. The software device's maps are always safe to share. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *mmap);

DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

DOCA_STABLE
doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

DOCA_STABLE
doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo,
							       uint8_t *from_export);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
