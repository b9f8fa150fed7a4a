/**
 * Row 5 of the benchmark: tasks/dma-copy.ts as a user runs it, DPU and host as separate processes on the software
 * device. A file copied host → DPU and DPU → host, each next to `dd bs=4M conv=fsync` copying the same file on the
 * same disk right before and after (dma-copy fsyncs its target too), `rounds` times (median of the per-round
 * ratios: the disk's rate swings between runs); peak RSS of each side from wait4() (highest of the rounds); then the
 * wall time of a 1 MiB copy from starting the DPU process to both exiting.
 *
 * Node runs the npm package's built JavaScript (what `npm install` gives a Node user: `npm pack`, unpacked under
 * the bench's work folder), not the sources through tsx, whose loader adds about 0.35 s of start-up and 30 MiB of
 * RSS per process; one extra row keeps tsx's 1 MiB wall time in view.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { DPU_LISTENING, repoRoot } from "../tasks/common/run-pair.ts";
import { npmPackInto } from "../scripts/npm-pack.ts";
import { median, round3, type Row } from "./rows.ts";
import { RUNTIME_LABEL, type RuntimeName, runtimeArgv } from "./runtimes.ts";

export interface EndToEndPlan {
  fileSize: number;
  /** Copies per runtime and direction (median ratio shown). */
  rounds: number;
  /** Runs of the 1 MiB copy per runtime (median shown). */
  wallRuns: number;
  runtimes: RuntimeName[];
  driver: string;
  log: (line: string) => void;
}

const DMA_COPY = join(repoRoot, "tasks", "dma-copy.ts");
const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";
const MiB = 2 ** 20;

interface Measured {
  status: number;
  seconds: number;
  maxrssKiB: number;
  stdout: string;
  stderr: string;
}

/** Runs argv under the driver's wait4() wrapper; resolves with its exit, time and peak RSS. */
function measured(driver: string, argv: string[], env: Record<string, string>, onStderr?: (text: string) => void) {
  const out = join(env.BENCH_WORK, `rusage-${process.hrtime.bigint()}.json`);
  const child = spawn(driver, ["rusage", out, ...argv], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    onStderr?.(stderr);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
  return new Promise<Measured>((resolve, reject) => {
    child.on("close", () => {
      clearTimeout(timer);
      try {
        resolve({ ...JSON.parse(readFileSync(out, "utf8")), stdout, stderr });
      } catch {
        reject(new Error(`${argv.join(" ")} did not finish:\n${stderr}`));
      }
    });
  });
}

/** How one runtime starts dma-copy: its argv for the task's arguments, and extra environment. */
interface Runner {
  label: string;
  argv(args: string[]): string[];
  env: Record<string, string>;
}

function sourceRunner(rt: RuntimeName, label = RUNTIME_LABEL[rt]): Runner {
  return { label, argv: (args) => runtimeArgv(rt, DMA_COPY, args, ["ffi", "env", "read", "write", "run", "sys=statfs"]), env: {} };
}

/**
 * `npm pack` (its prepack builds the JavaScript) unpacked into `work`: plain `node tasks/dma-copy.js`, as an
 * installed package runs. koffi resolves from the repository's node_modules (a parent folder); the software device
 * is the repository's build (DOCA_LIB_DIR), as the sources use.
 */
function packageRunner(work: string): Runner {
  const script = join(npmPackInto(".", repoRoot, mkdtempSync(join(work, "pkg-")), "package"), "tasks", "dma-copy.js");
  return { label: RUNTIME_LABEL.node, argv: (args) => ["node", script, ...args], env: { DOCA_LIB_DIR: join(repoRoot, "build", "sim", "lib") } };
}

/** One dma-copy between fresh DPU and host processes; the DPU starts first (it is the Comch server). */
async function copyPair(plan: EndToEndPlan, runner: Runner, work: string, hostFile: string, dpuFile: string) {
  const simDir = mkdtempSync(join(work, "sim-"));
  const env = { ...runner.env, DOCA_SIM_DIR: simDir, BENCH_WORK: work };
  const rt = runner.label;
  const args = (file: string, pci: string) => ["-f", file, "-p", pci, "--json-output", "--timeout", "60"];
  const argv = runner.argv;
  const start = performance.now();
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const dpu = measured(plan.driver, argv([...args(dpuFile, DPU_PCI), "-r", HOST_PCI]), { ...env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, (text) => {
    if (text.includes(DPU_LISTENING)) listening();
  });
  // The host starts once the DPU listens; a DPU that exits or stays silent ends the bench with its own words.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<"silent">((resolve) => (timer = setTimeout(() => resolve("silent"), 30_000)));
  const early = await Promise.race([ready.then(() => undefined), dpu, silent]);
  clearTimeout(timer);
  if (early === "silent") throw new Error(`dma-copy DPU side on ${rt} did not listen within 30 s`);
  if (early) throw new Error(`dma-copy DPU side on ${rt} exited before listening (${early.status}):\n${early.stderr}`);
  const host = await measured(plan.driver, argv(args(hostFile, HOST_PCI)), { ...env, DOCA_SIM_SIDE: "host" });
  const d = await dpu;
  const wall = (performance.now() - start) / 1000;
  rmSync(simDir, { recursive: true, force: true });
  if (host.status !== 0 || d.status !== 0) {
    throw new Error(`dma-copy on ${rt} failed (host ${host.status}, DPU ${d.status}):\n${host.stderr}\n${d.stderr}`);
  }
  const summary = JSON.parse(d.stdout.trim().split("\n").pop()!) as { bytesPerSecond: number; bytes: number };
  return { host, dpu: d, wall, summary };
}

function writeRandomFile(path: string, size: number): void {
  const fd = openSync(path, "w");
  const chunk = new Uint8Array(Math.min(size, 4 * MiB));
  for (let done = 0; done < size; done += chunk.length) {
    const part = chunk.subarray(0, Math.min(chunk.length, size - done));
    randomFillSync(part);
    writeSync(fd, part);
  }
  closeSync(fd);
}

function sameFile(a: string, b: string): boolean {
  return spawnSync("cmp", ["-s", a, b]).status === 0;
}

export async function runEndToEnd(plan: EndToEndPlan): Promise<Row[]> {
  const rows: Row[] = [];
  mkdirSync(join(repoRoot, "build", "bench"), { recursive: true });
  const work = mkdtempSync(join(repoRoot, "build", "bench", "e2e-"));
  const section = "5. end to end (dma-copy)";
  try {
    const runners = plan.runtimes.map((rt) => (rt === "node" ? packageRunner(work) : sourceRunner(rt)));
    const source = join(work, "source.bin");
    writeRandomFile(source, plan.fileSize);
    const ddRates: number[] = [];
    const dd = async () => {
      const target = join(work, "dd.out");
      const r = await measured(plan.driver, ["dd", `if=${source}`, `of=${target}`, "bs=4M", "conv=fsync", "status=none"], { BENCH_WORK: work });
      rmSync(target, { force: true });
      if (r.status !== 0) throw new Error(`dd failed: ${r.stderr}`);
      ddRates.push(plan.fileSize / r.seconds);
      return plan.fileSize / r.seconds;
    };
    const directions = [["host → DPU", true], ["DPU → host", false]] as const;
    type Cell = { rates: number[]; ratios: number[]; rssKiB: { host: number; DPU: number } };
    const cells = new Map<string, Cell>();
    for (let round = 0; round < plan.rounds; round++) {
      for (const runner of runners) {
        for (const [direction, toDpu] of directions) {
          plan.log(`end to end: ${runner.label} ${direction}, ${plan.fileSize / MiB} MiB, round ${round + 1}/${plan.rounds}`);
          const ddBefore = await dd();
          const hostFile = toDpu ? source : join(work, "host-target.bin");
          const dpuFile = toDpu ? join(work, "dpu-target.bin") : source;
          const r = await copyPair(plan, runner, work, hostFile, dpuFile);
          const target = toDpu ? dpuFile : hostFile;
          if (!sameFile(source, target)) throw new Error(`dma-copy on ${runner.label} (${direction}) produced a different file`);
          rmSync(target);
          const ddAfter = await dd();
          const key = `${runner.label}\0${direction}`;
          const cell = cells.get(key) ?? { rates: [], ratios: [], rssKiB: { host: 0, DPU: 0 } };
          cells.set(key, cell);
          cell.rates.push(r.summary.bytesPerSecond);
          cell.ratios.push(r.summary.bytesPerSecond / ((ddBefore + ddAfter) / 2));
          cell.rssKiB.host = Math.max(cell.rssKiB.host, r.host.maxrssKiB);
          cell.rssKiB.DPU = Math.max(cell.rssKiB.DPU, r.dpu.maxrssKiB);
        }
      }
    }
    for (const runner of runners) {
      for (const [direction] of directions) {
        const cell = cells.get(`${runner.label}\0${direction}`)!;
        const ratio = median(cell.ratios);
        rows.push({
          section, name: `dma-copy ${direction}`, runtime: runner.label, size: plan.fileSize, value: round3(median(cell.rates) / MiB), unit: "MiB/s",
          ratio: round3(ratio), against: "dd bs=4M", target: "≥ 0.5×", met: ratio >= 0.5,
        });
        for (const side of ["host", "DPU"] as const) {
          const mib = cell.rssKiB[side] / 1024;
          rows.push({ section, name: `dma-copy ${direction}, ${side} peak RSS`, runtime: runner.label, size: plan.fileSize, value: round3(mib), unit: "MiB", ratio: null, against: null, target: "≤ 128 MiB", met: mib <= 128 });
        }
      }
    }
    if (ddRates.length) {
      rows.push({ section, name: "dd bs=4M conv=fsync, same file and disk (median)", runtime: "", size: plan.fileSize, value: round3(median(ddRates) / MiB), unit: "MiB/s", ratio: null, against: null });
    }
    const small = join(work, "small.bin");
    writeRandomFile(small, MiB);
    const wallRunners = plan.runtimes.includes("node") ? [...runners, sourceRunner("node", "Node (tsx)")] : runners;
    for (const runner of wallRunners) {
      plan.log(`end to end: ${runner.label} 1 MiB wall time ×${plan.wallRuns}`);
      const walls: number[] = [];
      for (let i = 0; i < plan.wallRuns; i++) {
        const target = join(work, "small-target.bin");
        const r = await copyPair(plan, runner, work, small, target);
        if (!sameFile(small, target)) throw new Error(`1 MiB dma-copy on ${runner.label} produced a different file`);
        rmSync(target);
        walls.push(r.wall);
      }
      const wall = median(walls);
      const targeted = runner.label !== "Node (tsx)";
      rows.push({
        section, name: "dma-copy 1 MiB host → DPU, wall time (2 cold processes)", runtime: runner.label, size: MiB, value: round3(wall), unit: "s", ratio: null, against: null,
        ...(targeted ? { target: "< 0.5 s", met: wall < 0.5 } : {}),
      });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
