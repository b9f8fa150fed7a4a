/*
 * Export registry of the software device (the trust model is in docs/FAULTS.md).
 *
 * Each exporting process keeps its registry in an anonymous memory file (memfd "doca-sim-registry") that it alone
 * created: mode 0400, sealed against shrinking, growing and any new writable opening or mapping, mapped read-write
 * shared by the exporter only. Nothing of it lives in DOCA_SIM_DIR, so nothing there can be planted or replaced.
 *
 * The export descriptor handed to the importer names the exporter (pid and its start time, /proc/PID/stat field 22),
 * the registry (its fd number in the exporter, a random 64-bit nonce) and the entry (index, random 128-bit key, range,
 * permissions, device). An importer in another process proves the descriptor before trusting it: a pidfd pins the
 * process; its start time matches; its fd is a memfd of ours that it holds mapped read-write shared (/proc/PID/maps:
 * only the software device's exporter maps one so); the file's header repeats pid, start time and nonce; the entry is
 * live with that key, range, permissions and device. It then maps the file read-only and re-checks the entry (live
 * flag + key) and the pidfd (the exporter still runs, so its pid was not reused) before every DMA access, and that the
 * bytes are still the mappings recorded at export (vma.h). An importer naming itself is checked against its own
 * in-memory table instead, with the same rules.
 *
 * Revocation is a barrier: each remote access holds a shared flock(2) on the importer's own open of the registry memfd
 * from its checks to the end of its copy; the exporter's revocation takes the exclusive lock before clearing the
 * entry, so it waits for every access that passed its checks, and every later access sees the entry revoked.
 */
#ifndef SIM_REGISTRY_H_
#define SIM_REGISTRY_H_

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"
#include "vma.h"

#define SIM_REGISTRY_MAGIC 0x47455253u /* "SREG" */
#define SIM_REGISTRY_VERSION 3u
#define SIM_REGISTRY_ENTRIES 4096u
#define SIM_REGISTRY_PCIS 4u /* devices one mmap can be exported through */
#define SIM_REGISTRY_VMAS 16u /* mappings one export may span (vma.h) */
#define SIM_REGISTRY_MEMFD_NAME "doca-sim-registry"

#define SIM_DESC_MAGIC 0x58455344u /* "DSEX" */
#define SIM_DESC_VERSION 2u

struct sim_registry_entry {
	_Atomic uint32_t live;  /* 1 while the export is valid */
	uint32_t permissions;   /* DOCA_ACCESS_FLAG_* of the exported mmap */
	uint64_t base;          /* exported range in the exporter's address space */
	uint64_t len;
	uint8_t key[SIM_EXPORT_KEY_LEN];
	char pci[SIM_REGISTRY_PCIS][16]; /* devices the mmap was exported through ("" = unused) */
	uint32_t num_vmas;               /* the mappings that covered the range at export (vma.h) */
	uint32_t pad;
	struct sim_vma_id vmas[SIM_REGISTRY_VMAS];
};

struct sim_registry_header {
	uint32_t magic;
	uint32_t version;
	int32_t pid;
	uint32_t num_entries;
	uint64_t nonce;
	uint64_t start_time; /* the exporter's start time in clock ticks after boot (/proc/PID/stat field 22) */
};

/* The wire form of an export descriptor (host byte order; both sides run on this machine) */
struct sim_export_desc {
	uint32_t magic;
	uint16_t version;
	uint16_t length; /* sizeof(struct sim_export_desc) */
	int32_t pid;
	uint32_t index;
	uint64_t nonce;
	uint64_t start_time;
	uint8_t key[SIM_EXPORT_KEY_LEN];
	uint64_t base;
	uint64_t len;
	uint32_t permissions;
	int32_t registry_fd; /* the registry memfd's number in the exporter */
	char pci[16];
};

/* Exporter side: publish [base, base+len) with permissions; fills index and key. NO_MEMORY when the table is full. */
doca_error_t sim_registry_publish(uint64_t base, uint64_t len, uint32_t permissions, const char *pci, int *index,
				  uint8_t key[SIM_EXPORT_KEY_LEN]);
/* Exporter side: add another device to an existing entry */
doca_error_t sim_registry_add_pci(int index, const char *pci);
/* Exporter side: revoke (stop/destroy of the exported mmap) */
void sim_registry_revoke(int index);
/* Exporter side: fill the descriptor of entry index (identity, key, range, permissions) for device pci */
void sim_registry_describe(int index, const char *pci, struct sim_export_desc *desc);

/* Importer side: prove the descriptor (see above) and fill remote (entry, mapping, pidfd, identity).
 * DOCA_ERROR_NOT_PERMITTED for anything that does not prove a live export of the process it names. */
doca_error_t sim_registry_attach(const struct sim_export_desc *desc, struct sim_remote *remote);
/* Importer side: hold off the exporter's revocation during one access (shared lock on the registry); false if the
 * lock cannot be taken. Always paired with sim_registry_access_end. No-op for imports of this process's own exports. */
bool sim_registry_access_begin(const struct sim_remote *remote);
void sim_registry_access_end(const struct sim_remote *remote);
/* Importer side: is the exporter of remote still the process that was proven at attach? */
bool sim_registry_exporter_alive(const struct sim_remote *remote);
void sim_registry_detach(struct sim_remote *remote);

/* Start time of process pid in clock ticks after boot (/proc/PID/stat field 22); 0 if it cannot be read */
uint64_t sim_process_start_time(pid_t pid);

#endif /* SIM_REGISTRY_H_ */
