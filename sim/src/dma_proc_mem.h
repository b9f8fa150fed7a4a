/*
 * Cross-process copy through /proc/<pid>/mem, for kernels or emulators without process_vm_readv/writev.
 */
#ifndef SIM_DMA_PROC_MEM_H_
#define SIM_DMA_PROC_MEM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies len bytes between local memory and remote_addr in process pid (to_remote: local -> remote). Returns the
 * bytes moved, or -1 with errno set, like process_vm_readv/writev. */
ssize_t sim_proc_mem_copy(pid_t pid, void *local, uint64_t remote_addr, size_t len, bool to_remote);

#endif /* SIM_DMA_PROC_MEM_H_ */
