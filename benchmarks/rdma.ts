#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * RDMA rows (issue 21 §5), one run: RDMA write, read and send bandwidth and message rate on the software device,
 * doca-ts on Deno, Bun and Node against the same requester in C (benchmarks/rdma-driver.c), both against the same C
 * responder process; and the device's C write against its limit, a C TCP stream over loopback of the same sizes.
 * Rounds alternate C and each runtime; each row is the median of its per-round ratios.
 *
 *   deno task bench:rdma [--rounds N] [--seconds S] [--sizes 64,4096,...] [--runtimes deno,bun,node] [--json FILE]
 */
import { rmSync, writeFileSync } from "node:fs";
import { benchTempDir, checkOutputFile, runBenchCommand } from "./command.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { buildCDriver, driverPath } from "./c-driver.ts";
import { type LineProcess, startLineProcess } from "./line-process.ts";
import { atLeast, formatTable, median, round3, type Row } from "./rows.ts";
import { RUNTIME_LABEL, type RuntimeName, RUNTIMES, runtimeArgv } from "./runtimes.ts";
import { parseFlags } from "../tasks/common/cli.ts";
import { ROUND_FLAGS, roundSettings } from "./round-flags.ts";

const DRIVER = driverPath("rdma-driver");
const WORKLOAD = join(repoRoot, "benchmarks", "rdma-workload.ts");
const OPS = ["write", "read", "send"] as const;
/** doca-ts runs each op also as batches (writeBatch, ...: one Promise per DEPTH tasks); C has one way. */
const TS_OPS = [...OPS, ...OPS.map((op) => `${op}-batch`)];
const DEPTH = 16;
const MiB = 1 << 20;

/** The rest of the first stdout line of `p` that starts with `prefix` (a value a driver prints: "port 4242"). */
async function valueAfter(p: LineProcess, prefix: string, timeoutMs: number): Promise<string> {
  return (await p.line(prefix, timeoutMs)).slice(prefix.length).trim();
}

interface Cell {
  op: string;
  size: number;
  /** Operations per second. */
  rate: number;
}

function parseCells(lines: string[]): Cell[] {
  return lines.filter((l) => l.startsWith("cell ")).map((l) => {
    const [, op, size, ops, secs] = l.split(" ");
    return { op, size: Number(size), rate: Number(ops) / Number(secs) };
  });
}

/** One requester (C or a runtime) against a fresh C responder; every process reaped, whatever happens. */
async function runRequester(who: "c" | RuntimeName, sizes: number[], seconds: number, simDir: string): Promise<Cell[]> {
  const env = { DOCA_SIM_DIR: simDir };
  const responder = startLineProcess([DRIVER, "responder"], env);
  const ops = who === "c" ? OPS : TS_OPS;
  const args = [ops.join(","), sizes.join(","), String(seconds), String(DEPTH)];
  const requester = startLineProcess(who === "c" ? [DRIVER, "requester", ...args] : runtimeArgv(who, WORKLOAD, args, ["ffi", "env", "read"]), env);
  const timeoutMs = 60_000 + ops.length * sizes.length * seconds * 4000;
  const killer = setTimeout(() => [responder, requester].forEach((p) => p.child.kill("SIGKILL")), timeoutMs);
  try {
    const details = await valueAfter(responder, "details", 30_000);
    const mmap = await valueAfter(responder, "mmap", 30_000);
    requester.child.stdin!.write(`details ${details}\nmmap ${mmap}\n`);
    const theirs = await valueAfter(requester, "details", 60_000);
    responder.child.stdin!.write(`peer ${theirs}\n`);
    await valueAfter(responder, "connected", 30_000);
    requester.child.stdin!.write("go\n");
    await valueAfter(requester, "done", timeoutMs);
    return parseCells(requester.lines.splice(0).concat());
  } catch (e) {
    throw new Error(`RDMA cells for ${who} failed: ${(e as Error).message}\nresponder: ${responder.err.trim()}\nrequester: ${requester.err.trim()}`);
  } finally {
    clearTimeout(killer);
    responder.child.stdin!.end();
    requester.child.stdin!.end();
    const reap = setTimeout(() => [responder, requester].forEach((p) => p.child.kill("SIGKILL")), 10_000);
    await Promise.all([responder.exit, requester.exit]);
    clearTimeout(reap);
  }
}

/**
 * The limits: a C TCP stream over loopback, write() calls of each size; and (depth > 0) the same with at most `depth`
 * messages unanswered, each answered by the sink (cells "tcp-depth"): a request and its acknowledgement, as an RDMA
 * write with the requester's depth.
 */
async function runTcp(sizes: number[], seconds: number, depth = 0): Promise<Cell[]> {
  const sink = startLineProcess([DRIVER, "tcp-sink", ...(depth > 0 ? [sizes.join(",")] : [])], {});
  try {
    const port = await valueAfter(sink, "port", 10_000);
    const source = startLineProcess([DRIVER, "tcp-source", port, sizes.join(","), String(seconds), ...(depth > 0 ? [String(depth)] : [])], {});
    const code = await source.exit;
    if (code !== 0) throw new Error(`tcp-source exited ${code}: ${source.err}`);
    return parseCells(source.lines);
  } finally {
    sink.child.kill("SIGKILL");
    await sink.exit;
  }
}

const HELP = `Usage: deno task bench:rdma [--rounds N] [--seconds S] [--sizes LIST] [--runtimes deno,bun,node] [--json FILE]

RDMA write, read and send on the software device: bandwidth per size and message rate (64 B), doca-ts on each
runtime against the same requester in C (benchmarks/rdma-driver.c), both against one C responder process, ${DEPTH}
tasks in flight; and the device's C requester against C TCP over loopback, its limit: a plain stream of write()
calls, and the same with ${DEPTH} messages in flight, each answered (a request and its acknowledgement, as an RDMA
write with the requester's depth; the 64 B write and send are judged against it). Rounds alternate C
and the runtimes; each ratio is the median of the per-round ratios. doca-ts also runs each op as batches
(writeBatch, readBatch, sendBatch: one Promise per 16 tasks). Defaults: 3 rounds of 0.5 s per cell, sizes
64 B, 4 KiB, 64 KiB, 1 MiB, 4 MiB. Waits: every process is killed after a deadline proportional to its cells.`;

/**
 * The rows from the measurements: `rates[key]` the per-round operations per second, `ratios[key]` the per-round
 * runtime / C (and C / TCP) ratios. Each target is graded on the ratio as the row shows it.
 */
export function rdmaRows(
  sizes: number[],
  runtimes: readonly RuntimeName[],
  rates: Map<string, number[]>,
  ratios: Map<string, number[]>,
): Row[] {
  const rows: Row[] = [];
  const value = (key: string, size: number) => {
    const r = median(rates.get(key) ?? [NaN]);
    return size === 64 ? { value: round3(r / 1e6), unit: "M msg/s" } : { value: round3((r * size) / MiB), unit: "MiB/s" };
  };
  const LIMITS = "RDMA limit: C TCP over loopback";
  for (const size of sizes) {
    rows.push({ section: LIMITS, name: "TCP write()", runtime: "C", size, ...value(`tcp ${size}`, size), ratio: null, against: null });
  }
  for (const size of sizes) {
    rows.push({ section: LIMITS, name: `TCP, ${DEPTH} in flight`, runtime: "C", size, ...value(`tcp-depth ${size}`, size), ratio: null, against: null });
  }
  for (const op of OPS) {
    for (const size of sizes) {
      // issue 21: the write from 1 MiB >= 0.8x the TCP stream; issue 29: 64 B write and send >= 0.5x TCP with the
      // requester's depth (each message answered, DEPTH in flight); other cells show the same-depth ratio unjudged
      const large = op === "write" && size >= MiB, small = op !== "read" && size === 64;
      const against = large ? "tcp" : "tcp-depth";
      const ratio = median(ratios.get(`c ${op} ${size} / ${against}`) ?? [NaN]);
      const bound = large ? 0.8 : 0.5, reference = large ? "TCP" : `TCP (${DEPTH} in flight)`;
      rows.push({
        section: "RDMA on the software device (C requester)",
        name: `RDMA ${op}`,
        runtime: "C",
        size,
        ...value(`c ${op} ${size}`, size),
        ratio: round3(ratio),
        against: reference,
        ...(large || small ? { target: `≥ ${bound}× ${reference}`, met: atLeast(ratio, bound) } : {}),
      });
    }
  }
  for (const who of runtimes) {
    for (const op of TS_OPS) {
      for (const size of sizes) {
        const ratio = median(ratios.get(`${who} ${op} ${size}`) ?? [NaN]);
        // issue 13: write/read from 1 MiB >= 0.9x C (Node 0.8x); issue 29: every op up to 64 KiB >= 0.8x C
        const large = !op.startsWith("send") && size >= MiB, small = size <= 64 * 1024;
        const bound = large ? (who === "node" ? 0.8 : 0.9) : 0.8;
        const hasTarget = large || small;
        rows.push({
          section: "RDMA through doca-ts (same requester, same C responder)",
          name: `RDMA ${op.replace(/-batch$/, " (batches)")}`,
          runtime: RUNTIME_LABEL[who],
          size,
          ...value(`${who} ${op} ${size}`, size),
          ratio: round3(ratio),
          against: "C",
          ...(hasTarget ? { target: `≥ ${bound}× C`, met: atLeast(ratio, bound) } : {}),
        });
      }
    }
  }
  return rows;
}

export async function main(argv: string[]): Promise<Row[]> {
  const { values } = parseFlags(argv, ROUND_FLAGS);
  if (values.help) {
    console.log(HELP);
    return [];
  }
  checkOutputFile(values.json, "--json");
  const { rounds, seconds, sizes, runtimes } = roundSettings(values, {
    maxRounds: 50,
    sizes: [64, 4096, 65536, MiB, 4 * MiB],
    maxSize: 4 * MiB,
    runtimes: RUNTIMES,
  });
  buildCDriver("rdma-driver", ["doca_rdma", "doca_common"]);
  const simDir = benchTempDir(tmpdir(), "doca-ts-bench-rdma-");
  // ratios[key][round]: runtime / C, and C write / TCP; rates[key]: per-round values for the value column.
  const ratios = new Map<string, number[]>();
  const rates = new Map<string, number[]>();
  const add = (m: Map<string, number[]>, k: string, v: number) => m.set(k, [...(m.get(k) ?? []), v]);
  try {
    for (let round = 0; round < rounds; round++) {
      const order: ("c" | RuntimeName)[] = ["c", ...runtimes];
      const c = await runRequester("c", sizes, seconds, simDir);
      const tcp = [...await runTcp(sizes, seconds), ...await runTcp(sizes, seconds, DEPTH)];
      for (const cell of c) add(rates, `c ${cell.op} ${cell.size}`, cell.rate);
      for (const t of tcp) {
        add(rates, `${t.op} ${t.size}`, t.rate);
        for (const op of OPS) {
          const mine = c.find((x) => x.op === op && x.size === t.size);
          if (mine) add(ratios, `c ${op} ${t.size} / ${t.op}`, mine.rate / t.rate);
        }
      }
      for (const who of order.slice(1) as RuntimeName[]) {
        const cells = await runRequester(who, sizes, seconds, simDir);
        for (const cell of cells) {
          add(rates, `${who} ${cell.op} ${cell.size}`, cell.rate);
          const ref = c.find((x) => x.op === cell.op.replace(/-batch$/, "") && x.size === cell.size);
          if (ref) add(ratios, `${who} ${cell.op} ${cell.size}`, cell.rate / ref.rate);
        }
      }
      console.error(`bench:rdma: round ${round + 1}/${rounds} done`);
    }
  } finally {
    rmSync(simDir, { recursive: true, force: true });
  }
  const rows = rdmaRows(sizes, runtimes, rates, ratios);
  console.log(formatTable(rows));
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
  return rows;
}

if (import.meta.main ?? process.argv[1]?.endsWith("rdma.ts")) await runBenchCommand("bench:rdma", () => main(process.argv.slice(2)));
