/*
 * Fallback copy primitive of the software device: when the kernel (or an emulator: qemu-user 7.2) answers
 * process_vm_readv/writev with ENOSYS, read or write the peer's /proc/<pid>/mem instead, through the descriptor the
 * importer opened at import (bound to that address space: after exec or exit it moves nothing). The kernel guards
 * that file with the same ptrace access check (PTRACE_MODE_ATTACH) but, unlike process_vm_*, ignores page
 * protections (FOLL_FORCE): a PROT_NONE page reads, a read-only page takes writes. So the caller (remote.c) checks the
 * protection of every page span of the access first (vma.h), for both paths alike, and the two give the same results.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_mem.h"

ssize_t sim_proc_mem_copy(int mem_fd, void *local, uint64_t remote_addr, size_t len, bool to_remote)
{
	ssize_t moved;

	if (mem_fd < 0) {
		errno = ENOSYS;
		return -1;
	}
	moved = to_remote ? pwrite(mem_fd, local, len, (off_t)remote_addr) : pread(mem_fd, local, len, (off_t)remote_addr);
	if (moved == 0 && len > 0) {
		/* /proc/PID/mem answers 0 once its address space is gone (exit, exec): like process_vm_* on a dead pid */
		errno = ESRCH;
		return -1;
	}
	if (moved < 0 && errno == EIO)
		errno = EFAULT; /* an unmapped page: what process_vm_* report */
	return moved;
}

bool sim_proc_mem_forced(void)
{
	static int forced = -1;

	if (forced < 0) {
		const char *v = getenv("DOCA_SIM_FORCE_PROC_MEM");

		forced = v != NULL && strcmp(v, "1") == 0;
	}
	return forced == 1;
}
