/**
 * Measures the FFI cost of representative DOCA calls on the current runtime (ns per call), for benchmarks and
 * the README. The calls do (almost) nothing inside DOCA, so what is measured is mostly the binding's overhead.
 */
import { doca } from "./library.ts";
import { check } from "./errors.ts";

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
