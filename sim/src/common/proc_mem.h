/*
 * Cross-process copy through /proc/<pid>/mem, for kernels or emulators without process_vm_readv/writev.
 */
#ifndef SIM_PROC_MEM_H_
#define SIM_PROC_MEM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies len bytes between local memory and remote_addr of the process whose /proc/PID/mem is open as mem_fd
 * (to_remote: local -> remote). Returns the bytes moved, or -1 with errno set, like process_vm_readv/writev.
 * The caller has checked the pages' protections (vma.h): this file ignores them (the kernel's FOLL_FORCE). */
ssize_t sim_proc_mem_copy(int mem_fd, void *local, uint64_t remote_addr, size_t len, bool to_remote);

/* DOCA_SIM_FORCE_PROC_MEM=1 (test-only): use this path even where process_vm_readv/writev work */
bool sim_proc_mem_forced(void);

#endif /* SIM_PROC_MEM_H_ */
