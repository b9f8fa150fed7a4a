/**
 * NVIDIA's storage reference application (DOCA 3.3 applications/storage, zero-copy flow) built unmodified against the
 * software device and run as three processes: the shared part of tests/sim-nvidia-storage.test.ts and
 * benchmarks/storage.ts. Harness pieces and why: tests/sim-nvidia-storage.test.ts's header.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { extractSnapshot } from "./nvidia-snapshot.ts";
import { testPort } from "./ports.ts";
import { repoRoot, runtimeCommand } from "./spawn-runtime.ts";

const root = repoRoot;
const libDir = join(root, "build", "sim", "lib");
const standIns = join(root, "tests", "nvidia-samples");

const PROGRAMS = ["target_rdma", "comch_to_rdma_zero_copy", "initiator_comch"];
const COMMON = [
  "binary_content", "buffer_utils", "control_channel", "control_message", "doca_utils", "file_utils", "io_message",
  "ip_address", "posix/os_utils", "posix/tcp_socket",
];

let work = "";
/** The folder the programs were built in (removed by removeBuild). */
export const buildFolder = () => work;
export function removeBuild(): void {
  if (work) rmSync(work, { recursive: true, force: true });
}
const bin = (name: string) => join(work, "bin", name);

function run(command: string, args: string[]): void {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 600_000 });
  assert.equal(r.status, 0, `${command} ${args.join(" ")}\n${r.stdout}\n${r.stderr}`);
}

/** Extracts applications/storage (git archive of the snapshot) and compiles the three zero-copy programs. */
export function buildPrograms(snapshot: string): void {
  work = mkdtempSync(join(tmpdir(), "doca-nvidia-storage-"));
  const src = join(work, "src");
  mkdirSync(src);
  mkdirSync(join(work, "bin"));
  mkdirSync(join(work, "obj"));
  extractSnapshot(snapshot, ["applications/storage"], src);
  const dir = join(src, "applications", "storage");
  // the shim only while the device has no doca_erasure_coding.h of its own
  const shim = existsSync(join(root, "sim", "include", "doca_erasure_coding.h")) ? [] : [`-I${join(standIns, "storage-shim")}`];
  // as NVIDIA's meson builds them (cpp_std=c++17, no liblz4 needed by these three); their warnings are theirs
  const flags = [
    "-std=c++17", "-O1", "-w", "-DDOCA_ALLOW_EXPERIMENTAL_API", "-DSTORAGE_APP_LZ4_SW_LIB_AVAILABLE=0",
    "-include", "cstring", "-include", "rdma/ib_user_verbs.h",
    `-I${join(root, "sim", "include")}`, `-I${standIns}`, ...shim, `-I${dir}`,
  ];
  const objects = COMMON.map((name) => {
    const o = join(work, "obj", `${name.replace("/", "_")}.o`);
    run("c++", [...flags, "-c", join(dir, "storage_common", `${name}.cpp`), "-o", o]);
    return o;
  });
  const argp = join(work, "obj", "argp_log.o");
  run("cc", ["-std=gnu11", "-O1", "-w", `-I${join(root, "sim", "include")}`, `-I${standIns}`, "-c", join(standIns, "argp_log.c"), "-o", argp]);
  for (const name of PROGRAMS) {
    const o = join(work, "obj", `${name}.o`);
    run("c++", [...flags, "-c", join(dir, `${name}.cpp`), "-o", o]);
    run("c++", [o, ...objects, argp, `-L${libDir}`, "-ldoca_rdma", "-ldoca_comch", "-ldoca_dma", "-ldoca_common", `-Wl,-rpath,${libDir}`, "-lpthread", "-o", bin(name)]);
  }
  run("cc", ["-shared", "-fPIC", "-O1", join(standIns, "thread_start_delay.c"), "-o", join(work, "thread_start_delay.so"), "-ldl"]);
}

export interface Proc {
  child: ChildProcess;
  log: string;
  code: number | null;
  exited: Promise<void>;
}

/** One of NVIDIA's programs, or (a name ending in .ts) a doca-ts script under the runtime running this file. */
function start(name: string, side: "host" | "dpu", args: string[], simDir: string): Proc {
  const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: simDir, DOCA_SIM_SIDE: side };
  delete env.DOCA_SIM_CONFIG;
  const cmd = name.endsWith(".ts") ? runtimeCommand(join(repoRoot, name), args) : { command: bin(name), args };
  if (!name.endsWith(".ts")) env.LD_PRELOAD = join(work, "thread_start_delay.so");
  const child = spawn(cmd.command, cmd.args, { env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  const p: Proc = { child, log: "", code: null, exited: Promise.resolve() };
  const take = (d: Buffer) => p.log += d.toString();
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  p.exited = new Promise((done) =>
    child.on("exit", (code, signal) => {
      p.code = code ?? (signal ? -1 : null);
      done();
    })
  );
  return p;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(p: Proc, pattern: RegExp, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pattern.test(p.log)) {
    assert.ok(p.code === null, `${what} exited ${p.code} before ${pattern}\n${p.log}`);
    assert.ok(Date.now() < deadline, `${what}: no ${pattern} within ${ms} ms\n${p.log}`);
    await sleep(50);
  }
}

/** The lines that matter of a program's log (its DBG/TRC lines are many thousands) */
export const brief = (log: string) => log.split("\n").filter((l) => !/^\[(DBG|TRC)\]/.test(l)).slice(-40).join("\n");

/**
 * One flow: the target first (it listens), then the DPU (connects to the target, serves Comch), then the host. NVIDIA's
 * command lines: target `-d <dev> --cpu N --listen-port P [--binary-content FILE] --block-count B --block-size S`, DPU
 * `-d <dev> -r <host representor> --cpu N --storage-server 127.0.0.1:P`, host `-d <dev> --cpu N --execution-strategy
 * X --run-limit-operation-count K [--storage-plain-content FILE]`. The target and the DPU stop when the host shuts the
 * storage down.
 */
export async function flow(strategy: string, target: string[], initiator: string[], relay: "nvidia" | "doca-ts" = "nvidia"): Promise<{ host: Proc; dpu: Proc; target: Proc }> {
  const dir = mkdtempSync(join(work, "run-"));
  const simDir = join(dir, "sim");
  mkdirSync(simDir, { mode: 0o700 });
  const cpus = availableParallelism();
  const hostCpu = "0", otherCpu = String(cpus - 1);
  const port = String(testPort());
  const procs: Proc[] = [];
  try {
    const t = start("target_rdma", "host", ["-d", "mlx5_0", "--cpu", otherCpu, "--listen-port", port, ...target], simDir);
    procs.push(t);
    await waitFor(t, /Listening on socket/, 30_000, "target_rdma");
    const dpuArgs = ["-d", "03:00.1", "-r", "b1:00.1", "--cpu", otherCpu, "--storage-server", `127.0.0.1:${port}`];
    const d = relay === "nvidia" ? start("comch_to_rdma_zero_copy", "dpu", dpuArgs, simDir) : start("tasks/storage-relay.ts", "dpu", dpuArgs, simDir);
    procs.push(d);
    await waitFor(d, /Connected to 127\.0\.0\.1|connected to the storage target/, 30_000, relay === "nvidia" ? "comch_to_rdma_zero_copy" : "storage-relay");
    const h = start("initiator_comch", "host", ["-d", "b1:00.1", "--cpu", hostCpu, "--execution-strategy", strategy, ...initiator], simDir);
    procs.push(h);
    const all = Promise.all(procs.map((p) => p.exited));
    const timedOut = await Promise.race([all.then(() => false), sleep(90_000).then(() => true)]);
    assert.ok(!timedOut, `the flow did not finish in 90 s\n--- target\n${brief(t.log)}\n--- dpu\n${brief(d.log)}\n--- host\n${brief(h.log)}`);
    return { host: h, dpu: d, target: t };
  } finally {
    for (const p of procs) if (p.code === null) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    // the DOCA_SIM_DIR sockets and the run folder go; the programs leave nothing else
    rmSync(dir, { recursive: true, force: true });
  }
}

