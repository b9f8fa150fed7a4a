/**
 * A few bytes of machine code made callable, with nothing but libc: mmap a fresh page read-write, copy the code in,
 * then mprotect it read+execute (never writable and executable at once, so W^X policies that allow mprotect to
 * PROT_EXEC accept it). Systems that refuse executable memory (SELinux deny_execmem, PaX MPROTECT, a seccomp filter)
 * make mprotect fail: the caller then gets undefined and keeps its JavaScript fallback.
 *
 * aarch64 instruction caches are not coherent with data writes. The page is never executed before the mprotect,
 * and on arm64 Linux installing a user-executable PTE goes through set_pte_at() → __sync_icache_dcache(), which
 * cleans the D-cache and invalidates the I-cache for a page not yet marked PG_dcache_clean (arch/arm64/mm/flush.c).
 * Older kernels (4.x) returned early there for pages without a page_mapping(), i.e. anonymous memory such as this,
 * so we do not rely on it alone: on aarch64 the range is also passed to libgcc's __clear_cache (DC CVAU / IC IVAU
 * over the lines, then DSB/ISB) when libgcc_s exports it, as JITs do. Cores with CTR_EL0.DIC/IDC need nothing.
 * The aarch64 bytes are run under qemu by tests/ffi-completion-ring.test.ts (qemu checks encoding and ABI, not
 * cache behaviour); the Arm CI lane runs the whole suite on real cores.
 */
import process from "node:process";
import { loadLibc, mapPages } from "./library.ts";
import type { SymbolTable } from "../load/types.ts";

const PROT_READ = 1, PROT_EXEC = 4;
const PAGE = 4096;

const CLEAR_CACHE: SymbolTable = {
  // void __clear_cache(void *begin, void *end);  (libgcc)
  __clear_cache: { lib: "libc", params: ["ptr", "ptr"], result: "void", optional: true },
};

/** aarch64: make the I-cache see freshly written code (best effort, see the header comment). */
function syncInstructionCache(address: number, length: number): void {
  if (process.arch !== "arm64") return;
  try {
    const bound = loadLibc().backend.bind("libgcc_s.so.1", CLEAR_CACHE, "libc");
    bound.fns.__clear_cache?.(address, address + length);
  } catch {
    // no libgcc_s: the kernel's flush on the first executable mapping is what remains
  }
}

const MPROTECT: SymbolTable = {
  // int mprotect(void *addr, size_t len, int prot);
  mprotect: { lib: "libc", params: ["ptr", "usize", "i32"], result: "i32" },
};

let mprotect: ((address: number, length: number, prot: number) => number) | undefined;

function bindMprotect(): (address: number, length: number, prot: number) => number {
  if (!mprotect) {
    const bound = loadLibc().backend.bind("libc.so.6", MPROTECT, "libc");
    const fn = bound.fns.mprotect;
    if (!fn) throw new Error("libc.so.6 lacks mprotect");
    mprotect = fn as (address: number, length: number, prot: number) => number;
  }
  return mprotect;
}

/**
 * Places `code` in a page of its own and makes it executable (read+execute, not writable). Returns the code's
 * address, or undefined when the system refuses executable memory. The page is never freed: native code may hold
 * its address for the life of the process.
 */
export function executableCode(code: Uint8Array): number | undefined {
  if (code.length > PAGE) throw new Error(`executableCode: ${code.length} bytes do not fit one page`);
  const { libc, backend } = loadLibc();
  let address: number;
  try {
    address = mapPages(PAGE);
  } catch {
    return undefined;
  }
  new Uint8Array(backend.view(address, code.length)).set(code);
  let rc: number;
  try {
    rc = bindMprotect()(address, PAGE, PROT_READ | PROT_EXEC);
  } catch {
    rc = -1;
  }
  if (rc !== 0) {
    libc.munmap(address, PAGE);
    return undefined;
  }
  syncInstructionCache(address, code.length);
  return address;
}
