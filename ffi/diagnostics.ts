/**
 * The internal/diagnostic entry (not the library API of mod.ts): the FFI call-cost probe the benchmarks use,
 * setNativeEnv for configuring the software device from JS on Bun, and the REPL's explicit escape hatch to a
 * wrapper's native pointer.
 */
import { HANDLE } from "./engine/resource.ts";
import { doca, setCEnvironment } from "./native/library.ts";
import { check } from "./native/errors.ts";
import type { Resource } from "./engine/resource.ts";

/**
 * Sets an environment variable where native code (DOCA, the software device) reads it. Deno and Node forward
 * process.env writes to the C environment; Bun 1.4 does not, so configuration such as DOCA_SIM_DIR set from JS
 * must also go through here before DOCA is loaded. (The library now hands process.env's DOCA_* variables to C by
 * itself when it loads and before it lists or opens devices: this stays for variables outside that set.)
 */
export function setNativeEnv(name: string, value: string): void {
  try {
    setCEnvironment(name, value);
  } catch (e) {
    if (e instanceof RangeError) throw new RangeError(`setNativeEnv: ${e.message}`);
    throw e;
  }
}

/**
 * REPL escape hatch: the native pointer behind a wrapper (a doca_mmap *, doca_buf *, ...), for poking at DOCA by
 * hand with `doca().fns`. Nothing in the library or the tasks uses it; the pointer dies with the object.
 */
export function unsafeHandle(resource: Resource): number {
  return resource[HANDLE];
}

/**
 * Measures the FFI cost of representative DOCA calls on the current runtime (ns per call), for benchmarks and
 * the README. The calls do (almost) nothing inside DOCA, so what is measured is mostly the binding's overhead.
 */

export interface OverheadReport {
  runtime: string;
  /** doca_error_get_name(0): i32 in, pointer out. */
  errorName: number;
  /** doca_pe_progress on an engine with nothing to do: pointer in, u8 out (the pump's idle call). */
  emptyProgress: number;
  /** The same through the raw (hot-path) binding with a pre-converted handle: what ProgressEngine.progress pays. */
  emptyProgressRaw: number;
  /** doca_mmap_set_permissions on a stopped mmap: pointer + u32 in, i32 out. */
  mmapSetPermissions: number;
  /** strlen("") through the libc binding: the loader's raw floor. */
  libcNoop: number;
}

function timeIt(iterations: number, fn: () => unknown): number {
  for (let i = 0; i < Math.min(iterations, 100_000); i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return Math.round(((performance.now() - t0) * 1e7) / iterations) / 10;
}

export function measureCallOverhead(iterations = 1_000_000): OverheadReport {
  const d = doca();
  const f = d.fns;
  const s = d.scratch;
  s.clear(0);
  check(f.doca_pe_create(s.slot(0)), "doca_pe_create");
  const pe = s.u64(0);
  s.clear(0);
  check(f.doca_mmap_create(s.slot(0)), "doca_mmap_create");
  const mmap = s.u64(0);
  const empty = s.cstring("");
  const peNative = d.backend.native(pe);
  try {
    return {
      runtime: d.info.runtime,
      errorName: timeIt(iterations, () => f.doca_error_get_name(0)),
      emptyProgress: timeIt(iterations, () => f.doca_pe_progress(pe)),
      emptyProgressRaw: timeIt(iterations, () => d.raw.doca_pe_progress(peNative)),
      mmapSetPermissions: timeIt(iterations, () => f.doca_mmap_set_permissions(mmap, 1)),
      libcNoop: timeIt(iterations, () => d.libc.strlen(empty)),
    };
  } finally {
    f.doca_mmap_destroy(mmap);
    f.doca_pe_destroy(pe);
  }
}
