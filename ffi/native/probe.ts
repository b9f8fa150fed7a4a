/**
 * Kernel facilities the software device's cross-process DMA relies on, probed from this process for `doctor`:
 * process_vm_readv (the syscall the device copies with; qemu-user 7.2 lacks it) and /proc/<pid>/mem (the device's
 * fallback, with the same ptrace permission check). Each probe reads this process's own memory, which the kernel
 * always allows, so a failure means the facility is missing, not forbidden.
 */
import { openSync, readSync, closeSync } from "node:fs";
import process from "node:process";
import { loadLibc, mapPages } from "./library.ts";
import type { SymbolTable } from "../load/types.ts";

const PROBE_SYMBOLS = {
  // ssize_t process_vm_readv(pid_t pid, const struct iovec *local_iov, unsigned long liovcnt, const struct iovec *remote_iov, unsigned long riovcnt, unsigned long flags);
  process_vm_readv: { lib: "libc", params: ["i32", "ptr", "u64", "ptr", "u64", "u64"], result: "u64" },
} as const satisfies SymbolTable;

const ERRNO_NAMES: Record<number, string> = { 1: "EPERM", 3: "ESRCH", 14: "EFAULT", 22: "EINVAL", 38: "ENOSYS" };

export interface ProbeResult {
  ok: boolean;
  /** errno name (or message) when not ok. */
  error?: string;
}

/** process_vm_readv of 64 bytes of our own memory. */
export function probeProcessVmReadv(): ProbeResult {
  const { libc, backend } = loadLibc();
  const bound = backend.bind("libc.so.6", PROBE_SYMBOLS, "libc");
  const page = mapPages(4096);
  try {
    const fn = bound.fns.process_vm_readv;
    if (!fn) return { ok: false, error: "libc has no process_vm_readv" };
    const view = new DataView(backend.view(page, 4096));
    for (let i = 0; i < 64; i++) view.setUint8(1024 + i, i ^ 0x5a);
    // iovecs at 0 (local: 2048..2111) and 16 (remote: 1024..1087)
    view.setBigUint64(0, BigInt(page + 2048), true);
    view.setBigUint64(8, 64n, true);
    view.setBigUint64(16, BigInt(page + 1024), true);
    view.setBigUint64(24, 64n, true);
    const n = Number(fn(process.pid, page, 1, page + 16, 1, 0));
    if (n === 64) {
      for (let i = 0; i < 64; i++) if (view.getUint8(2048 + i) !== (i ^ 0x5a)) return { ok: false, error: "wrong bytes" };
      return { ok: true };
    }
    const errnoAddress = libc.__errno_location() as number;
    const errno = new DataView(backend.view(errnoAddress, 4)).getInt32(0, true);
    return { ok: false, error: ERRNO_NAMES[errno] ?? `errno ${errno}` };
  } finally {
    libc.munmap(page, 4096);
    bound.close();
  }
}

/** pread of 64 bytes of our own memory through /proc/self/mem. */
export function probeProcMem(): ProbeResult {
  const page = mapPages(4096);
  const { libc, backend } = loadLibc();
  try {
    new Uint8Array(backend.view(page, 64)).fill(0xa5);
    const fd = openSync("/proc/self/mem", "r");
    try {
      const out = new Uint8Array(64);
      const n = readSync(fd, out, 0, 64, page);
      return n === 64 && out.every((b) => b === 0xa5) ? { ok: true } : { ok: false, error: `read ${n} bytes` };
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  } finally {
    libc.munmap(page, 4096);
  }
}
