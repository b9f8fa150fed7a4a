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
import { atLeast, median, round3, type Row } from "./rows.ts";
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

/** Runs a cell's process (fixed allocator thresholds, a deadline); its stdout's lines. */
function runChildLines(argv: string[], timeoutMs: number): string[] {
  const r = spawnSync(argv[0], argv.slice(1), { cwd: repoRoot, encoding: "utf8", timeout: timeoutMs, env: { ...process.env, ...ALLOCATOR_ENV } });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout.trim().split("\n");
}

/** The last line a cell's process printed (its result). */
function runChild(argv: string[], timeoutMs: number): string {
  return runChildLines(argv, timeoutMs).pop()!;
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
  return goal === undefined ? row : { ...row, target: `≥ ${goal}×`, met: row.ratio !== null && atLeast(row.ratio, goal) };
}

/** Deflate and SHA-256 rows: doca-ts per runtime, C on the device, the library from C. */
export function deflateShaRows(o: AccelSettings): Row[] {
  const driver = buildCDriver("accel-driver", ["doca_compress", "doca_sha", "doca_common"]);
  const workload = join(repoRoot, "benchmarks", "accel-workload.ts");
  const ops = ["deflate", "sha"] as const;
  // batches where the target is about them (small pieces); one Promise per task everywhere
  const modesOf = (size: number) => (size < 64 * 1024 ? [false, true] : [false]);
  // One runtime process per round runs all of its cells (accel-workload.ts): a start-up per cell cost more than the
  // cells themselves, which is time more rounds use better.
  const cells = ops.flatMap((op) => o.sizes.flatMap((size) => modesOf(size).map((batched) => ({ op, size, batched }))));
  const cellArgs = cells.map((x) => `${x.op}:${x.size}${x.batched ? ":batch" : ""}`);
  const cTimeout = 120_000 + o.seconds * 4000, tsTimeout = 120_000 + cells.length * o.seconds * 4000;
  const c: Record<string, number[]> = {}, lib: Record<string, number[]> = {}, devRatio: Record<string, number[]> = {};
  const ts: Record<string, number[]> = {}, tsRatio: Record<string, number[]> = {};
  for (let round = 0; round < o.rounds; round++) {
    const cRate: Record<string, number> = {};
    for (const op of ops) {
      for (const size of o.sizes) {
        const cell = (mode: string) => rate(JSON.parse(runChild([driver, mode, String(size), String(o.seconds), String(o.depth)], cTimeout)), size, o.perCpu);
        const at = `${op}:${size}`;
        const dev = cell(`${op}-device`), direct = cell(op === "deflate" ? "deflate-zlib" : "sha-crypto");
        cRate[at] = dev;
        (c[at] ??= []).push(dev);
        (lib[at] ??= []).push(direct);
        (devRatio[at] ??= []).push(dev / direct);
      }
    }
    for (const rt of o.runtimes) {
      o.log?.(`deflate and SHA-256, ${RUNTIME_LABEL[rt]}, round ${round + 1}`);
      const lines = runChildLines(runtimeArgv(rt, workload, [String(o.seconds), String(o.depth), ...cellArgs], ["ffi", "env", "read"]), tsTimeout);
      if (lines.length !== cells.length) throw new Error(`accel-workload.ts under ${rt}: ${lines.length} results for ${cells.length} cells`);
      cells.forEach((x, i) => {
        const r = rate(JSON.parse(lines[i]), x.size, o.perCpu);
        const key = `${rt}:${x.op}:${x.size}:${x.batched}`;
        (ts[key] ??= []).push(r);
        (tsRatio[key] ??= []).push(r / cRate[`${x.op}:${x.size}`]);
      });
    }
  }
  const rows: Row[] = [];
  for (const op of ops) {
    const libName = op === "deflate" ? "zlib" : "libcrypto";
    const section = op === "deflate" ? "8. Deflate (compress), software device" : "8. SHA-256, software device";
    const name = op === "deflate" ? "compress deflate" : "sha256 hash";
    for (const size of o.sizes) {
      for (const rt of o.runtimes) {
        for (const batched of modesOf(size)) {
          const key = `${rt}:${op}:${size}:${batched}`;
          rows.push(targeted({ section, name: modeName(name, batched), runtime: RUNTIME_LABEL[rt], size, value: round3(median(ts[key])), unit: unitOf(o), ratio: round3(median(tsRatio[key])), against: "C" }, tsTarget(size, batched)));
        }
      }
      const at = `${op}:${size}`;
      rows.push(targeted({ section, name, runtime: "C", size, value: round3(median(c[at])), unit: unitOf(o), ratio: round3(median(devRatio[at])), against: libName }, DEVICE_TARGET));
      rows.push({ section, name: `${libName} direct`, runtime: "C", size, value: round3(median(lib[at])), unit: unitOf(o), ratio: null, against: null });
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
  rows: { row: string; payload: number; docaTs: EaCell; docaTsBatch: EaCell; cDevice: EaCell }[];
}

/** The EA rows' cells (accel-ea.ts's order): kind and payload. */
const EA_CELLS = [["ec", 65536], ["ec", 4096], ["aes", 65536], ["aes", 4096]] as const;

/**
 * Erasure coding and AES-GCM rows: benchmarks/accel-ea.ts under each runtime, each measuring C on the device right
 * after its own cells; the math called directly from C once per round here (accel-ea-driver.c).
 */
export function ecAesRows(o: AccelSettings): Row[] {
  const script = join(repoRoot, "benchmarks", "accel-ea.ts");
  const driver = buildCDriver("accel-ea-driver", ["doca_erasure_coding", "doca_aes_gcm", "doca_common"]);
  const runs: Record<string, EaRun[]> = {};
  const direct: EaCell[][] = []; // [round][cell]
  for (let round = 0; round < o.rounds; round++) {
    direct.push(EA_CELLS.map(([kind, payload]) => {
      const line = runChild([driver, kind, "direct", String(payload), String(o.batch), String(o.seconds)], 60_000 + o.seconds * 4000);
      const m = /bytes=(\d+) seconds=([\d.]+) ops=(\d+) cpu=([\d.]+)/.exec(line);
      if (!m) throw new Error(`accel-ea-driver ${kind} direct ${payload}: unexpected output ${line}`);
      const mib = Number(m[1]) / 2 ** 20;
      return { mibps: mib / Number(m[2]), ops: Number(m[3]) / Number(m[2]), cpuMibps: mib / Math.max(Number(m[4]), 1e-6) };
    }));
    for (const rt of o.runtimes) {
      o.log?.(`erasure coding and AES-GCM, ${RUNTIME_LABEL[rt]}, round ${round + 1}`);
      const argv = runtimeArgv(rt, script, ["--json", "--seconds", String(o.seconds), "--batch", String(o.batch), "--driver", driver, "--no-direct"], ["all"]);
      (runs[rt] ??= []).push(JSON.parse(runChild(argv, 300_000 + o.seconds * 20_000)) as EaRun);
    }
  }
  const rows: Row[] = [];
  const unit = unitOf(o);
  const mibps = (c: EaCell) => (o.perCpu ? c.cpuMibps : c.mibps);
  const first = runs[o.runtimes[0]][0].rows;
  if (first.length !== EA_CELLS.length) throw new Error(`accel-ea.ts gave ${first.length} rows for ${EA_CELLS.length} cells`);
  for (const [i, cell] of first.entries()) {
    const section = cell.row.startsWith("EC") ? "8. Erasure coding (8+2 create), software device" : "8. AES-256-GCM encrypt, software device";
    const name = cell.row.replace(/ \d+ KiB$/, "");
    // C on the device, every runtime's round, against the direct math of the same round
    const devVsDirect = o.runtimes.flatMap((rt) => runs[rt].map((r, round) => mibps(r.rows[i].cDevice) / mibps(direct[round][i])));
    const devices = Object.values(runs).flat().map((r) => mibps(r.rows[i].cDevice));
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
      value: round3(median(devices)),
      unit,
      ratio: round3(median(devVsDirect)),
      against: library,
    }, DEVICE_TARGET));
    rows.push({ section, name: `${library} direct`, runtime: "C", size: cell.payload, value: round3(median(direct.map((d) => mibps(d[i])))), unit, ratio: null, against: null });
  }
  return rows;
}
