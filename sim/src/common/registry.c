/*
 * Export registry (see registry.h and docs/FAULTS.md): the exporter's sealed memfd, entry publication and revocation;
 * on the importer side, the proof that a descriptor names a live export of the process it names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "registry.h"

#define REGISTRY_SIZE (sizeof(struct sim_registry_header) + SIM_REGISTRY_ENTRIES * sizeof(struct sim_registry_entry))
/* What /proc/PID/fd/N and /proc/PID/maps show for our registry */
#define MEMFD_LINK "/memfd:" SIM_REGISTRY_MEMFD_NAME " (deleted)"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_registry_header *own_header; /* this process's registry, NULL until the first export */
static struct sim_registry_entry *own_entries;
static int own_fd = -1;
static pid_t own_pid;
static uint64_t own_nonce;
static uint64_t own_start_time;
static uint8_t entry_used[SIM_REGISTRY_ENTRIES]; /* slots held by our mmaps (live or being revoked) */

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

uint64_t sim_process_start_time(pid_t pid)
{
	char path[64];
	char text[1024];
	const char *p;
	unsigned long long ticks;
	ssize_t n;
	int proc;
	int fd;

	/*
	 * Opened relative to /proc, not as "/proc/PID/stat": qemu-user answers absolute /proc paths that name the
	 * emulated process itself with a stat line of its own making, whose start time is computed separately and
	 * may differ from the kernel's by a tick; the exporter and its importers must read the same kernel value.
	 */
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return 0;
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	close(proc);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: fields resume after the last ')' */
	p = strrchr(text, ')');
	if (p == NULL)
		return 0;
	p++;
	/* after ')' come fields 3, 4, ...: skip 19 of them to reach field 22 */
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (p == NULL)
			return 0;
	}
	return sscanf(p, " %llu", &ticks) == 1 ? (uint64_t)ticks : 0;
}

/* Create this process's registry; called with registry_lock held */
static doca_error_t create_own_registry(void)
{
	int fd;
	void *map;

	fd = memfd_create(SIM_REGISTRY_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry memfd_create: %s", strerror(errno));
	/* Read-only for anyone who reopens it through /proc/PID/fd: only our own mapping writes it */
	if (fchmod(fd, 0400) != 0 || ftruncate(fd, (off_t)REGISTRY_SIZE) != 0) {
		close(fd);
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry setup: %s", strerror(errno));
	}
	map = mmap(NULL, REGISTRY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry mmap: %s", strerror(errno));
	}
	/* A forked child must not write its parent's table: it gets its own registry at its first export */
	(void)madvise(map, REGISTRY_SIZE, MADV_DONTFORK);
	/* Importers map it: it must never shrink under them (SIGBUS), and no one may write it but this mapping */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) != 0 &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		munmap(map, REGISTRY_SIZE);
		close(fd);
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export registry seals: %s", strerror(errno));
	}
	own_pid = getpid();
	own_start_time = sim_process_start_time(own_pid);
	random_bytes(&own_nonce, sizeof(own_nonce));
	/* A forked child starts its own registry: what it inherited belongs to its parent */
	memset(entry_used, 0, sizeof(entry_used));
	own_fd = fd;
	own_header = map;
	own_entries = (struct sim_registry_entry *)(own_header + 1);
	own_header->pid = own_pid;
	own_header->nonce = own_nonce;
	own_header->start_time = own_start_time;
	own_header->num_entries = SIM_REGISTRY_ENTRIES;
	own_header->version = SIM_REGISTRY_VERSION;
	atomic_thread_fence(memory_order_release);
	own_header->magic = SIM_REGISTRY_MAGIC;
	/* Let the DPU-side process use process_vm_readv/writev on us under Yama ptrace_scope=1 */
	if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0)
		sim_log(SIM_LOG_DEBUG, "prctl(PR_SET_PTRACER): %s", strerror(errno));
	return DOCA_SUCCESS;
}

doca_error_t sim_registry_publish(uint64_t base, uint64_t len, uint32_t permissions, const char *pci, int *index,
				  uint8_t key[SIM_EXPORT_KEY_LEN])
{
	struct sim_vma_id vmas[SIM_REGISTRY_VMAS];
	uint32_t num_vmas = 0;
	doca_error_t err = DOCA_SUCCESS;
	int slot = -1;
	int maps = sim_vma_open_maps(getpid());

	/* The pages registered are the mappings covering the range now: importers check each access against them */
	if (maps < 0)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "export: /proc/%d/maps: %s", (int)getpid(), strerror(errno));
	sim_vma_name_own(maps, base, len);
	err = sim_vma_record(maps, base, len, vmas, SIM_REGISTRY_VMAS, &num_vmas);
	close(maps);
	if (err != DOCA_SUCCESS)
		return err;
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
		e->num_vmas = num_vmas;
		memcpy(e->vmas, vmas, sizeof(vmas[0]) * num_vmas);
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
	struct sim_registry_entry *e;
	doca_error_t err = DOCA_ERROR_NO_MEMORY;

	pthread_mutex_lock(&registry_lock);
	if (own_header == NULL || own_pid != getpid()) {
		pthread_mutex_unlock(&registry_lock);
		return sim_fail(DOCA_ERROR_BAD_STATE, "export registry entry %d is not this process's", index);
	}
	e = &own_entries[index];
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

	if (index < 0 || index >= (int)SIM_REGISTRY_ENTRIES)
		return;
	pthread_mutex_lock(&registry_lock);
	if (own_entries == NULL || own_pid != getpid()) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	e = &own_entries[index];
	/* The barrier: the exclusive lock waits until every importer's access that passed its checks has finished;
	 * accesses starting later wait for it, then find the entry revoked */
	while (flock(own_fd, LOCK_EX) != 0 && errno == EINTR)
		;
	atomic_store_explicit(&e->live, 0, memory_order_seq_cst);
	/* A revoked key can never match again, even if the slot is reused with the same range */
	memset(e->key, 0, sizeof(e->key));
	atomic_thread_fence(memory_order_seq_cst);
	(void)flock(own_fd, LOCK_UN);
	entry_used[index] = 0;
	pthread_mutex_unlock(&registry_lock);
}

void sim_registry_describe(int index, const char *pci, struct sim_export_desc *desc)
{
	const struct sim_registry_entry *e = &own_entries[index];

	memset(desc, 0, sizeof(*desc));
	desc->magic = SIM_DESC_MAGIC;
	desc->version = SIM_DESC_VERSION;
	desc->length = sizeof(*desc);
	desc->pid = own_pid;
	desc->index = (uint32_t)index;
	desc->nonce = own_nonce;
	desc->start_time = own_start_time;
	memcpy(desc->key, e->key, SIM_EXPORT_KEY_LEN);
	desc->base = e->base;
	desc->len = e->len;
	desc->permissions = e->permissions;
	desc->registry_fd = own_fd;
	memcpy(desc->pci, pci, strnlen(pci, sizeof(desc->pci) - 1));
}

/* ---- importer side ---- */

/* Does entry e of a registry with header hdr hold exactly the export desc describes? */
static doca_error_t check_entry(const struct sim_registry_header *hdr, const struct sim_registry_entry *e,
				const struct sim_export_desc *desc)
{
	bool pci_ok = false;

	if (hdr->magic != SIM_REGISTRY_MAGIC || hdr->version != SIM_REGISTRY_VERSION || hdr->pid != desc->pid ||
	    hdr->nonce != desc->nonce || hdr->start_time != desc->start_time)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor does not match the registry of pid %d",
				(int)desc->pid);
	for (unsigned i = 0; i < SIM_REGISTRY_PCIS; i++)
		if (e->pci[i][0] != '\0' && strnlen(e->pci[i], sizeof(e->pci[i])) < sizeof(e->pci[i]) &&
		    sim_pci_equal(e->pci[i], desc->pci))
			pci_ok = true;
	if (!atomic_load_explicit(&e->live, memory_order_acquire) ||
	    memcmp(e->key, desc->key, SIM_EXPORT_KEY_LEN) != 0 || e->base != desc->base || e->len != desc->len ||
	    e->permissions != desc->permissions || !pci_ok)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export entry %u of pid %d is revoked or the key is wrong",
				desc->index, (int)desc->pid);
	return DOCA_SUCCESS;
}

/* An import naming this process: checked against our own table, under the same rules as a remote one */
static doca_error_t attach_own(const struct sim_export_desc *desc, struct sim_remote *remote)
{
	doca_error_t err;

	pthread_mutex_lock(&registry_lock);
	if (own_header == NULL || own_pid != getpid())
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor names this process, which exported nothing");
	else if (desc->registry_fd != own_fd || desc->index >= SIM_REGISTRY_ENTRIES || !entry_used[desc->index])
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor names no export of this process");
	else
		err = check_entry(own_header, &own_entries[desc->index], desc);
	if (err == DOCA_SUCCESS) {
		remote->entry = &own_entries[desc->index];
		remote->map_base = NULL;
		remote->map_len = 0;
		remote->pidfd = -1;
		remote->registry_fd = -1;
		remote->mem_fd = -1;
		remote->maps_fd = sim_vma_open_maps(getpid());
		if (remote->maps_fd < 0) {
			err = sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "import: /proc/self/maps: %s", strerror(errno));
			remote->entry = NULL;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	return err;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* Does the process whose maps are open as maps_fd hold a read-write shared mapping of our registry memfd (device dev,
 * inode ino)? Only the exporter's own create_own_registry makes one, so this tells our registry from a memfd merely
 * passed to the process. */
static bool maps_registry(int maps_fd, dev_t dev, ino_t ino)
{
	size_t len;
	char *text = sim_vma_maps_text(maps_fd, &len);
	bool found = false;

	/* "start-end perms offset major:minor inode   path": whole lines, the fields before the path are the kernel's
	 * own, and the path must be exactly our memfd's */
	for (char *line = text; !found && line != NULL && *line != '\0';) {
		char *next = strchr(line, '\n');
		char perms[8];
		unsigned int major_no, minor_no;
		unsigned long long inode;
		int name_at = 0;

		if (next != NULL)
			*next++ = '\0';
		if (sscanf(line, "%*s %7s %*s %x:%x %llu %n", perms, &major_no, &minor_no, &inode, &name_at) >= 4 &&
		    name_at != 0)
			found = inode == (unsigned long long)ino && major_no == major(dev) && minor_no == minor(dev) &&
				strcmp(perms, "rw-s") == 0 && strcmp(line + name_at, MEMFD_LINK) == 0;
		line = next;
	}
	free(text);
	return found;
}

/* Open the registry memfd the descriptor names in process pid and check it is one of ours, sealed and full size */
static doca_error_t open_remote_registry(const struct sim_export_desc *desc, int maps_fd, int *out)
{
	char path[64];
	char link[128];
	struct stat st;
	ssize_t n;
	int seals;
	int fd;

	if (desc->registry_fd < 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor names no registry");
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)desc->pid, (int)desc->registry_fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "pid %d holds no export registry (%s)", (int)desc->pid,
				strerror(errno));
	link[n] = '\0';
	if (strcmp(link, MEMFD_LINK) != 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "pid %d holds no export registry at fd %d", (int)desc->pid,
				(int)desc->registry_fd);
	fd = open(path, O_RDONLY | O_CLOEXEC); /* follows the magic link to the file */
	if (fd < 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export registry of pid %d: %s", (int)desc->pid, strerror(errno));
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != REGISTRY_SIZE || seals < 0 ||
	    (seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) != (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    (st.st_mode & 0777) != 0400 || !maps_registry(maps_fd, st.st_dev, st.st_ino)) {
		close(fd);
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "fd %d of pid %d is not its export registry", (int)desc->registry_fd,
				(int)desc->pid);
	}
	*out = fd;
	return DOCA_SUCCESS;
}

doca_error_t sim_registry_attach(const struct sim_export_desc *desc, struct sim_remote *remote)
{
	const struct sim_registry_header *hdr;
	void *map = MAP_FAILED;
	doca_error_t err;
	int pidfd;
	int fd = -1;
	int maps_fd = -1, mem_fd = -1;

	remote->registry_fd = remote->maps_fd = remote->mem_fd = remote->pidfd = -1;
	if (desc->pid <= 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor names pid %d", (int)desc->pid);
	remote->pid = desc->pid;
	if (desc->pid == getpid())
		return attach_own(desc, remote);
	/* Pin the process first: everything checked below is then about this very process, if it is still alive at
	 * the end (a pid is not reused before its process has exited and been reaped) */
	pidfd = open_pidfd(desc->pid);
	if (pidfd < 0 && errno != ENOSYS)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "exporter pid %d is gone (%s)", (int)desc->pid, strerror(errno));
	if (desc->start_time == 0 || sim_process_start_time(desc->pid) != desc->start_time) {
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED,
			       "pid %d is not the process that exported (start time differs: exited, pid reused or forged)",
			       (int)desc->pid);
		goto fail;
	}
	/* Its maps, opened first: this descriptor stays bound to the address space it names now, so the registry found
	 * through it below and every later page check are about this very image (after an exec it answers nothing) */
	maps_fd = sim_vma_open_maps(desc->pid);
	if (maps_fd < 0) {
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "/proc/%d/maps: %s", (int)desc->pid, strerror(errno));
		goto fail;
	}
	err = open_remote_registry(desc, maps_fd, &fd);
	if (err != DOCA_SUCCESS)
		goto fail;
	map = mmap(NULL, REGISTRY_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "mmap of the registry of pid %d: %s", (int)desc->pid,
			       strerror(errno));
		goto fail;
	}
	hdr = map;
	if (desc->index >= SIM_REGISTRY_ENTRIES || hdr->num_entries != SIM_REGISTRY_ENTRIES) {
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "export descriptor names entry %u of pid %d", desc->index,
			       (int)desc->pid);
		goto fail;
	}
	err = check_entry(hdr, (const struct sim_registry_entry *)(hdr + 1) + desc->index, desc);
	if (err != DOCA_SUCCESS)
		goto fail;
	remote->entry = (const struct sim_registry_entry *)(hdr + 1) + desc->index;
	remote->map_base = map;
	remote->map_len = REGISTRY_SIZE;
	remote->pidfd = pidfd;
	remote->registry_fd = fd;
	remote->maps_fd = maps_fd;
	/* The fallback path's door, bound to this image like maps_fd (refused where process_vm_* would be too) */
	{
		char path[32];

		snprintf(path, sizeof(path), "/proc/%d/mem", (int)desc->pid);
		mem_fd = open(path, O_RDWR | O_CLOEXEC);
		if (mem_fd < 0)
			mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		remote->mem_fd = mem_fd;
	}
	/* Still the process we checked (without pidfd support: its start time again) */
	if (!sim_registry_exporter_alive(remote)) {
		err = sim_fail(DOCA_ERROR_NOT_PERMITTED, "exporter pid %d exited during the import", (int)desc->pid);
		goto fail;
	}
	return DOCA_SUCCESS;
fail:
	if (map != MAP_FAILED)
		munmap(map, REGISTRY_SIZE);
	if (pidfd >= 0)
		close(pidfd);
	if (fd >= 0)
		close(fd);
	if (maps_fd >= 0)
		close(maps_fd);
	if (mem_fd >= 0)
		close(mem_fd);
	remote->entry = NULL;
	remote->map_base = NULL;
	remote->pidfd = remote->registry_fd = remote->maps_fd = remote->mem_fd = -1;
	return err;
}

bool sim_registry_exporter_alive(const struct sim_remote *remote)
{
	struct pollfd p;

	if (remote->pid == getpid())
		return true;
	if (remote->pidfd < 0) {
		const struct sim_registry_header *hdr = remote->map_base;

		return hdr != NULL && sim_process_start_time(remote->pid) == hdr->start_time;
	}
	/* A pidfd polls readable once its process has exited */
	p.fd = remote->pidfd;
	p.events = POLLIN;
	p.revents = 0;
	return poll(&p, 1, 0) == 0;
}

bool sim_registry_access_begin(const struct sim_remote *remote)
{
	if (remote->registry_fd < 0)
		return true;
	for (;;) {
		if (flock(remote->registry_fd, LOCK_SH) == 0)
			return true;
		if (errno != EINTR)
			return false;
	}
}

void sim_registry_access_end(const struct sim_remote *remote)
{
	if (remote->registry_fd >= 0)
		(void)flock(remote->registry_fd, LOCK_UN);
}

void sim_registry_detach(struct sim_remote *remote)
{
	if (remote->map_base != NULL)
		munmap(remote->map_base, remote->map_len);
	if (remote->pidfd >= 0)
		close(remote->pidfd);
	if (remote->registry_fd >= 0)
		close(remote->registry_fd);
	if (remote->maps_fd >= 0)
		close(remote->maps_fd);
	if (remote->mem_fd >= 0)
		close(remote->mem_fd);
	remote->map_base = NULL;
	remote->entry = NULL;
	remote->pidfd = remote->registry_fd = remote->maps_fd = remote->mem_fd = -1;
}
