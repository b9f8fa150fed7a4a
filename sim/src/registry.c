/*
 * Export registry files (see registry.h): creation on first export, stale-file cleanup, entry publication and
 * revocation on the exporter side; attach and validation on the importer side.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"

#define REGISTRY_SIZE (sizeof(struct sim_registry_header) + SIM_REGISTRY_ENTRIES * sizeof(struct sim_registry_entry))

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_registry_header *own_header; /* this process's registry, NULL until the first export */
static struct sim_registry_entry *own_entries;
static char own_path[600];
static pid_t own_pid;
static uint64_t own_nonce;
static uint8_t entry_used[SIM_REGISTRY_ENTRIES]; /* slots held by our mmaps (live or being revoked) */

static void registry_path(char *out, size_t cap, pid_t pid, uint64_t nonce)
{
	snprintf(out, cap, "%s/export-%d-%016llx.reg", sim_dir(), (int)pid, (unsigned long long)nonce);
}

static void random_bytes(void *out, size_t len)
{
	uint8_t *p = out;

	while (len > 0) {
		ssize_t got = getrandom(p, len, 0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			/* getrandom cannot fail on Linux >= 3.17 short of EINTR; keep going with a weak fallback */
			for (size_t i = 0; i < len; i++)
				p[i] = (uint8_t)(rand() ^ getpid());
			return;
		}
		p += got;
		len -= (size_t)got;
	}
}

/* Unlink registry files whose process no longer exists */
static void remove_stale_files(void)
{
	DIR *dir = opendir(sim_dir());
	struct dirent *ent;

	if (dir == NULL)
		return;
	while ((ent = readdir(dir)) != NULL) {
		int pid;
		unsigned long long nonce;
		char path[600];

		if (sscanf(ent->d_name, "export-%d-%16llx.reg", &pid, &nonce) != 2 || pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", sim_dir(), ent->d_name);
		unlink(path);
	}
	closedir(dir);
}

static void unlink_own_registry(void)
{
	/* A forked child inherits the atexit handler but not the file */
	if (own_header != NULL && getpid() == own_pid)
		unlink(own_path);
}

/* Create this process's registry file; called with registry_lock held */
static doca_error_t create_own_registry(void)
{
	int fd;
	void *map;

	remove_stale_files();
	own_pid = getpid();
	random_bytes(&own_nonce, sizeof(own_nonce));
	registry_path(own_path, sizeof(own_path), own_pid, own_nonce);
	fd = open(own_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry %s: %s", own_path, strerror(errno));
	if (ftruncate(fd, (off_t)REGISTRY_SIZE) != 0) {
		close(fd);
		unlink(own_path);
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry ftruncate: %s", strerror(errno));
	}
	map = mmap(NULL, REGISTRY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		unlink(own_path);
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry mmap: %s", strerror(errno));
	}
	own_header = map;
	own_entries = (struct sim_registry_entry *)(own_header + 1);
	own_header->pid = own_pid;
	own_header->nonce = own_nonce;
	own_header->num_entries = SIM_REGISTRY_ENTRIES;
	own_header->version = SIM_REGISTRY_VERSION;
	atomic_thread_fence(memory_order_release);
	own_header->magic = SIM_REGISTRY_MAGIC;
	atexit(unlink_own_registry);
	/* Let the DPU-side process use process_vm_readv/writev on us under Yama ptrace_scope=1 */
	if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0)
		sim_log(SIM_LOG_DEBUG, "prctl(PR_SET_PTRACER): %s", strerror(errno));
	return DOCA_SUCCESS;
}

doca_error_t sim_registry_publish(uint64_t base, uint64_t len, uint32_t permissions, const char *pci, int *index,
				  uint8_t key[SIM_EXPORT_KEY_LEN])
{
	doca_error_t err = DOCA_SUCCESS;
	int slot = -1;

	pthread_mutex_lock(&registry_lock);
	if (own_header == NULL || own_pid != getpid())
		err = create_own_registry();
	if (err == DOCA_SUCCESS) {
		for (unsigned i = 0; i < SIM_REGISTRY_ENTRIES; i++) {
			if (!entry_used[i]) {
				slot = (int)i;
				break;
			}
		}
		if (slot < 0)
			err = sim_fail(DOCA_ERROR_NO_MEMORY, "export registry full (%u exports)", SIM_REGISTRY_ENTRIES);
	}
	if (err == DOCA_SUCCESS) {
		struct sim_registry_entry *e = &own_entries[slot];

		entry_used[slot] = 1;
		memset(e->pci, 0, sizeof(e->pci));
		snprintf(e->pci[0], sizeof(e->pci[0]), "%s", pci);
		e->base = base;
		e->len = len;
		e->permissions = permissions;
		random_bytes(e->key, SIM_EXPORT_KEY_LEN);
		memcpy(key, e->key, SIM_EXPORT_KEY_LEN);
		atomic_store_explicit(&e->live, 1, memory_order_release);
		*index = slot;
	}
	pthread_mutex_unlock(&registry_lock);
	return err;
}

doca_error_t sim_registry_add_pci(int index, const char *pci)
{
	struct sim_registry_entry *e = &own_entries[index];
	doca_error_t err = DOCA_ERROR_NO_MEMORY;

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < SIM_REGISTRY_PCIS; i++) {
		if (strcmp(e->pci[i], pci) == 0 || e->pci[i][0] == '\0') {
			snprintf(e->pci[i], sizeof(e->pci[i]), "%s", pci);
			err = DOCA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	return err;
}

void sim_registry_revoke(int index)
{
	struct sim_registry_entry *e;

	if (index < 0 || own_entries == NULL)
		return;
	e = &own_entries[index];
	pthread_mutex_lock(&registry_lock);
	atomic_store_explicit(&e->live, 0, memory_order_release);
	/* A revoked key can never match again, even if the slot is reused with the same range */
	memset(e->key, 0, sizeof(e->key));
	entry_used[index] = 0;
	pthread_mutex_unlock(&registry_lock);
}

void sim_registry_key(int index, uint8_t key[SIM_EXPORT_KEY_LEN])
{
	memcpy(key, own_entries[index].key, SIM_EXPORT_KEY_LEN);
}

void sim_registry_identity(pid_t *pid, uint64_t *nonce)
{
	*pid = own_pid;
	*nonce = own_nonce;
}

doca_error_t sim_registry_attach(const struct sim_export_desc *desc, const struct sim_registry_entry **entry,
				 void **map_base, size_t *map_len)
{
	char path[600];
	struct stat st;
	const struct sim_registry_header *hdr;
	const struct sim_registry_entry *e;
	void *map;
	int fd;
	bool pci_ok = false;

	registry_path(path, sizeof(path), desc->pid, desc->nonce);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export of pid %d is gone (%s)", (int)desc->pid, strerror(errno));
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < REGISTRY_SIZE) {
		close(fd);
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export registry %s is malformed", path);
	}
	map = mmap(NULL, REGISTRY_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "mmap of %s: %s", path, strerror(errno));
	hdr = map;
	if (hdr->magic != SIM_REGISTRY_MAGIC || hdr->version != SIM_REGISTRY_VERSION || hdr->pid != desc->pid ||
	    hdr->nonce != desc->nonce || desc->index >= hdr->num_entries) {
		munmap(map, REGISTRY_SIZE);
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor does not match registry %s", path);
	}
	e = (const struct sim_registry_entry *)(hdr + 1) + desc->index;
	for (unsigned i = 0; i < SIM_REGISTRY_PCIS; i++)
		if (e->pci[i][0] != '\0' && sim_pci_equal(e->pci[i], desc->pci))
			pci_ok = true;
	if (!atomic_load_explicit(&e->live, memory_order_acquire) ||
	    memcmp(e->key, desc->key, SIM_EXPORT_KEY_LEN) != 0 || e->base != desc->base || e->len != desc->len ||
	    e->permissions != desc->permissions || !pci_ok) {
		munmap(map, REGISTRY_SIZE);
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export entry %u of pid %d is revoked or the key is wrong",
				desc->index, (int)desc->pid);
	}
	*entry = e;
	*map_base = map;
	*map_len = REGISTRY_SIZE;
	return DOCA_SUCCESS;
}

void sim_registry_detach(void *map_base, size_t map_len)
{
	if (map_base != NULL)
		munmap(map_base, map_len);
}
