/*
 * Export registry of the software device. Each exporting process owns one file under DOCA_SIM_DIR,
 * "export-<pid>-<nonce>.reg", mapped MAP_SHARED: a header and a table of entries, one per exported mmap. Importers map
 * the exporter's file read-only and re-check their entry (live flag + 128-bit key) before every DMA access, so
 * stopping or destroying the exporter's mmap revokes access immediately.
 *
 * The export descriptor handed to the importer (doca_mmap_export_pci) is a fixed, versioned little struct naming the
 * file (pid, nonce), the entry index, the key, the range, the permissions and the exporting device.
 */
#ifndef SIM_REGISTRY_H_
#define SIM_REGISTRY_H_

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

#define SIM_REGISTRY_MAGIC 0x47455253u /* "SREG" */
#define SIM_REGISTRY_VERSION 1u
#define SIM_REGISTRY_ENTRIES 4096u
#define SIM_REGISTRY_PCIS 4u /* devices one mmap can be exported through */

#define SIM_DESC_MAGIC 0x58455344u /* "DSEX" */
#define SIM_DESC_VERSION 1u

struct sim_registry_entry {
	_Atomic uint32_t live;  /* 1 while the export is valid */
	uint32_t permissions;   /* DOCA_ACCESS_FLAG_* of the exported mmap */
	uint64_t base;          /* exported range in the exporter's address space */
	uint64_t len;
	uint8_t key[SIM_EXPORT_KEY_LEN];
	char pci[SIM_REGISTRY_PCIS][16]; /* devices the mmap was exported through ("" = unused) */
};

struct sim_registry_header {
	uint32_t magic;
	uint32_t version;
	int32_t pid;
	uint32_t num_entries;
	uint64_t nonce;
	uint64_t reserved;
};

/* The wire form of an export descriptor (host byte order; both sides run on this machine) */
struct sim_export_desc {
	uint32_t magic;
	uint16_t version;
	uint16_t length; /* sizeof(struct sim_export_desc) */
	int32_t pid;
	uint32_t index;
	uint64_t nonce;
	uint8_t key[SIM_EXPORT_KEY_LEN];
	uint64_t base;
	uint64_t len;
	uint32_t permissions;
	char pci[16];
	uint32_t reserved;
};

/* Exporter side: publish [base, base+len) with permissions; fills index and key. NO_MEMORY when the table is full. */
doca_error_t sim_registry_publish(uint64_t base, uint64_t len, uint32_t permissions, const char *pci, int *index,
				  uint8_t key[SIM_EXPORT_KEY_LEN]);
/* Exporter side: the key of one of our live entries */
void sim_registry_key(int index, uint8_t key[SIM_EXPORT_KEY_LEN]);
/* Exporter side: add another device to an existing entry */
doca_error_t sim_registry_add_pci(int index, const char *pci);
/* Exporter side: revoke (stop/destroy of the exported mmap) */
void sim_registry_revoke(int index);
/* Exporter side: pid and nonce naming this process's registry file */
void sim_registry_identity(pid_t *pid, uint64_t *nonce);

/* Importer side: map the exporter's registry and find the descriptor's entry, checking it is live and matches.
 * On success *entry points into a read-only mapping [*map_base, *map_base + *map_len). */
doca_error_t sim_registry_attach(const struct sim_export_desc *desc, const struct sim_registry_entry **entry,
				 void **map_base, size_t *map_len);
void sim_registry_detach(void *map_base, size_t map_len);

#endif /* SIM_REGISTRY_H_ */
