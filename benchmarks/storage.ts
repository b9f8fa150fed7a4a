#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * Storage relay rows (issue 31): NVIDIA's storage application (zero-copy flow) on the software device with NVIDIA's
 * own initiator_comch and target_rdma, the DPU relay either NVIDIA's comch_to_rdma_zero_copy (C) or doca-ts's
 * tasks/storage-relay.ts (Deno). Each cell is one whole session; the rate is the initiator's own count over its own
 * duration (its "Operation count" and "Duration (seconds)"), 4 KiB blocks, 64 transactions in flight. Rounds alternate
 * which relay goes first; each ratio row is the median of the per-round ratios. Then the GGA-offload rows (where
 * liblz4's headers are): NVIDIA's comch_to_rdma_gga_offload reading NVIDIA's generated content (LZ4 and EC on the
 * device), plain and with every fourth read recovered; C only, no ratio. Needs a snapshot of NVIDIA's samples
 * (tools/nvidia-snapshot.ts).
 *
 *   deno task bench:storage [--rounds N] [--ops N] [--json FILE]
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { findSnapshot, NO_SNAPSHOT } from "../tools/nvidia-snapshot.ts";
import { buildFolder, buildPrograms, flow, generateGgaContent, ggaAvailable, ggaFlow, lz4Missing, removeBuild } from "../tools/nvidia-storage.ts";
import { join } from "node:path";
import { atLeast, formatTable, median, round3, type Row } from "./rows.ts";
import { parseFlags, positiveInt, UsageError } from "../tasks/common/cli.ts";
import { runBenchCommand } from "./command.ts";

const FLAGS = { rounds: { type: "string" }, ops: { type: "string" }, json: { type: "string" }, help: { type: "boolean", short: "h" } } as const;
const BLOCK = 4096;
const SECTION = "Storage relay: NVIDIA's initiator and target, the DPU relay in C (NVIDIA's) or doca-ts";

/** Operations per second the initiator measured, from its stats. */
function rate(log: string): number {
  const count = /Operation count: (\d+)/.exec(log), seconds = /Duration \(seconds\): ([\d.]+)/.exec(log);
  if (!count || !seconds) throw new Error(`no stats in the initiator's output:\n${log.slice(-2000)}`);
  return Number(count[1]) / Number(seconds[1]);
}

const GGA_SECTION = "Storage relay, GGA offload: NVIDIA's initiator, three targets and comch_to_rdma_gga_offload (C)";

/**
 * The GGA-offload relay (NVIDIA's C only: doca-ts has no GGA relay), reads of 256 LZ4-compressed, erasure-coded blocks
 * from NVIDIA's generator: plain, and with every fourth read recovered by EC. Empty where liblz4's headers are missing.
 */
async function ggaRows(rounds: number, ops: number): Promise<Row[]> {
  if (!ggaAvailable()) {
    console.error(`GGA-offload rows skipped: ${lz4Missing() ?? "the GGA-offload programs were not built"}`);
    return [];
  }
  const plain = join(buildFolder(), "gga-plain.txt");
  const words = ["block", "parity", "storage", "relay", "host", "target", "lz4", "erasure"];
  let text = "";
  for (let i = 0; text.length < 256 * BLOCK; i++) text += words[(i * 7 + (i >> 3)) % words.length] + " ";
  writeFileSync(plain, text.slice(0, 256 * BLOCK));
  const content = generateGgaContent(plain, buildFolder(), BLOCK);
  const rows: Row[] = [];
  for (const [extra, name] of [[[], "gga read"], [["--trigger-recovery-read-every-n", "4"], "gga read, 1 in 4 recovered"]] as const) {
    const rates: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const r = await ggaFlow("read_throughput_test", content, ["--run-limit-operation-count", String(ops), "--transaction-count", "64"], [...extra]);
      if (r.host.code !== 0) throw new Error(`GGA ${name}: the initiator exited ${r.host.code}\n${r.host.log.slice(-2000)}`);
      rates.push(rate(r.host.log));
      console.error(`round ${round + 1}: ${name} C ${rates.at(-1)!.toFixed(0)} ops/s`);
    }
    const value = median(rates);
    rows.push({ section: GGA_SECTION, name: `${name} ops/s`, runtime: "C", size: BLOCK, value: round3(value), unit: "ops/s", ratio: null, against: null });
    rows.push({ section: GGA_SECTION, name: `${name} throughput`, runtime: "C", size: BLOCK, value: round3(value * BLOCK / 2 ** 20), unit: "MiB/s", ratio: null, against: null });
  }
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseFlags(process.argv.slice(2), FLAGS);
  if (values.help) {
    console.log("Usage: bench:storage [--rounds N (3)] [--ops N (2000)] [--json FILE]");
    return;
  }
  const rounds = values.rounds === undefined ? 3 : positiveInt(values.rounds, "--rounds", 50);
  const ops = values.ops === undefined ? 2000 : positiveInt(values.ops, "--ops", 10_000_000);
  const snapshot = findSnapshot();
  if (!snapshot) throw new UsageError(NO_SNAPSHOT);
  buildPrograms(snapshot);
  const rows: Row[] = [];
  try {
    for (const [strategy, name] of [["read_throughput_test", "read"], ["write_throughput_test", "write"]] as const) {
      const c: number[] = [], ts: number[] = [], ratios: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? (["nvidia", "doca-ts"] as const) : (["doca-ts", "nvidia"] as const);
        const got: Record<string, number> = {};
        for (const relay of order) {
          const r = await flow(strategy, ["--block-count", "256", "--block-size", String(BLOCK)], [
            "--run-limit-operation-count", String(ops), "--transaction-count", "64",
          ], relay);
          if (r.host.code !== 0) throw new Error(`${relay} ${strategy}: the initiator exited ${r.host.code}\n${r.host.log.slice(-2000)}`);
          got[relay] = rate(r.host.log);
        }
        c.push(got.nvidia);
        ts.push(got["doca-ts"]);
        ratios.push(got["doca-ts"] / got.nvidia);
        console.error(`round ${round + 1}: ${name} C ${got.nvidia.toFixed(0)} ops/s, Deno ${got["doca-ts"].toFixed(0)} ops/s`);
      }
      const ratio = round3(median(ratios));
      for (const [runtime, values, r] of [["C", c, null], ["Deno", ts, ratio]] as const) {
        rows.push({ section: SECTION, name: `${name} ops/s`, runtime, size: BLOCK, value: round3(median([...values])), unit: "ops/s", ratio: r, against: r === null ? null : "C", target: r === null ? undefined : "≥ 0.8×", met: r === null ? undefined : atLeast(r, 0.8) });
        rows.push({ section: SECTION, name: `${name} throughput`, runtime, size: BLOCK, value: round3(median([...values]) * BLOCK / 2 ** 20), unit: "MiB/s", ratio: r, against: r === null ? null : "C", target: r === null ? undefined : "≥ 0.8×", met: r === null ? undefined : atLeast(r, 0.8) });
      }
    }
    rows.push(...await ggaRows(rounds, ops));
  } finally {
    removeBuild();
  }
  console.log(formatTable(rows));
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2) + "\n");
}

await runBenchCommand("bench:storage", main);
