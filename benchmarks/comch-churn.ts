#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * `deno task bench:churn`: does a DPU's memory stay level while hosts come and go? A dma-copy DPU side (on the runtime
 * asked) serves one host (benchmarks/comch-churn.c `hold`: connected and silent, so the DPU waits for its direction
 * message) while a second C client connects and disconnects again and again (`cycle`); the DPU turns each of those
 * away as busy. Prints the DPU's resident set (VmRSS) before and after every STEP cycles, and the growth. Issue 29
 * item 7's target: under +32 MiB over 90,000 cycles.
 *
 * On Deno and Node the DPU runs with the V8 flags of `deno task dma-copy` (deno.json), as a user's does (Node: as
 * `npx doca-ts dma-copy` passes them); --no-task-flags runs it without them (the figure before they were added). Bun
 * (JavaScriptCore) takes no V8 flags.
 *
 *   deno task bench:churn [--cycles N] [--step N] [--runtime deno|bun|node] [--no-task-flags] [--json FILE]
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { benchTempDir, runBenchCommand } from "./command.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { buildCDriver, driverPath } from "./c-driver.ts";
import { type LineProcess, reap, startLineProcess } from "./line-process.ts";
import { RUNTIME_LABEL, type RuntimeName, RUNTIMES, runtimeArgv } from "./runtimes.ts";
import { parseFlags, positiveInt, UsageError } from "../tasks/common/cli.ts";

const DRIVER = driverPath("comch-churn");
const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";
const SERVER = "dma copy server";
/** The slowest a cycle may be on a loaded 2-core machine (a cycle takes about 0.3 ms on a quiet one). */
const MS_PER_CYCLE_BOUND = 20;

const HELP = `Usage: deno task bench:churn [--cycles N] [--step N] [--runtime deno|bun|node] [--no-task-flags] [--json FILE]

A dma-copy DPU side serving one host (connected, silent) while another host connects and disconnects N times
(default 90000), each one turned away as busy; prints the DPU's VmRSS every STEP cycles (default 15000) and the
growth since the start. Two C clients (benchmarks/comch-churn.c) on the software device, the DPU on --runtime
(default deno), on Deno and Node with the V8 flags \`deno task dma-copy\` uses (deno.json; Node: as \`npx doca-ts
dma-copy\` passes them; --no-task-flags: without them).
Every wait has a deadline; every process is killed and reaped at the end.`;

/** The --v8-flags of deno.json's dma-copy task (what `deno task dma-copy` runs with). */
export function taskV8Flags(): string[] {
  const tasks = JSON.parse(readFileSync(join(repoRoot, "deno.json"), "utf8")).tasks as Record<string, string | { command: string }>;
  const task = tasks["dma-copy"];
  const command = typeof task === "string" ? task : task?.command ?? "";
  return command.split(/\s+/).filter((w) => w.startsWith("--v8-flags="));
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS for process ${pid}`);
  return kb / 1024;
}

export interface ChurnPoint {
  cycles: number;
  rssMiB: number;
  growthMiB: number;
}

/**
 * What the DPU's runtime is started with: dma-copy's V8 flags as `deno task dma-copy` passes them on Deno, and as
 * `npx doca-ts dma-copy` does on Node (bin/task-flags.mjs: the same flags in Node's form); Bun takes no V8 flags.
 */
export function dpuRuntimeFlags(runtime: RuntimeName, taskFlags = true): string[] {
  if (!taskFlags || runtime === "bun") return [];
  const v8 = taskV8Flags();
  return runtime === "deno" ? v8 : v8.flatMap((f) => f.slice("--v8-flags=".length).split(","));
}

export async function churn(runtime: RuntimeName, cycles: number, step: number, taskFlags = true): Promise<ChurnPoint[]> {
  buildCDriver("comch-churn", ["doca_comch", "doca_common"]);
  const dir = benchTempDir(tmpdir(), "doca-ts-bench-churn-");
  const file = join(dir, "file");
  writeFileSync(file, "the file the DPU would send\n");
  const env = { DOCA_SIM_DIR: dir };
  let dpu: LineProcess | undefined, hold: LineProcess | undefined, cycler: LineProcess | undefined;
  try {
    // The DPU side as a user starts it, with a timeout long enough for the whole run (the held host never speaks)
    const argv = runtimeArgv(runtime, join(repoRoot, "tasks", "dma-copy.ts"),
      ["--side", "dpu", "-f", file, "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "86400", "-l", "30"], ["all"]);
    argv.splice(runtime === "deno" ? 2 : 1, 0, ...dpuRuntimeFlags(runtime, taskFlags));
    dpu = startLineProcess(argv, { ...env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" });
    await dpu.stderr("waiting for the host", 60_000);
    hold = startLineProcess([DRIVER, "hold", SERVER], { ...env, DOCA_SIM_SIDE: "host" });
    await hold.line("connected", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the DPU settles into serving the held host
    const before = rssMiB(dpu.child.pid!);
    const points: ChurnPoint[] = [{ cycles: 0, rssMiB: before, growthMiB: 0 }];
    console.error(`bench:churn: ${RUNTIME_LABEL[runtime]} DPU at ${before.toFixed(1)} MiB, ${cycles} cycles`);
    cycler = startLineProcess([DRIVER, "cycle", SERVER, String(cycles), String(step)], { ...env, DOCA_SIM_SIDE: "host" });
    for (let done = step; done <= cycles; done += step) {
      await cycler.line(`cycles ${done} `, step * MS_PER_CYCLE_BOUND + 30_000);
      if (dpu.child.exitCode !== null) throw new Error(`the DPU side exited: ${dpu.err.trim()}`);
      const rss = rssMiB(dpu.child.pid!);
      points.push({ cycles: done, rssMiB: rss, growthMiB: rss - before });
      console.error(`bench:churn: ${done} cycles: ${rss.toFixed(1)} MiB (${rss - before >= 0 ? "+" : ""}${(rss - before).toFixed(1)})`);
    }
    return points;
  } finally {
    hold?.child.stdin?.end(); // the held host disconnects when its stdin closes
    await Promise.all([reap(cycler), reap(hold), reap(dpu)]);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function main(argv: string[]): Promise<ChurnPoint[]> {
  const { values } = parseFlags(argv, {
    cycles: { type: "string" },
    step: { type: "string" },
    runtime: { type: "string" },
    "no-task-flags": { type: "boolean" },
    json: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    console.log(HELP);
    return [];
  }
  const cycles = values.cycles ? positiveInt(values.cycles, "--cycles", 10_000_000) : 90_000;
  const step = values.step ? positiveInt(values.step, "--step", cycles) : Math.min(15_000, cycles);
  if (cycles % step !== 0) throw new UsageError(`--step: ${step} does not divide --cycles ${cycles}`);
  const runtime = (values.runtime ?? "deno") as RuntimeName;
  if (!RUNTIMES.includes(runtime)) throw new UsageError(`--runtime: expected deno, bun or node, got ${values.runtime}`);
  const taskFlags = !values["no-task-flags"];
  const points = await churn(runtime, cycles, step, taskFlags);
  const signed = (mib: number) => `${mib >= 0 ? "+" : ""}${mib.toFixed(1)}`;
  const last = points[points.length - 1];
  const flags = runtime === "bun" ? "" : ` (${dpuRuntimeFlags(runtime, taskFlags).join(" ") || "no V8 flags"})`;
  console.log(`Comch churn, ${RUNTIME_LABEL[runtime]} dma-copy DPU side${flags}, VmRSS per ${step} cycles of a host it turns away:`);
  for (const p of points) console.log(`  ${String(p.cycles).padStart(8)} cycles  ${p.rssMiB.toFixed(1).padStart(7)} MiB  ${signed(p.growthMiB)}`);
  console.log(`growth over ${last.cycles} cycles: ${signed(last.growthMiB)} MiB (target < +32 MiB: ${last.growthMiB < 32 ? "met" : "missed"})`);
  if (values.json) writeFileSync(values.json, JSON.stringify(points, null, 2));
  return points;
}

// A stop removes the run's folder (benchTempDir) and says so; a bad flag is its line and the help, exit 2
if (import.meta.main ?? process.argv[1]?.endsWith("comch-churn.ts")) await runBenchCommand("bench:churn", () => main(process.argv.slice(2)), HELP);
