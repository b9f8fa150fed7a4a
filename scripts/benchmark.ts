#!/usr/bin/env -S deno run --allow-all
/**
 * deno task bench: doca-ts against C and against the machine's limits, on the software device, in one run.
 * Prints a table (rows 1-5 and 8 of benchmarks/README.md); --json FILE writes the same rows, --markdown prints them for
 * benchmarks/README.md, and every run but --smoke draws the rows that carry a target as a chart
 * (benchmarks/headline.svg, or --svg FILE). Quick by default; --full sweeps every size with more rounds and a 1 GiB
 * end-to-end copy.
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { parseFlags, UsageError } from "../tasks/common/cli.ts";
import { checkOutputFile, runBenchCommand } from "../benchmarks/command.ts";
import { runEndToEnd } from "../benchmarks/end-to-end.ts";
import { deflateShaRows, ecAesRows } from "../benchmarks/accel-rows.ts";
import { buildDriver, runMicro } from "../benchmarks/micro.ts";
import { buildComchDriver } from "../benchmarks/comch.ts";
import { formatMarkdown, formatTable, type Row } from "../benchmarks/rows.ts";
import { headlineChart } from "../benchmarks/chart.ts";
import { RUNTIMES, type RuntimeName } from "../benchmarks/runtimes.ts";

const HELP = `Usage: deno task bench [--full | --smoke] [--runtimes deno,bun,node] [--json FILE] [--markdown] [--svg FILE]
                       [--no-e2e] [--no-accel]

Measures on the software DOCA device, side by side in one run (rounds alternate C and each runtime; ratios are
medians of per-round ratios):
  1. the machine's limits: one-thread memcpy, process_vm_readv/writev
  2. C (benchmarks/driver.c) doing DMA memcpy tasks through the DOCA API, against those limits, and Comch
     messages host → DPU, control path and fast path (benchmarks/comch-driver.c, two processes)
  3. the same workloads from Deno, Bun and Node through doca-ts, against C
  4. the FFI cost of an idle doca_pe_progress per runtime, against C
  5. file copies end to end, one file on one disk: tasks/dma-copy.ts (host → DPU, DPU → host) and
     tasks/rdma-copy.ts (write and read modes), both sides fresh processes, against dd bs=4M conv=fsync, the C
     copy floor (benchmarks/copy-floor.c, with and without SHA-256; needs libcrypto) and the C TCP copy
     (benchmarks/tcp-copy.c); peak RSS of each side; a 1 MiB dma-copy's wall time
  8. the accelerators (rows 6 and 7 are bench:rdma's and bench:storage's): deflate, SHA-256, erasure coding,
     AES-GCM from doca-ts against C on the device, and C on the device against its backing library called
     directly (zlib, libcrypto, GF(2^8) tables, OpenSSL); every cell warmed up untimed first, C and TypeScript
     alike (deno task bench:accel runs these rows alone, with its own --rounds and --seconds)

  --full       sizes 4 KiB … 64 MiB, 5 rounds, 1 GiB end-to-end file (tens of minutes: per round, row 5 copies
               the file 4 times per runtime and 4 times more before each runtime's copies and after the last)
               (default: 4 KiB, 1 MiB, 64 MiB, 3 rounds, 256 MiB file; row 8: 0.25 s cells, 5 rounds, full: 1 s;
               about 6 minutes on 2 cores, with row 8)
  --smoke      tiny sizes and times: checks that every row can be produced (the test suite runs this)
  --runtimes   subset of deno,bun,node (default: all three)
  --json FILE  write the rows as JSON (name, runtime, size, value, unit, ratio, against, target, met)
  --markdown   print the table as Markdown (benchmarks/README.md's table)
  --svg FILE   where the chart of the rows with a target goes (default: benchmarks/headline.svg; none with --smoke)
  --no-e2e     skip row 5 (the file copies)
  --no-accel   skip row 8 (the accelerators)`;

const OPTIONS = {
  full: { type: "boolean" },
  smoke: { type: "boolean" },
  runtimes: { type: "string", default: RUNTIMES.join(",") },
  json: { type: "string" },
  markdown: { type: "boolean" },
  svg: { type: "string" },
  "no-e2e": { type: "boolean" },
  "no-accel": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;
const KiB = 1024, MiB = 1024 * KiB;

async function main(args: string[]): Promise<void> {
  const { values } = parseFlags(args, OPTIONS);
  checkOutputFile(values.json, "--json");
  checkOutputFile(values.svg, "--svg");
  if (values.help) {
    console.log(HELP);
    return;
  }
  if (values.full && values.smoke) throw new UsageError("--full and --smoke exclude each other");
  const runtimes = values.runtimes!.split(",").map((r) => r.trim()).filter(Boolean) as RuntimeName[];
  const unknown = runtimes.filter((r) => !RUNTIMES.includes(r));
  if (unknown.length || runtimes.length === 0) {
    throw new UsageError(`unknown runtime(s) "${unknown.join(", ")}"; choose from ${RUNTIMES.join(", ")}`);
  }

  const mode = values.smoke ? "smoke" : values.full ? "full" : "quick";
  const settings = {
    smoke: { sizes: [4 * KiB, MiB], seconds: 0.02, rounds: 1, fileSize: 4 * MiB, wallRuns: 1, accelSeconds: 0.02, accelRounds: 1 },
    // row 8: 5 rounds (3 gave a different verdict from run to run for ratios near 0.9×), each cell warmed up first
    quick: { sizes: [4 * KiB, MiB, 64 * MiB], seconds: 0.15, rounds: 3, fileSize: 256 * MiB, wallRuns: 3, accelSeconds: 0.25, accelRounds: 5 },
    full: { sizes: [4 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB], seconds: 0.4, rounds: 5, fileSize: 1024 * MiB, wallRuns: 5, accelSeconds: 1, accelRounds: 5 },
  }[mode];
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

  const started = performance.now();
  const driver = buildDriver();
  buildComchDriver();
  const rows: Row[] = await runMicro({ ...settings, depth: 16, runtimes, log });
  if (!values["no-e2e"]) rows.push(...(await runEndToEnd({ ...settings, runtimes, driver, log })));
  if (!values["no-accel"]) {
    const accel = { rounds: settings.accelRounds, seconds: settings.accelSeconds, sizes: [64 * KiB, 4 * KiB], runtimes, depth: 16, batch: 32, log };
    rows.push(...deflateShaRows(accel), ...ecAesRows(accel));
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(values.markdown ? formatMarkdown(rows) : formatTable(rows));
  console.log(`\n${mode} run, ${seconds} s; ratios are medians of per-round ratios (${settings.rounds} rounds).`);
  const svg = values.svg ?? (mode === "smoke" ? undefined : new URL("../benchmarks/headline.svg", import.meta.url).pathname);
  if (svg) {
    const day = new Date().toISOString().slice(0, 10);
    writeFileSync(svg, headlineChart(rows, `deno task bench (${mode}), software device, ${day}`));
    log(`wrote ${svg}`);
  }
  if (values.json) {
    writeFileSync(values.json, JSON.stringify(rows, null, 2) + "\n");
    log(`wrote ${values.json}`);
  }
}

// A stop removes the run's temporary folders and says so; a bad flag is one line, exit 2 (benchmarks/command.ts)
await runBenchCommand("bench", () => main(process.argv.slice(2)));
