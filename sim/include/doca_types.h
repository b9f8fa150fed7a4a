/*
 * Software DOCA device: types shared by every DOCA library (values identical to DOCA's doca_types.h).
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file descriptor that becomes readable when a progress engine has something to do (epoll/poll/select). */
typedef int doca_event_handle_t;
#define doca_event_invalid_handle -1
typedef doca_event_handle_t doca_notification_handle_t;

#define DOCA_GID_BYTE_LENGTH 16

/* 8 bytes of user data carried by contexts, tasks and connections; passed by value like a uint64_t. */
union doca_data {
	void *ptr;
	uint64_t u64;
};

/* The objects most libraries' prototypes name, declared once here (every library header includes this one) */
struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_task;

struct doca_gather_list {
	void *addr;
	uint64_t len;
	struct doca_gather_list *next;
};

/* Who may access the memory of an mmap (bit mask for doca_mmap_set_permissions). PCI_READ_ONLY and PCI_READ_WRITE
 * are mutually exclusive; the local device may always read. */
enum doca_access_flag {
	DOCA_ACCESS_FLAG_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE = (1 << 0),
	DOCA_ACCESS_FLAG_RDMA_READ = (1 << 1),
	DOCA_ACCESS_FLAG_RDMA_WRITE = (1 << 2),
	DOCA_ACCESS_FLAG_RDMA_ATOMIC = (1 << 3),
	DOCA_ACCESS_FLAG_PCI_READ_ONLY = (1 << 4),  /* the peer across PCIe may read (doca_mmap_export_pci) */
	DOCA_ACCESS_FLAG_PCI_READ_WRITE = (1 << 5), /* the peer across PCIe may read and write */
	DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING = (1 << 6),
};

/* Kind of PCI function a device or representor is */
enum doca_pci_func_type {
	DOCA_PCI_FUNC_TYPE_PF = 0,
	DOCA_PCI_FUNC_TYPE_VF,
	DOCA_PCI_FUNC_TYPE_SF,
};

typedef uint16_t doca_be16_t;
typedef uint32_t doca_be32_t;
typedef uint64_t doca_be64_t;

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
