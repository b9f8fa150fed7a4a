#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * Accelerator rows (issue 30), one short run: deflate and SHA-256 of 64 KiB and 4 KiB pieces, DEPTH in flight, on
 * the software device from doca-ts (Deno by default; --runtimes for Bun and Node) and from C (benchmarks/accel-driver.c),
 * and the backing library called directly from C (zlib, libcrypto): what the device itself costs over its library,
 * and what doca-ts costs over C. Rounds alternate the three; each ratio is the median of its per-round ratios. The
 * cells are benchmarks/accel-rows.ts's, which `deno task bench` runs as row 8.
 *
 *   deno task bench:accel [--rounds N] [--seconds S] [--sizes 65536,4096] [--runtimes deno,bun,node] [--json FILE]
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { deflateShaRows } from "./accel-rows.ts";
import { formatTable } from "./rows.ts";
import { parseFlags, positiveInt } from "../tasks/common/cli.ts";
import { ROUND_FLAGS, roundSettings } from "./round-flags.ts";

const FLAGS = { ...ROUND_FLAGS, depth: { type: "string" } } as const;

const HELP = `Usage: bench:accel [--rounds N] [--seconds S] [--sizes 65536,4096] [--runtimes deno] [--depth D] [--json FILE]
Deflate and SHA-256 rates: doca-ts vs a C driver on the software device vs the library (zlib, libcrypto) from C;
below 64 KiB doca-ts also as batches (one Promise per DEPTH tasks).
  --rounds N     rounds (default 3), each running every cell once, alternating
  --seconds S    seconds per cell (default 0.5)
  --sizes LIST   piece sizes in bytes (default 65536,4096)
  --runtimes R   doca-ts runtimes among deno,bun,node (default deno)
  --depth D      tasks in flight (default 16)
  --json FILE    also write the rows as JSON`;

function main(): void {
  const { values } = parseFlags(process.argv.slice(2), FLAGS);
  if (values.help) {
    console.log(HELP);
    return;
  }
  const { rounds, seconds, sizes, runtimes } = roundSettings(values, { maxRounds: 100, sizes: [65536, 4096], maxSize: 64 << 20, runtimes: ["deno"] });
  const depth = values.depth ? positiveInt(values.depth, "--depth", 64) : 16;
  const rows = deflateShaRows({ rounds, seconds, sizes, runtimes, depth, batch: 0 });
  console.log(formatTable(rows));
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
}

try {
  main();
} catch (e) {
  console.error(`bench:accel: ${(e as Error).message}`);
  process.exit((e as Error).name === "UsageError" ? 2 : 1);
}
