/*
 * Memory chains: an mmap created from a PCI export (the host's memory, imported on the DPU) re-exported for RDMA
 * (doca_mmap_export_rdma), so a remote RDMA peer's reads and writes land in the host process's memory.
 *
 * On hardware the NIC moves those bytes between the wire and the host's pages over PCIe. Here the responder's RDMA
 * I/O thread (in the DPU process) moves them: a write's payload is received into a per-thread bounce buffer and copied
 * on to the host through the import's door (remote.c: export still live, range inside, pages still those registered,
 * with the protection the access needs); a read's bytes are copied from the host into the bounce buffer just before
 * they are sent. No memory of the DPU application ever holds them. Every link of the chain is re-checked at each
 * piece: the DPU map's RDMA key (mmap_rdma.c, the key table's barrier), then the host's export and pages (the
 * registry's barrier, held for the whole copy), so revoking any link stops the peer's next piece.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

#define RDMA_RIGHTS (DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE)
#define PCI_ANY (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)

uint32_t sim_chain_rdma_permissions(uint32_t p)
{
	uint32_t rights = 0;

	/* Reading through the chain reads the host over PCI, writing writes it: each needs both grants. Atomics are not
	 * offered: the host's word cannot be updated atomically from another process's copy */
	if ((p & DOCA_ACCESS_FLAG_RDMA_READ) != 0 && (p & PCI_ANY) != 0)
		rights |= DOCA_ACCESS_FLAG_RDMA_READ;
	if ((p & DOCA_ACCESS_FLAG_RDMA_WRITE) != 0 && (p & DOCA_ACCESS_FLAG_PCI_READ_WRITE) != 0)
		rights |= DOCA_ACCESS_FLAG_RDMA_WRITE;
	return rights & RDMA_RIGHTS;
}

doca_error_t sim_chain_check(const struct doca_mmap *mmap, uint64_t addr, uint64_t len)
{
	return sim_remote_check(mmap, addr, len);
}

/* One bounce buffer per I/O thread, grown to the largest piece asked (RDMA moves at most 1 MiB per piece) */
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

struct bounce {
	size_t cap;
	unsigned char bytes[];
};

static void bounce_init(void)
{
	pthread_key_create(&bounce_key, free);
}

static void *bounce(size_t len)
{
	struct bounce *b;

	pthread_once(&bounce_once, bounce_init);
	b = pthread_getspecific(bounce_key);
	if (b == NULL || b->cap < len) {
		struct bounce *grown = realloc(b, sizeof(*b) + len);
		if (grown == NULL)
			return NULL;
		grown->cap = len;
		b = grown;
		pthread_setspecific(bounce_key, b);
	}
	return b->bytes;
}

doca_error_t sim_chain_stage(const struct doca_mmap *mmap, uint64_t addr, uint64_t len, bool read, void **local)
{
	void *staged = bounce(len);
	doca_error_t err;

	if (staged == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (read) {
		err = sim_remote_copy(mmap, true, staged, addr, len);
		sim_trace_remote(mmap, addr, len, 'r', err == DOCA_SUCCESS ? "chain-ok" : "chain-refused");
		if (err != DOCA_SUCCESS)
			return err;
	}
	*local = staged;
	return DOCA_SUCCESS;
}

doca_error_t sim_chain_flush(const struct doca_mmap *mmap, uint64_t addr, size_t written)
{
	struct bounce *b;
	doca_error_t err;

	pthread_once(&bounce_once, bounce_init);
	b = pthread_getspecific(bounce_key);
	if (written == 0)
		return DOCA_SUCCESS;
	if (b == NULL || b->cap < written)
		return DOCA_ERROR_UNEXPECTED;
	err = sim_remote_copy(mmap, false, b->bytes, addr, written);
	sim_trace_remote(mmap, addr, written, 'w', err == DOCA_SUCCESS ? "chain-ok" : "chain-refused");
	return err;
}
