/**
 * Row 5 of the benchmark: the file copies as a user runs them, both sides separate processes on the software
 * device. One file copied by tasks/dma-copy.ts host → DPU and DPU → host and by tasks/rdma-copy.ts in write and read
 * mode, next to the references of copy-references.ts copying the same file on the same disk (dd bs=4M conv=fsync,
 * the C copy floor with and without SHA-256, the C TCP copy) right before and after each runtime's copies,
 * `rounds` times (each row: the median of the per-round ratios; the disk's rate swings between runs); peak RSS of
 * each side from wait4() (highest of the rounds); then the wall time of a 1 MiB dma-copy from starting the DPU
 * process to both exiting.
 *
 * Node runs the npm package's built JavaScript (what `npm install` gives a Node user: `npm pack`, unpacked under
 * the bench's work folder), not the sources through tsx, whose loader adds about 0.35 s of start-up and 30 MiB of
 * RSS per process; one extra row keeps tsx's 1 MiB wall time in view.
 */
import { spawnSync } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { benchTempDir } from "./command.ts";
import { join } from "node:path";
import { DPU_LISTENING, repoRoot } from "../tasks/common/run-pair.ts";
import { npmPackInto } from "../tools/npm-pack.ts";
import { atLeast, atMost, below, median, round3, type Row } from "./rows.ts";
import { RUNTIME_LABEL, type RuntimeName, runtimeArgv } from "./runtimes.ts";
import { measured } from "./measured.ts";
import { copyReferences, REFERENCE_LABEL, type ReferenceName, type Role } from "./copy-references.ts";
import { testPort } from "../tools/ports.ts";

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

const DMA_COPY = "dma-copy", RDMA_COPY = "rdma-copy";
const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";
const MiB = 2 ** 20;
/** Issue 29's target for every file copy against dd, and for rdma-copy against the C TCP copy. */
const TARGET = 0.8;

/** How one runtime starts a task: its argv for the task (dma-copy or rdma-copy) and its arguments, extra environment. */
interface Runner {
  label: string;
  argv(task: string, args: string[]): string[];
  env: Record<string, string>;
}

function sourceRunner(rt: RuntimeName, label = RUNTIME_LABEL[rt]): Runner {
  const script = (task: string) => join(repoRoot, "tasks", `${task}.ts`);
  const allow = ["ffi", "env", "read", "write", "run", "net", "sys=statfs"];
  return { label, argv: (task, args) => runtimeArgv(rt, script(task), args, allow), env: {} };
}

/**
 * `npm pack` (its prepack builds the JavaScript) unpacked into `work`: plain `node tasks/TASK.js`, as an installed
 * package runs. koffi resolves from the repository's node_modules (a parent folder); the software device is the
 * repository's build (DOCA_LIB_DIR), as the sources use.
 */
function packageRunner(work: string): Runner {
  const tasks = join(npmPackInto(".", repoRoot, mkdtempSync(join(work, "pkg-")), "package"), "tasks");
  return { label: RUNTIME_LABEL.node, argv: (task, args) => ["node", join(tasks, `${task}.js`), ...args], env: { DOCA_LIB_DIR: join(repoRoot, "build", "sim", "lib") } };
}

/**
 * Starts `first`, waits until its stderr shows `listening` (30 s), then runs `second`; both measured. A first
 * process that exits or stays silent ends the bench with its own words.
 */
async function listenThenConnect(
  plan: EndToEndPlan,
  what: string,
  first: { argv: string[]; env: Record<string, string>; listening: string },
  second: { argv: string[]; env: Record<string, string> },
) {
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const a = measured(plan.driver, first.argv, first.env, (text) => {
    if (text.includes(first.listening)) listening();
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<"silent">((resolve) => (timer = setTimeout(() => resolve("silent"), 30_000)));
  const early = await Promise.race([ready.then(() => undefined), a, silent]);
  clearTimeout(timer);
  if (early === "silent") throw new Error(`${what}: the listening side did not listen within 30 s`);
  if (early) throw new Error(`${what}: the listening side exited before listening (${early.status}):\n${early.stderr}`);
  const b = await measured(plan.driver, second.argv, second.env);
  return { first: await a, second: b };
}

/** One dma-copy between fresh DPU and host processes; the DPU starts first (it is the Comch server). */
async function copyPair(plan: EndToEndPlan, runner: Runner, work: string, hostFile: string, dpuFile: string) {
  const simDir = mkdtempSync(join(work, "sim-"));
  const env = { ...runner.env, DOCA_SIM_DIR: simDir, BENCH_WORK: work };
  const rt = runner.label;
  const args = (file: string, pci: string) => ["-f", file, "-p", pci, "--json-output", "--timeout", "60"];
  const start = performance.now();
  const { first: dpu, second: host } = await listenThenConnect(
    plan,
    `dma-copy on ${rt}`,
    { argv: runner.argv(DMA_COPY, [...args(dpuFile, DPU_PCI), "-r", HOST_PCI]), env: { ...env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, listening: DPU_LISTENING },
    { argv: runner.argv(DMA_COPY, args(hostFile, HOST_PCI)), env: { ...env, DOCA_SIM_SIDE: "host" } },
  );
  const wall = (performance.now() - start) / 1000;
  rmSync(simDir, { recursive: true, force: true });
  if (host.status !== 0 || dpu.status !== 0) {
    throw new Error(`dma-copy on ${rt} failed (host ${host.status}, DPU ${dpu.status}):\n${host.stderr}\n${dpu.stderr}`);
  }
  const summary = JSON.parse(dpu.stdout.trim().split("\n").pop()!) as { bytesPerSecond: number; bytes: number };
  return { host, dpu, wall, rate: summary.bytesPerSecond, cpu: { host: host.cpuSeconds, DPU: dpu.cpuSeconds }, rssKiB: { host: host.maxrssKiB, DPU: dpu.maxrssKiB } };
}

/**
 * One rdma-copy over loopback between fresh processes: the receiver listens (RDMA CM), the sender connects with
 * `mode`. The rate is the receiver's (offer received to file committed).
 */
async function rdmaPair(plan: EndToEndPlan, runner: Runner, work: string, source: string, target: string, mode: "write" | "read") {
  // A port another program took makes the receiver fail with DOCA_ERROR_IN_USE: another random port, twice more.
  for (let attempt = 1;; attempt++) {
    try {
      return await rdmaPairOnce(plan, runner, work, source, target, mode);
    } catch (e) {
      if (attempt === 3 || !String((e as Error).message).includes("DOCA_ERROR_IN_USE")) throw e;
      plan.log(`end to end: rdma-copy's port was taken; again on another port`);
    }
  }
}

async function rdmaPairOnce(plan: EndToEndPlan, runner: Runner, work: string, source: string, target: string, mode: "write" | "read") {
  const simDir = mkdtempSync(join(work, "sim-"));
  const env = { ...runner.env, DOCA_SIM_DIR: simDir, BENCH_WORK: work };
  const at = `127.0.0.1:${testPort()}`; // rdma-copy's listener: below the ephemeral range, where only another listener collides
  const common = ["--json", "--timeout", "60"];
  const what = `rdma-copy ${mode} on ${runner.label}`;
  const { first: receiver, second: sender } = await listenThenConnect(
    plan,
    what,
    { argv: runner.argv(RDMA_COPY, ["--receive", target, "--listen", at, ...common]), env, listening: "listening" },
    { argv: runner.argv(RDMA_COPY, ["--send", source, "--connect", at, "--mode", mode, ...common]), env },
  );
  rmSync(simDir, { recursive: true, force: true });
  if (receiver.status !== 0 || sender.status !== 0) {
    throw new Error(`${what} failed (sender ${sender.status}, receiver ${receiver.status}):\n${sender.stderr}\n${receiver.stderr}`);
  }
  const summary = JSON.parse(receiver.stdout.trim().split("\n").pop()!) as { bytes: number; seconds: number };
  return {
    rate: summary.bytes / summary.seconds,
    cpu: { sender: sender.cpuSeconds, receiver: receiver.cpuSeconds },
    rssKiB: { sender: sender.maxrssKiB, receiver: receiver.maxrssKiB },
  };
}

/**
 * The source file, on disk before any copy is timed: left dirty, the kernel writes its pages back (30 s later or
 * past a threshold) while copies run, and a timed copy would share the disk with 256 MiB that is none of its own.
 */
function writeRandomFile(path: string, size: number): void {
  const fd = openSync(path, "w");
  const chunk = new Uint8Array(Math.min(size, 4 * MiB));
  for (let done = 0; done < size; done += chunk.length) {
    const part = chunk.subarray(0, Math.min(chunk.length, size - done));
    randomFillSync(part);
    writeSync(fd, part);
  }
  fsyncSync(fd);
  closeSync(fd);
}

function sameFile(a: string, b: string): boolean {
  return spawnSync("cmp", ["-s", a, b]).status === 0;
}

/** One copy a task makes: its row name, which references its ratios are against, and how it runs. */
interface CopyKind {
  name: string;
  /** References with a ratio row, and whether the issue sets the 0.8× target against it. */
  against: [ReferenceName, boolean][];
  /** Each side's role: its CPU per GiB is compared with the C copy floor's process of the same role. */
  roles: Record<string, Role>;
  /** Rate, CPU seconds and peak RSS by side. */
  run(runner: Runner, source: string, target: string): Promise<{ rate: number; cpu: Record<string, number>; rssKiB: Record<string, number> }>;
}

export async function runEndToEnd(plan: EndToEndPlan): Promise<Row[]> {
  const rows: Row[] = [];
  mkdirSync(join(repoRoot, "build", "bench"), { recursive: true });
  const work = benchTempDir(join(repoRoot, "build", "bench"), "e2e-");
  const section = "5. end to end (file copies)";
  try {
    const runners = plan.runtimes.map((rt) => (rt === "node" ? packageRunner(work) : sourceRunner(rt)));
    const refs = copyReferences(plan.driver, work, plan.log);
    const source = join(work, "source.bin");
    const gib = plan.fileSize / 2 ** 30;
    writeRandomFile(source, plan.fileSize);

    const dma = (direction: string, toDpu: boolean): CopyKind => ({
      name: `dma-copy ${direction}`,
      against: [["dd", true], ["floor", false]],
      roles: toDpu ? { host: "sender", DPU: "receiver" } : { DPU: "sender", host: "receiver" },
      run: (runner, src, target) => toDpu ? copyPair(plan, runner, work, src, target) : copyPair(plan, runner, work, target, src),
    });
    const rdma = (mode: "write" | "read"): CopyKind => ({
      name: `rdma-copy ${mode} mode`,
      against: [["dd", true], ["tcp", true]],
      roles: { sender: "sender", receiver: "receiver" },
      run: (runner, src, target) => rdmaPair(plan, runner, work, src, target, mode),
    });
    const kinds = [dma("host → DPU", true), dma("DPU → host", false)];
    if (existsSync(join(repoRoot, "build", "sim", "lib", "libdoca_rdma.so"))) kinds.push(rdma("write"), rdma("read"));
    else plan.log("end to end: rdma-copy rows skipped (the software device was built without libdoca_rdma)");

    // References right before and after each runtime's copies; a copy's ratio is against their mean.
    const push = <K>(map: Map<K, number[]>, key: K, value: number) => map.set(key, [...(map.get(key) ?? []), value]);
    const refRates = new Map<ReferenceName, number[]>();
    const refRatios = new Map<ReferenceName, number[]>();
    /** CPU seconds per GiB by reference and role ("floor\0receiver"). */
    const refCpu = new Map<string, number[]>();
    const measureRefs = async () => {
      const r = await refs.measure(source, plan.fileSize);
      const rates: Partial<Record<ReferenceName, number>> = {};
      for (const name of refs.names) {
        rates[name] = r[name]!.rate;
        push(refRates, name, r[name]!.rate);
        for (const [role, seconds] of Object.entries(r[name]!.cpu)) push(refCpu, `${name}\0${role}`, seconds / gib);
        if (name !== "dd") push(refRatios, name, r[name]!.rate / r.dd!.rate);
      }
      return rates;
    };
    type Cell = { rates: number[]; ratios: Map<ReferenceName, number[]>; cpuPerGiB: Map<string, number[]>; rssKiB: Record<string, number> };
    const cells = new Map<string, Cell>();
    for (let round = 0; round < plan.rounds; round++) {
      plan.log(`end to end: references (${refs.names.map((n) => REFERENCE_LABEL[n]).join(", ")}), ${plan.fileSize / MiB} MiB, round ${round + 1}/${plan.rounds}`);
      let before = await measureRefs();
      for (const runner of runners) {
        const measuredHere: [CopyKind, Awaited<ReturnType<CopyKind["run"]>>][] = [];
        for (const kind of kinds) {
          plan.log(`end to end: ${runner.label} ${kind.name}, ${plan.fileSize / MiB} MiB, round ${round + 1}/${plan.rounds}`);
          const target = join(work, "copy-target.bin");
          const r = await kind.run(runner, source, target);
          if (!sameFile(source, target)) throw new Error(`${kind.name} on ${runner.label} produced a different file`);
          rmSync(target);
          measuredHere.push([kind, r]);
        }
        const after = await measureRefs();
        for (const [kind, { rate, cpu, rssKiB }] of measuredHere) {
          const key = `${runner.label}\0${kind.name}`;
          const cell: Cell = cells.get(key) ?? { rates: [], ratios: new Map(), cpuPerGiB: new Map(), rssKiB: {} };
          cells.set(key, cell);
          cell.rates.push(rate);
          for (const [side, seconds] of Object.entries(cpu)) push(cell.cpuPerGiB, side, seconds / gib);
          for (const [ref] of kind.against) {
            if (before[ref] === undefined || after[ref] === undefined) continue;
            push(cell.ratios, ref, rate / ((before[ref]! + after[ref]!) / 2));
          }
          for (const [side, kib] of Object.entries(rssKiB)) cell.rssKiB[side] = Math.max(cell.rssKiB[side] ?? 0, kib);
        }
        before = after;
      }
    }
    for (const name of refs.names) {
      const ratios = refRatios.get(name);
      rows.push({
        section, name: name === "dd" ? "dd bs=4M conv=fsync, same file and disk (median)" : referenceRowName(name),
        runtime: name === "dd" ? "" : "C", size: plan.fileSize, value: round3(median(refRates.get(name)!) / MiB), unit: "MiB/s",
        ratio: ratios ? round3(median(ratios)) : null, against: ratios ? REFERENCE_LABEL.dd : null,
      });
    }
    // CPU per GiB (user + system) of each process: one process busy 1 s per GiB bounds its copy at 1 GiB/s, and
    // two processes on 2 shared cores together at 2 s per GiB do too.
    for (const [key, seconds] of refCpu) {
      const [name, role] = key.split("\0") as [ReferenceName, Role | "dd"];
      rows.push({
        section, name: `${REFERENCE_LABEL[name]}, CPU per GiB${role === "dd" ? "" : `, ${role}`}`, runtime: name === "dd" ? "" : "C", size: plan.fileSize,
        value: round3(median(seconds)), unit: "s", ratio: null, against: null,
      });
    }
    for (const runner of runners) {
      for (const kind of kinds) {
        const cell = cells.get(`${runner.label}\0${kind.name}`)!;
        const value = round3(median(cell.rates) / MiB);
        for (const [ref, targeted] of kind.against) {
          const ratios = cell.ratios.get(ref);
          if (!ratios) continue;
          const ratio = median(ratios);
          rows.push({
            section, name: kind.name, runtime: runner.label, size: plan.fileSize, value, unit: "MiB/s", ratio: round3(ratio), against: REFERENCE_LABEL[ref],
            ...(targeted ? { target: `≥ ${TARGET}×`, met: atLeast(ratio, TARGET) } : {}),
          });
        }
        for (const [side, seconds] of cell.cpuPerGiB) {
          const role = kind.roles[side], cpu = median(seconds), reference = refCpu.get(`floor\0${role}`);
          rows.push({
            section, name: `${kind.name}, CPU per GiB, ${side}${side === role ? "" : ` (${role})`}, start-up included`, runtime: runner.label, size: plan.fileSize, value: round3(cpu), unit: "s",
            ratio: reference ? round3(cpu / median(reference)) : null, against: reference ? `C copy floor's ${role}` : null,
          });
        }
        for (const [side, kib] of Object.entries(cell.rssKiB)) {
          const mib = kib / 1024;
          rows.push({ section, name: `${kind.name}, ${side} peak RSS`, runtime: runner.label, size: plan.fileSize, value: round3(mib), unit: "MiB", ratio: null, against: null, target: "≤ 128 MiB", met: atMost(mib, 128) });
        }
      }
    }
    const small = join(work, "small.bin");
    writeRandomFile(small, MiB);
    const wallRunners = plan.runtimes.includes("node") ? [...runners, sourceRunner("node", "Node (tsx)")] : runners;
    for (const runner of wallRunners) {
      plan.log(`end to end: ${runner.label} 1 MiB wall time ×${plan.wallRuns}`);
      const walls: number[] = [], cpus: number[] = [];
      for (let i = 0; i < plan.wallRuns; i++) {
        const target = join(work, "small-target.bin");
        const r = await copyPair(plan, runner, work, small, target);
        if (!sameFile(small, target)) throw new Error(`1 MiB dma-copy on ${runner.label} produced a different file`);
        rmSync(target);
        walls.push(r.wall);
        cpus.push(r.cpu.host + r.cpu.DPU);
      }
      const wall = median(walls);
      const limit = coldCopyLimit(runner.label);
      rows.push({
        section, name: "dma-copy 1 MiB host → DPU, wall time (2 cold processes)", runtime: runner.label, size: MiB, value: round3(wall), unit: "s", ratio: null, against: null,
        ...(limit ? { target: `< ${limit} s`, met: below(wall, limit) } : {}),
      });
      // Mostly start-up: what the CPU per GiB rows above include once per copy.
      rows.push({ section, name: "dma-copy 1 MiB host → DPU, CPU (both sides)", runtime: runner.label, size: MiB, value: round3(median(cpus)), unit: "s", ratio: null, against: null });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/**
 * Issue 29's limit on a cold 1 MiB copy: 0.3 s on Deno and Bun (they run the TypeScript as it is), 0.5 s on Node
 * running the built JavaScript (the package). Node through tsx compiles the sources first: shown, not targeted.
 */
function coldCopyLimit(label: string): number | undefined {
  if (label === RUNTIME_LABEL.deno || label === RUNTIME_LABEL.bun) return 0.3;
  if (label === RUNTIME_LABEL.node) return 0.5;
  return undefined;
}

/** Each C reference's row: what it does, in a few words (benchmarks/README.md says the rest). */
function referenceRowName(name: Exclude<ReferenceName, "dd">): string {
  switch (name) {
    case "floor":
      return "C copy floor, SHA-256 on both sides (copy-floor.c)";
    case "floorNoSha":
      return "C copy floor without SHA-256 (copy-floor.c)";
    case "tcp":
      return "C TCP copy, sendfile → read + write, fsync (tcp-copy.c)";
  }
}
