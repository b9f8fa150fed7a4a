/*
 * Fallback copy primitive of the software device's DMA engine: when the kernel (or an emulator: qemu-user 7.2)
 * answers process_vm_readv/writev with ENOSYS, read or write the peer's /proc/<pid>/mem instead. The kernel guards
 * that file with the same ptrace access check (PTRACE_MODE_ATTACH), so nothing becomes reachable that
 * process_vm_* would have refused; the export range and permission checks stay with the caller.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "dma_proc_mem.h"

ssize_t sim_proc_mem_copy(pid_t pid, void *local, uint64_t remote_addr, size_t len, bool to_remote)
{
	char path[32];
	ssize_t moved;
	int fd, saved;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, (to_remote ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	moved = to_remote ? pwrite(fd, local, len, (off_t)remote_addr) : pread(fd, local, len, (off_t)remote_addr);
	saved = errno;
	close(fd);
	errno = saved;
	return moved;
}
