#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * Accelerator rows (issue 30), on their own: row 8 of `deno task bench` with rounds and cell lengths of your choice.
 * Deflate and SHA-256 of 64 KiB and 4 KiB pieces, DEPTH in flight (accel-workload.ts per runtime against
 * accel-driver.c); erasure coding (8+2 create) and AES-256-GCM encrypt, 64 KiB and 4 KiB, BATCH in flight
 * (accel-ea.ts per runtime, its C cells measured in the same child). Each against C on the software device and the
 * backing library called directly from C. Rounds alternate C and the runtimes; each ratio is the median of its
 * per-round ratios. The cells are benchmarks/accel-rows.ts's.
 *
 *   deno task bench:accel [--rounds N] [--seconds S] [--sizes 65536,4096] [--runtimes deno,bun,node]
 *                         [--only deflate-sha|ec-aes] [--per-cpu] [--json FILE]
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { deflateShaRows, ecAesRows } from "./accel-rows.ts";
import { formatTable } from "./rows.ts";
import { parseFlags, positiveInt, UsageError } from "../tasks/common/cli.ts";
import { ROUND_FLAGS, roundSettings } from "./round-flags.ts";

const FLAGS = { ...ROUND_FLAGS, depth: { type: "string" }, batch: { type: "string" }, only: { type: "string" }, "per-cpu": { type: "boolean" } } as const;

const HELP = `Usage: bench:accel [--rounds N] [--seconds S] [--sizes 65536,4096] [--runtimes deno] [--depth D] [--batch B]
                   [--only deflate-sha|ec-aes] [--per-cpu] [--json FILE]
The accelerator rows (row 8 of deno task bench): doca-ts vs a C driver on the software device vs the backing library
from C. Deflate and SHA-256 (DEPTH in flight; below 64 KiB doca-ts also as batches of DEPTH), erasure coding 8+2
create and AES-256-GCM encrypt (BATCH in flight, one Promise per task and batches; always 64 KiB and 4 KiB). Every
cell warms up untimed first (half a cell below 0.5 s, else 0.25 s), in C and TypeScript alike.
  --rounds N     rounds (default 3), each running every cell once, alternating C and the runtimes
  --seconds S    measured seconds per cell (default 0.5)
  --sizes LIST   deflate and SHA-256 piece sizes in bytes (default 65536,4096)
  --runtimes R   doca-ts runtimes among deno,bun,node (default deno)
  --depth D      deflate and SHA-256 tasks in flight (default 16)
  --batch B      erasure coding and AES-GCM tasks in flight (default 32)
  --only ROWS    deflate-sha or ec-aes (default: both)
  --per-cpu      rates per CPU second of each process (all its threads) instead of per wall second: on a machine
                 busy with other work, what each side spends per task rather than what the scheduler gave it
  --json FILE    also write the rows as JSON`;

function main(): void {
  const { values } = parseFlags(process.argv.slice(2), FLAGS);
  if (values.help) {
    console.log(HELP);
    return;
  }
  const { rounds, seconds, sizes, runtimes } = roundSettings(values, { maxRounds: 100, sizes: [65536, 4096], maxSize: 64 << 20, runtimes: ["deno"] });
  const depth = values.depth ? positiveInt(values.depth, "--depth", 64) : 16;
  const batch = values.batch ? positiveInt(values.batch, "--batch", 256) : 32;
  const only = values.only;
  if (only !== undefined && only !== "deflate-sha" && only !== "ec-aes") throw new UsageError(`--only: expected deflate-sha or ec-aes, got ${only}`);
  const settings = { rounds, seconds, sizes, runtimes, depth, batch, perCpu: values["per-cpu"] === true, log: (line: string) => console.error(line) };
  const rows = [...(only !== "ec-aes" ? deflateShaRows(settings) : []), ...(only !== "deflate-sha" ? ecAesRows(settings) : [])];
  console.log(formatTable(rows));
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
}

try {
  main();
} catch (e) {
  console.error(`bench:accel: ${(e as Error).message}`);
  process.exit((e as Error).name === "UsageError" ? 2 : 1);
}
