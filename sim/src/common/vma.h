/*
 * Identity of the mappings behind an exported range (docs/FAULTS.md, "memory is bound to pages").
 *
 * At export the exporter records each mapping covering the range, as the kernel shows it in /proc/PID/maps: bounds,
 * permissions (r/w/x, shared or private), and for a file-backed mapping its device, inode and file offset. Before every
 * remote access the importer asks the kernel, through a /proc/PID/maps descriptor it opened at import (bound to the
 * exporter's address space of that moment: after exec or exit it answers nothing), which mappings cover the bytes
 * and requires each to be one of those recorded, with the access the task needs (read: readable; write: writable).
 */
#ifndef SIM_VMA_H_
#define SIM_VMA_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

#define SIM_VMA_READ 0x01u
#define SIM_VMA_WRITE 0x02u
#define SIM_VMA_EXEC 0x04u
#define SIM_VMA_SHARED 0x08u
#define SIM_VMA_NAMED 0x100u /* anonymous memory named SIM_VMA_EXPORT_NAME by an export of its process */

/* Anonymous memory carries no identity in /proc/PID/maps (a fresh mapping at the same address looks the same), so an
 * export names its anonymous mappings (prctl PR_SET_VMA_ANON_NAME, Linux >= 5.17): a mapping made later over the
 * range has no name and is told apart. Where the kernel cannot name memory, anonymous memory mapped again at the
 * same address with the same protection counts as the registered pages (docs/FAULTS.md). */
#define SIM_VMA_EXPORT_NAME "doca-sim-export"

/* One mapping as the kernel reports it (the bit values above are PROCMAP_QUERY's) */
struct sim_vma_id {
	uint64_t start, end;
	uint64_t offset; /* file offset of start (0 for anonymous memory) */
	uint64_t inode;  /* 0 for anonymous memory */
	uint32_t dev_major, dev_minor;
	uint32_t prot;   /* SIM_VMA_* */
	uint32_t pad;
};

/* Opens /proc/PID/maps relative to /proc (qemu-user rewrites absolute paths naming the emulated process itself) */
int sim_vma_open_maps(pid_t pid);

/* The whole text of the maps open as maps_fd (malloc'd, NUL-terminated); NULL with *len 0 once the address space is
 * gone */
char *sim_vma_maps_text(int maps_fd, size_t *len);

/* Names this process's anonymous private memory in [base, base+len) SIM_VMA_EXPORT_NAME (best effort) */
void sim_vma_name_own(int maps_fd, uint64_t base, uint64_t len);

/* Records the mappings covering [base, base+len) of the process whose maps are open as maps_fd, at most max.
 * INVALID_VALUE if some byte of the range is not mapped, NOT_SUPPORTED if more than max mappings cover it. */
doca_error_t sim_vma_record(int maps_fd, uint64_t base, uint64_t len, struct sim_vma_id *out, uint32_t max,
			    uint32_t *count);

/* Checks that [addr, addr+len) is covered by the recorded mappings, unchanged, with access need (SIM_VMA_READ or
 * SIM_VMA_WRITE). DOCA_SUCCESS; IO_FAILED when the address space is gone (exit, exec); NOT_PERMITTED otherwise. */
doca_error_t sim_vma_check(int maps_fd, const struct sim_vma_id *rec, uint32_t count, uint64_t addr, uint64_t len,
			   uint32_t need);

#endif /* SIM_VMA_H_ */
