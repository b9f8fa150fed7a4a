/**
 * The accelerator rows (issue 30), for `deno task bench` and `deno task bench:accel`: deflate and SHA-256
 * (benchmarks/accel-workload.ts per runtime against benchmarks/accel-driver.c and zlib / libcrypto from C), erasure
 * coding and AES-GCM (benchmarks/accel-ea.ts per runtime, which measures its C cells in the same run). Each rate is
 * doca-ts against C on the software device (target ≥ 0.9× from 64 KiB, ≥ 0.5× at 4 KiB) and C on the device against
 * its backing library called directly (target ≥ 0.9×). Rounds alternate C and the runtimes; ratios are medians of
 * per-round ratios.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { buildCDriver } from "./c-driver.ts";
import { median, round3, type Row } from "./rows.ts";
import { RUNTIME_LABEL, type RuntimeName, runtimeArgv } from "./runtimes.ts";

export interface AccelSettings {
  rounds: number;
  /** Seconds per cell. */
  seconds: number;
  /** Piece sizes in bytes (deflate and SHA-256; erasure coding and AES-GCM always run 64 KiB and 4 KiB). */
  sizes: number[];
  runtimes: RuntimeName[];
  /** Tasks in flight (deflate and SHA-256). */
  depth: number;
  /** Tasks in flight (erasure coding and AES-GCM). */
  batch: number;
  /**
   * Rates per CPU second of each process (all its threads) instead of per second of wall time: on a machine whose
   * other load takes the cores, how much CPU each side spends per task, not how much of the cores the scheduler gave
   * it. On a quiet machine the two agree for the C sides; a runtime's figure then also counts its JIT and GC threads.
   */
  perCpu?: boolean;
  log?: (line: string) => void;
}

interface Result {
  ops: number;
  seconds: number;
  /** CPU seconds of the process in the measured part (accel-cell.ts, driver-common.h cell_clock). */
  cpu: number;
}

/**
 * zlib allocates ~270 KiB of state per stream (one per deflate task): with glibc's default, adaptive mmap threshold
 * that costs an mmap, page faults and an munmap per 4 KiB piece in a fresh C process but not in a runtime whose heap
 * already grew (measured: C 3-7k ops/s, Deno 11-16k, zlib direct 6k). Every process gets the same fixed thresholds,
 * so the rows compare the code, not the allocator's history (then all three give ~10k ops/s at 4 KiB).
 */
const ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: String(4 << 20), MALLOC_TRIM_THRESHOLD_: String(64 << 20) };

function runChild(argv: string[], timeoutMs: number): string {
  const r = spawnSync(argv[0], argv.slice(1), { cwd: repoRoot, encoding: "utf8", timeout: timeoutMs, env: { ...process.env, ...ALLOCATOR_ENV } });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout.trim().split("\n").pop()!;
}

/** MiB/s, or MiB per CPU second with perCpu. */
const rate = (r: Result, size: number, perCpu = false) => (r.ops * size) / (perCpu ? Math.max(r.cpu, 1e-6) : r.seconds) / 2 ** 20;
const unitOf = (o: AccelSettings) => (o.perCpu ? "MiB/CPU-s" : "MiB/s");

/**
 * The target for doca-ts against C: ≥ 0.9× from 64 KiB (one Promise per task or batches), ≥ 0.5× for 4 KiB
 * batches; a 4 KiB task with one Promise each has none (shown for comparison).
 */
const tsTarget = (size: number, batched: boolean) => (size >= 64 * 1024 ? 0.9 : batched ? 0.5 : undefined);
/** doca-ts modes: one Promise per task, and batches (one Promise per batch; measured where the target asks). */
const modeName = (name: string, batched: boolean) => (batched ? `${name} (batches)` : name);
const DEVICE_TARGET = 0.9;

function targeted(row: Omit<Row, "target" | "met">, goal: number | undefined): Row {
  return goal === undefined ? row : { ...row, target: `≥ ${goal}×`, met: row.ratio !== null && row.ratio >= goal };
}

/** Deflate and SHA-256 rows: doca-ts per runtime, C on the device, the library from C. */
export function deflateShaRows(o: AccelSettings): Row[] {
  const driver = buildCDriver("accel-driver", ["doca_compress", "doca_sha", "doca_common"]);
  const workload = join(repoRoot, "benchmarks", "accel-workload.ts");
  const timeout = 120_000 + o.seconds * 4000;
  const rows: Row[] = [];
  for (const op of ["deflate", "sha"] as const) {
    const device = `${op}-device`, library = op === "deflate" ? "deflate-zlib" : "sha-crypto";
    const libName = op === "deflate" ? "zlib" : "libcrypto";
    const section = op === "deflate" ? "8. Deflate (compress), software device" : "8. SHA-256, software device";
    const name = op === "deflate" ? "compress deflate" : "sha256 hash";
    for (const size of o.sizes) {
      o.log?.(`${name} ${size} B`);
      const cell = (mode: string) => rate(JSON.parse(runChild([driver, mode, String(size), String(o.seconds), String(o.depth)], timeout)), size, o.perCpu);
      const c: number[] = [], lib: number[] = [], devRatio: number[] = [];
      const ts: Record<string, number[]> = {}, tsRatio: Record<string, number[]> = {};
      // batches where the target is about them (small pieces); one Promise per task everywhere
      const modes = size < 64 * 1024 ? [false, true] : [false];
      for (let round = 0; round < o.rounds; round++) {
        const cRate = cell(device), libRate = cell(library);
        c.push(cRate);
        lib.push(libRate);
        devRatio.push(cRate / libRate);
        for (const rt of o.runtimes) {
          for (const batched of modes) {
            const args = [op, String(size), String(o.seconds), String(o.depth), ...(batched ? ["batch"] : [])];
            const r = rate(JSON.parse(runChild(runtimeArgv(rt, workload, args, ["ffi", "env", "read"]), timeout)), size, o.perCpu);
            (ts[`${rt}${batched}`] ??= []).push(r);
            (tsRatio[`${rt}${batched}`] ??= []).push(r / cRate);
          }
        }
      }
      for (const rt of o.runtimes) {
        for (const batched of modes) {
          const key = `${rt}${batched}`;
          rows.push(targeted({ section, name: modeName(name, batched), runtime: RUNTIME_LABEL[rt], size, value: round3(median(ts[key])), unit: unitOf(o), ratio: round3(median(tsRatio[key])), against: "C" }, tsTarget(size, batched)));
        }
      }
      rows.push(targeted({ section, name, runtime: "C", size, value: round3(median(c)), unit: unitOf(o), ratio: round3(median(devRatio)), against: libName }, DEVICE_TARGET));
      rows.push({ section, name: `${libName} direct`, runtime: "C", size, value: round3(median(lib)), unit: unitOf(o), ratio: null, against: null });
    }
  }
  return rows;
}

interface EaCell {
  mibps: number;
  ops: number;
  /** MiB per CPU second of the process. */
  cpuMibps: number;
}

interface EaRun {
  rows: { row: string; payload: number; docaTs: EaCell; docaTsBatch: EaCell; cDevice: EaCell; cDirect: EaCell }[];
}

/** Erasure coding and AES-GCM rows: benchmarks/accel-ea.ts under each runtime, each round measuring its C cells too. */
export function ecAesRows(o: AccelSettings): Row[] {
  const script = join(repoRoot, "benchmarks", "accel-ea.ts");
  const runs: Record<string, EaRun[]> = {};
  for (let round = 0; round < o.rounds; round++) {
    for (const rt of o.runtimes) {
      o.log?.(`erasure coding and AES-GCM, ${RUNTIME_LABEL[rt]}, round ${round + 1}`);
      const argv = runtimeArgv(rt, script, ["--json", "--seconds", String(o.seconds), "--batch", String(o.batch)], ["all"]);
      (runs[rt] ??= []).push(JSON.parse(runChild(argv, 300_000 + o.seconds * 20_000)) as EaRun);
    }
  }
  const rows: Row[] = [];
  const unit = unitOf(o);
  const mibps = (c: EaCell) => (o.perCpu ? c.cpuMibps : c.mibps);
  const first = runs[o.runtimes[0]][0].rows;
  for (const [i, cell] of first.entries()) {
    const section = cell.row.startsWith("EC") ? "8. Erasure coding (8+2 create), software device" : "8. AES-256-GCM encrypt, software device";
    const name = cell.row.replace(/ \d+ KiB$/, "");
    const all = Object.values(runs).flat().map((r) => r.rows[i]);
    for (const rt of o.runtimes) {
      const mine = runs[rt].map((r) => r.rows[i]);
      for (const batched of [false, true]) {
        const ts = (r: EaRun["rows"][number]) => mibps(batched ? r.docaTsBatch : r.docaTs);
        rows.push(targeted({
          section,
          name: modeName(name, batched),
          runtime: RUNTIME_LABEL[rt],
          size: cell.payload,
          value: round3(median(mine.map(ts))),
          unit,
          ratio: round3(median(mine.map((r) => ts(r) / mibps(r.cDevice)))),
          against: "C",
        }, tsTarget(cell.payload, batched)));
      }
    }
    const library = cell.row.startsWith("EC") ? "GF(2^8) tables" : "OpenSSL";
    rows.push(targeted({
      section,
      name,
      runtime: "C",
      size: cell.payload,
      value: round3(median(all.map((r) => mibps(r.cDevice)))),
      unit,
      ratio: round3(median(all.map((r) => mibps(r.cDevice) / mibps(r.cDirect)))),
      against: library,
    }, DEVICE_TARGET));
    rows.push({ section, name: `${library} direct`, runtime: "C", size: cell.payload, value: round3(median(all.map((r) => mibps(r.cDirect)))), unit, ratio: null, against: null });
  }
  return rows;
}
