/**
 * Shared pieces of the fault suite (tests/fault-*.test.ts): counters printed at the end of each file, a scratch
 * workspace with a private DOCA_SIM_DIR, DOCA_SIM_TRACE parsing, and launching tasks/dma-copy.ts or a helper script
 * under the runtime running the test.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { type RunningChild, startChild } from "../../../tasks/common/run-pair.ts";
import { type Workspace, workspace } from "../tasks/workspace.ts";

export const HOST_PCI = "0000:b1:00.1";
export const DPU_PCI = "0000:03:00.1";
export const repoRoot: string = fileURLToPath(new URL("../../..", import.meta.url));
export const DMA_COPY: string = join(repoRoot, "tasks", "dma-copy.ts");
export const SLOW: boolean = process.env.DOCA_TS_SLOW === "1";

/** The numbers the issue asks for, printed by every fault test file when it ends. */
export class FaultCounters {
  inputs = 0;
  faults = 0;
  copies = 0;
  bytesLost = 0;
  constructor(readonly file: string) {}
  line(): string {
    return `fault-suite: inputs tried ${this.inputs}, faults injected ${this.faults}, copies completed ${this.copies}, ` +
      `bytes lost ${this.bytesLost} (${this.file})`;
  }
  print(): void {
    console.log(this.line());
  }
}

/** A task workspace with its DOCA_SIM_DIR by name and a trace file (DOCA_SIM_TRACE in env). */
export interface FaultSpace extends Workspace {
  sim: string;
  trace: string;
}

const spaces: FaultSpace[] = [];

/** Private folders (host, DPU, DOCA_SIM_DIR: a task workspace) and a trace file path for one scenario. */
export function faultSpace(tag: string): FaultSpace {
  const w = workspace(`fault-${tag}`);
  const trace = join(w.root, "trace.log");
  const s: FaultSpace = {
    ...w,
    sim: w.env.DOCA_SIM_DIR,
    trace,
    env: { ...w.env, DOCA_SIM_TRACE: trace },
    list: (dir) => (existsSync(dir) ? readdirSync(dir).sort() : []),
  };
  spaces.push(s);
  return s;
}

export function removeSpaces(): void {
  for (const s of spaces.splice(0)) s.remove();
}

export interface TraceLine {
  pid: number;
  side: string;
  remotePid: number;
  addr: bigint;
  len: bigint;
  op: string;
  rangeBase: bigint;
  rangeLen: bigint;
  perm: number;
  verdict: string;
  raw: string;
}

/** DOCA_SIM_TRACE lines (sim/src/common/remote.c): `pid=.. side=.. remote_pid=.. addr=0x.. len=.. op=r range=0x..+N perm=0x.. verdict=..`. */
export function readTrace(path: string): TraceLine[] {
  if (!existsSync(path)) return [];
  const out: TraceLine[] = [];
  for (const raw of readFileSync(path, "utf8").split("\n")) {
    if (!raw.trim()) continue;
    const m =
      /^pid=(\d+) side=(\w+) remote_pid=(-?\d+) addr=0x([0-9a-f]+) len=(\d+) op=(\w) range=0x([0-9a-f]+)\+(\d+) perm=0x([0-9a-f]+) verdict=(\S+)$/
        .exec(raw);
    if (!m) throw new Error(`unparsable DOCA_SIM_TRACE line: ${JSON.stringify(raw)}`);
    out.push({
      pid: Number(m[1]),
      side: m[2],
      remotePid: Number(m[3]),
      addr: BigInt("0x" + m[4]),
      len: BigInt(m[5]),
      op: m[6],
      rangeBase: BigInt("0x" + m[7]),
      rangeLen: BigInt(m[8]),
      perm: parseInt(m[9], 16),
      verdict: m[10],
      raw,
    });
  }
  return out;
}

/**
 * Every access the device allowed lies inside the range the exporter really exported (`exported`, when the test
 * knows it) and inside the range the importer's map names. Returns the allowed lines.
 */
export function assertTraceInside(lines: TraceLine[], exported?: { address: number; length: number }[]): TraceLine[] {
  const allowed = lines.filter((l) => l.verdict === "allowed");
  for (const l of allowed) {
    if (l.addr < l.rangeBase || l.addr + l.len > l.rangeBase + l.rangeLen) {
      throw new Error(`DMA access outside the imported range was allowed: ${l.raw}`);
    }
    if (exported) {
      const inside = exported.some((r) =>
        l.addr >= BigInt(r.address) && l.addr + l.len <= BigInt(r.address) + BigInt(r.length)
      );
      if (!inside) {
        throw new Error(
          `DMA access outside every range the peer exported: ${l.raw} (exports ${JSON.stringify(exported)})`,
        );
      }
    }
  }
  return allowed;
}

/** Runs tasks/dma-copy.ts (one side) as a child of this runtime. */
export function startDmaCopy(
  side: "host" | "dpu",
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): RunningChild {
  const sideEnv: Record<string, string> = side === "dpu"
    ? { DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }
    : { DOCA_SIM_SIDE: "host" };
  // A case that gives its own --side (a bad one, say) keeps it: a flag given twice is a usage error of its own.
  const sideArgs = args.includes("--side") ? [] : ["--side", side];
  return startChild(DMA_COPY, [...sideArgs, ...args], { ...env, ...sideEnv }, timeoutMs);
}

/**
 * Runs a helper script of tests/helpers/faults as a child of this runtime (Deno with -A: the helpers read
 * /proc/self/fd), killed after timeoutMs: tasks/common/run-pair.ts's startChild with every permission.
 */
export function startHelper(
  name: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): RunningChild {
  return startChild(join(repoRoot, "tests", "helpers", "faults", name), args, env, timeoutMs, ["-A"]);
}

/** JSON lines a helper printed on stdout. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

/** Deterministic PRNG (xorshift32) so failures reproduce from the seed printed in the test name. */
export function rng(seed: number): () => number {
  let x = (seed >>> 0) || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
