/*
 * The one door to another process's memory through an imported mmap: the checks made right before every access
 * (export live, range inside, the pages still those registered, with the protection the access needs), the revocation
 * barrier around it, the copy itself (process_vm_readv/writev, else /proc/PID/mem), and the optional DOCA_SIM_TRACE
 * log of those accesses (used by the fault-injection tests).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "proc_mem.h"
#include "registry.h"
#include "vma.h"

/* The export's own checks; alive: also poll the exporter's pidfd (the page check of sim_remote_copy tells an
 * exporter gone through its maps descriptor, so the copy path skips that system call) */
static doca_error_t check_export(const struct doca_mmap *mmap, uint64_t addr, size_t len, bool alive)
{
	const struct sim_registry_entry *e = mmap->remote.entry;
	uint64_t base = (uint64_t)(uintptr_t)mmap->base;

	if (!mmap->from_export || e == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/* The pid now may be another process once the exporter has exited: never touch it then */
	if (alive && !sim_registry_exporter_alive(&mmap->remote))
		return sim_fail(DOCA_ERROR_IO_FAILED, "exporter pid %d has exited", (int)mmap->remote.pid);
	if (!atomic_load_explicit(&e->live, memory_order_acquire) ||
	    memcmp(e->key, mmap->remote.key, SIM_EXPORT_KEY_LEN) != 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export of pid %d entry %u was revoked", (int)mmap->remote.pid,
				mmap->remote.index);
	if (e->base != base || e->len != mmap->len || addr < base || len > mmap->len || addr - base > mmap->len - len)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "access 0x%llx+%zu outside export 0x%llx+%zu",
				(unsigned long long)addr, len, (unsigned long long)base, mmap->len);
	return DOCA_SUCCESS;
}

doca_error_t sim_remote_check(const struct doca_mmap *mmap, uint64_t addr, size_t len)
{
	return check_export(mmap, addr, len, true);
}

doca_error_t sim_remote_check_pages(const struct doca_mmap *mmap, uint64_t addr, size_t len, uint32_t need)
{
	const struct sim_registry_entry *e = mmap->remote.entry;
	uint32_t count;

	if (e == NULL || mmap->remote.maps_fd < 0)
		return DOCA_ERROR_NOT_PERMITTED;
	/* the registry is the exporter's alone (sealed), but never trust a count to stay inside the array */
	count = e->num_vmas;
	if (count > SIM_REGISTRY_VMAS)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "export of pid %d: corrupt mapping record", (int)mmap->remote.pid);
	return sim_vma_check(mmap->remote.maps_fd, e->vmas, count, addr, len, need);
}

static doca_error_t errno_status(int err)
{
	switch (err) {
	case ESRCH:
		return DOCA_ERROR_IO_FAILED; /* the exporting process (image) is gone */
	case EPERM:
		return DOCA_ERROR_NOT_PERMITTED; /* ptrace access to the exporter denied */
	case EFAULT:
		return DOCA_ERROR_IO_FAILED; /* a page vanished under the access (e.g. a truncated shared file) */
	case ENOMEM:
		return DOCA_ERROR_NO_MEMORY;
	default:
		return DOCA_ERROR_IO_FAILED;
	}
}

static ssize_t transfer(const struct sim_remote *r, bool remote_is_src, void *local, uint64_t remote_addr, size_t len)
{
	struct iovec liov = {.iov_base = local, .iov_len = len};
	struct iovec riov = {.iov_base = (void *)(uintptr_t)remote_addr, .iov_len = len};
	ssize_t moved;

	if (!sim_proc_mem_forced()) {
		moved = remote_is_src ? process_vm_readv(r->pid, &liov, 1, &riov, 1, 0)
				      : process_vm_writev(r->pid, &liov, 1, &riov, 1, 0);
		if (moved >= 0 || errno != ENOSYS)
			return moved;
	}
	/* qemu-user, some sandboxes: same permission check, another door; the page checks were made for both */
	return sim_proc_mem_copy(r->mem_fd, local, remote_addr, len, !remote_is_src);
}

doca_error_t sim_remote_copy(const struct doca_mmap *mmap, bool remote_is_src, void *local, uint64_t remote_addr,
			     size_t len)
{
	const struct sim_remote *r = &mmap->remote;
	uint32_t need = remote_is_src ? SIM_VMA_READ : SIM_VMA_WRITE;
	doca_error_t err = DOCA_SUCCESS;
	size_t done = 0;

	/* From the first check to the last byte, the exporter's revocation waits for us (registry.h) */
	if (!sim_registry_access_begin(r))
		return sim_fail(DOCA_ERROR_IO_FAILED, "dma memcpy: cannot lock the registry of pid %d: %s", (int)r->pid,
				strerror(errno));
	while (done < len) {
		ssize_t moved;

		/* Re-validate before every access: the exporter may have revoked the export or remapped its memory */
		err = check_export(mmap, remote_addr + done, len - done, false);
		if (err == DOCA_SUCCESS)
			err = sim_remote_check_pages(mmap, remote_addr + done, len - done, need);
		if (err != DOCA_SUCCESS)
			break;
		moved = transfer(r, remote_is_src, (char *)local + done, remote_addr + done, len - done);
		if (moved < 0 && errno == EINTR)
			continue;
		if (moved < 0) {
			err = sim_fail(errno_status(errno), "dma memcpy: %s pid %d memory: %s",
				       remote_is_src ? "reading" : "writing", (int)r->pid, strerror(errno));
			break;
		}
		if (moved == 0) {
			err = sim_fail(DOCA_ERROR_IO_FAILED, "dma memcpy: no progress copying pid %d memory", (int)r->pid);
			break;
		}
		done += (size_t)moved;
	}
	sim_registry_access_end(r);
	return err;
}

static int trace_fd(void)
{
	static int fd = -2;

	if (fd == -2) {
		const char *path = getenv("DOCA_SIM_TRACE");

		fd = (path != NULL && *path != '\0') ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
	}
	return fd;
}

void sim_trace_remote(const struct doca_mmap *mmap, uint64_t addr, size_t len, char rw, const char *verdict)
{
	char line[320];
	int n;
	int fd = trace_fd();

	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line),
		     "pid=%d side=%s remote_pid=%d addr=0x%llx len=%zu op=%c range=0x%llx+%zu perm=0x%x verdict=%s\n",
		     (int)getpid(), sim_side() == SIM_SIDE_DPU ? "dpu" : "host", (int)mmap->remote.pid,
		     (unsigned long long)addr, len, rw, (unsigned long long)(uintptr_t)mmap->base, mmap->len,
		     mmap->permissions, verdict);
	/* One write per line: O_APPEND keeps concurrent writers' lines whole */
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		sim_log(SIM_LOG_DEBUG, "DOCA_SIM_TRACE write failed");
}
