#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * Accelerator rows (issue 30), one short run: deflate and SHA-256 of 64 KiB and 4 KiB pieces, DEPTH in flight, on
 * the software device from doca-ts (Deno by default; --runtimes for Bun and Node) and from C (benchmarks/accel-driver.c),
 * and the backing library called directly from C (zlib, libcrypto): what the device itself costs over its library,
 * and what doca-ts costs over C. Rounds alternate the three; each ratio is the median of its per-round ratios.
 *
 *   deno task bench:accel [--rounds N] [--seconds S] [--sizes 65536,4096] [--runtimes deno,bun,node] [--json FILE]
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { buildCDriver } from "./c-driver.ts";
import { formatTable, median, round3, type Row } from "./rows.ts";
import { RUNTIME_LABEL, runtimeArgv } from "./runtimes.ts";
import { parseFlags, positiveInt } from "../tasks/common/cli.ts";
import { ROUND_FLAGS, roundSettings } from "./round-flags.ts";

const FLAGS = { ...ROUND_FLAGS, depth: { type: "string" } } as const;

const HELP = `Usage: bench:accel [--rounds N] [--seconds S] [--sizes 65536,4096] [--runtimes deno] [--depth D] [--json FILE]
Deflate and SHA-256 rates: doca-ts vs a C driver on the software device vs the library (zlib, libcrypto) from C.
  --rounds N     rounds (default 3), each running every cell once, alternating
  --seconds S    seconds per cell (default 0.5)
  --sizes LIST   piece sizes in bytes (default 65536,4096)
  --runtimes R   doca-ts runtimes among deno,bun,node (default deno)
  --depth D      tasks in flight (default 16)
  --json FILE    also write the rows as JSON`;

interface Result {
  ops: number;
  seconds: number;
}

/**
 * zlib allocates ~270 KiB of state per stream (one per deflate task): with glibc's default, adaptive mmap threshold
 * that costs an mmap, page faults and an munmap per 4 KiB piece in a fresh C process but not in a runtime whose heap
 * already grew (measured: C 3-7k ops/s, Deno 11-16k, zlib direct 6k). Every process gets the same fixed thresholds,
 * so the rows compare the code, not the allocator's history (then all three give ~10k ops/s at 4 KiB).
 */
const ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: String(4 << 20), MALLOC_TRIM_THRESHOLD_: String(64 << 20) };

function runJson(argv: string[]): Result {
  const r = spawnSync(argv[0], argv.slice(1), { cwd: repoRoot, encoding: "utf8", timeout: 120_000, env: { ...process.env, ...ALLOCATOR_ENV } });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status}): ${r.stderr}`);
  const line = r.stdout.trim().split("\n").pop()!;
  const parsed = JSON.parse(line) as Result;
  return parsed;
}

const rate = (r: Result, size: number) => (r.ops * size) / r.seconds / 2 ** 20; // MiB/s

function main(): void {
  const { values } = parseFlags(process.argv.slice(2), FLAGS);
  if (values.help) {
    console.log(HELP);
    return;
  }
  const { rounds, seconds, sizes, runtimes } = roundSettings(values, { maxRounds: 100, sizes: [65536, 4096], maxSize: 64 << 20, runtimes: ["deno"] });
  const depth = values.depth ? positiveInt(values.depth, "--depth", 64) : 16;
  const driver = buildCDriver("accel-driver", ["doca_compress", "doca_sha", "doca_common"]);
  const workload = join(repoRoot, "benchmarks", "accel-workload.ts");
  const rows: Row[] = [];
  for (const op of ["deflate", "sha"] as const) {
    const device = `${op}-device`, library = op === "deflate" ? "deflate-zlib" : "sha-crypto";
    const libName = op === "deflate" ? "zlib" : "libcrypto";
    for (const size of sizes) {
      const c: number[] = [], lib: number[] = [], ts: Record<string, number[]> = {};
      const tsRatio: Record<string, number[]> = {}, devRatio: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const cRate = rate(runJson([driver, device, String(size), String(seconds), String(depth)]), size);
        const libRate = rate(runJson([driver, library, String(size), String(seconds), String(depth)]), size);
        c.push(cRate);
        lib.push(libRate);
        devRatio.push(cRate / libRate);
        for (const rt of runtimes) {
          const r = rate(runJson(runtimeArgv(rt, workload, [op, String(size), String(seconds), String(depth)], ["ffi", "env", "read"])), size);
          (ts[rt] ??= []).push(r);
          (tsRatio[rt] ??= []).push(r / cRate);
        }
      }
      const section = op === "deflate" ? "Deflate (compress), software device" : "SHA-256, software device";
      const name = op === "deflate" ? "compress deflate" : "sha256 hash";
      for (const rt of runtimes) {
        rows.push({ section, name, runtime: RUNTIME_LABEL[rt], size, value: round3(median(ts[rt])), unit: "MiB/s", ratio: round3(median(tsRatio[rt])), against: "C" });
      }
      rows.push({ section, name, runtime: "C", size, value: round3(median(c)), unit: "MiB/s", ratio: round3(median(devRatio)), against: libName });
      rows.push({ section, name: `${libName} direct`, runtime: "C", size, value: round3(median(lib)), unit: "MiB/s", ratio: null, against: null });
    }
  }
  console.log(formatTable(rows));
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
}

try {
  main();
} catch (e) {
  console.error(`bench:accel: ${(e as Error).message}`);
  process.exit((e as Error).name === "UsageError" ? 2 : 1);
}
