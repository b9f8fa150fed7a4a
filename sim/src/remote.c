/*
 * Checks made right before every access to another process's memory through an imported mmap, and the optional
 * DOCA_SIM_TRACE log of those accesses (used by the fault-injection tests).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "registry.h"

doca_error_t sim_remote_check(const struct doca_mmap *mmap, uint64_t addr, size_t len)
{
	const struct sim_registry_entry *e = mmap->remote.entry;
	uint64_t base = (uint64_t)(uintptr_t)mmap->base;

	if (!mmap->from_export || e == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/* The pid now may be another process once the exporter has exited: never touch it then */
	if (!sim_registry_exporter_alive(&mmap->remote))
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
