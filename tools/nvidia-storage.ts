/**
 * NVIDIA's storage reference application (DOCA 3.3 applications/storage, zero-copy flow) built unmodified against the
 * software device and run as three processes: the shared part of tests/sim-nvidia-storage.test.ts and
 * benchmarks/storage.ts. Harness pieces and why: tests/sim-nvidia-storage.test.ts's header.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { extractSnapshot } from "./nvidia-snapshot.ts";
import { testPort } from "./ports.ts";
import { runtimeCommand } from "../tasks/common/run-pair.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const root = repoRoot;
const libDir = join(root, "build", "sim", "lib");
const standIns = join(root, "tests", "nvidia-samples");

const PROGRAMS = ["target_rdma", "comch_to_rdma_zero_copy", "initiator_comch"];
/** The GGA-offload flow's two programs: built only where liblz4's development headers are (as NVIDIA's meson does) */
const GGA_PROGRAMS = ["comch_to_rdma_gga_offload", "gga_offload_sbc_generator"];
const COMMON = [
  "binary_content", "buffer_utils", "control_channel", "control_message", "doca_utils", "file_utils", "io_message",
  "ip_address", "posix/os_utils", "posix/tcp_socket",
];

/** Why the GGA-offload flow cannot be built here, or undefined when liblz4's headers and library are present. */
export function lz4Missing(): string | undefined {
  const probe = spawnSync("cc", ["-x", "c", "-", "-llz4", "-o", "/dev/null"], {
    input: "#include <lz4frame.h>\nint main(void) { return LZ4F_getVersion() == 0; }\n",
    encoding: "utf8",
    timeout: 60_000,
  });
  return probe.status === 0
    ? undefined
    : "liblz4's development headers are missing (NVIDIA's gga_offload_sbc_generator needs <lz4frame.h>: apt-get install liblz4-dev)";
}
let ggaBuilt = false;
/** True when buildPrograms also built the GGA-offload programs. */
export const ggaAvailable = () => ggaBuilt;

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
  // As NVIDIA's meson builds them (cpp_std=c++17): with liblz4 present every program gets
  // STORAGE_APP_LZ4_SW_LIB_AVAILABLE=1 and lz4_sw_context, and the GGA-offload pair is built; their warnings are theirs
  ggaBuilt = lz4Missing() === undefined;
  const flags = [
    "-std=c++17", "-O1", "-w", "-DDOCA_ALLOW_EXPERIMENTAL_API", `-DSTORAGE_APP_LZ4_SW_LIB_AVAILABLE=${ggaBuilt ? 1 : 0}`,
    "-include", "cstring", "-include", "rdma/ib_user_verbs.h",
    `-I${join(root, "sim", "include")}`, `-I${standIns}`, `-I${dir}`,
  ];
  const objects = [...COMMON, ...(ggaBuilt ? ["lz4_sw_context"] : [])].map((name) => {
    const o = join(work, "obj", `${name.replace("/", "_")}.o`);
    run("c++", [...flags, "-c", join(dir, "storage_common", `${name}.cpp`), "-o", o]);
    return o;
  });
  const argp = join(work, "obj", "argp_log.o");
  run("cc", ["-std=gnu11", "-O1", "-w", `-I${join(root, "sim", "include")}`, `-I${standIns}`, "-c", join(standIns, "argp_log.c"), "-o", argp]);
  const libs = ggaBuilt ? ["-ldoca_erasure_coding", "-ldoca_compress", "-llz4"] : [];
  for (const name of [...PROGRAMS, ...(ggaBuilt ? GGA_PROGRAMS : [])]) {
    const o = join(work, "obj", `${name}.o`);
    run("c++", [...flags, "-c", join(dir, `${name}.cpp`), "-o", o]);
    run("c++", [o, ...objects, argp, `-L${libDir}`, "-ldoca_rdma", "-ldoca_comch", "-ldoca_dma", "-ldoca_common", ...libs, `-Wl,-rpath,${libDir}`, "-lpthread", "-o", bin(name)]);
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
  const cmd = name.endsWith(".ts") ? runtimeCommand(join(repoRoot, name), args, ["-A"]) : { command: bin(name), args };
  if (!name.endsWith(".ts")) env.LD_PRELOAD = join(work, "thread_start_delay.so");
  const child = spawn(cmd.command, cmd.args, { env, cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  const p: Proc = { child, log: "", code: null, exited: Promise.resolve() };
  const take = (d: Buffer) => p.log += d.toString();
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  // "close", not "exit": it comes after the output streams are drained (the initiator's stats are its last lines)
  p.exited = new Promise((done) =>
    child.on("close", (code, signal) => {
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


/** The three storage targets' content files of the GGA-offload flow, as NVIDIA's generator writes them. */
export interface GgaContent {
  data1: string;
  data2: string;
  parity: string;
}

/**
 * NVIDIA's gga_offload_sbc_generator over `plain` (padded to whole blocks): LZ4-compresses each block, splits it in
 * two halves (data_1, data_2) and erasure-codes a parity half (data_p) with DOCA's EC on the device. Command line:
 * `-d <dev> --original-input-data FILE --block-size S --data-1 F1 --data-2 F2 --data-p FP [--matrix-type T]`.
 */
export function generateGgaContent(plain: string, outDir: string, blockSize: number, matrix = "vandermonde"): GgaContent {
  const content = { data1: join(outDir, "data_1.sbc"), data2: join(outDir, "data_2.sbc"), parity: join(outDir, "data_p.sbc") };
  const simDir = mkdtempSync(join(work, "gen-"));
  const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: simDir, DOCA_SIM_SIDE: "host" };
  delete env.DOCA_SIM_CONFIG;
  const args = [
    "-d", "mlx5_0", "--original-input-data", plain, "--block-size", String(blockSize), "--matrix-type", matrix,
    "--data-1", content.data1, "--data-2", content.data2, "--data-p", content.parity,
  ];
  const r = spawnSync(bin("gga_offload_sbc_generator"), args, { env, encoding: "utf8", timeout: 120_000 });
  rmSync(simDir, { recursive: true, force: true });
  assert.equal(r.status, 0, `gga_offload_sbc_generator ${args.join(" ")}\n${brief(`${r.stdout}\n${r.stderr}`)}`);
  return content;
}

/**
 * The GGA-offload flow: three target_rdma (data_1, data_2, parity; each `--binary-content` of the generator's), then
 * comch_to_rdma_gga_offload (`-d <dev> -r <rep> --cpu N --data-1-storage A:P --data-2-storage A:P --data-p-storage
 * A:P [--matrix-type T] [--trigger-recovery-read-every-n N]`), then initiator_comch as in flow(). The relay reads
 * half a block from two targets, rebuilds the missing half with DOCA's EC recover when asked to, and decompresses
 * (LZ4) straight into the host's memory.
 */
export async function ggaFlow(
  strategy: string,
  content: GgaContent,
  initiator: string[],
  relayExtra: string[] = [],
): Promise<{ host: Proc; dpu: Proc; targets: Proc[] }> {
  const dir = mkdtempSync(join(work, "gga-run-"));
  const simDir = join(dir, "sim");
  mkdirSync(simDir, { mode: 0o700 });
  const cpus = availableParallelism();
  const hostCpu = "0", otherCpu = String(cpus - 1);
  const procs: Proc[] = [];
  try {
    const targets: Proc[] = [];
    const ports: string[] = [];
    for (const file of [content.data1, content.data2, content.parity]) {
      let port = String(testPort());
      while (ports.includes(port)) port = String(testPort());
      ports.push(port);
      const t = start("target_rdma", "host", ["-d", "mlx5_0", "--cpu", otherCpu, "--listen-port", port, "--binary-content", file], simDir);
      procs.push(t);
      targets.push(t);
    }
    for (const t of targets) await waitFor(t, /Listening on socket/, 30_000, "target_rdma");
    const d = start("comch_to_rdma_gga_offload", "dpu", [
      "-d", "03:00.1", "-r", "b1:00.1", "--cpu", otherCpu, "--data-1-storage", `127.0.0.1:${ports[0]}`,
      "--data-2-storage", `127.0.0.1:${ports[1]}`, "--data-p-storage", `127.0.0.1:${ports[2]}`, ...relayExtra,
    ], simDir);
    procs.push(d);
    await waitFor(d, new RegExp(`Connected to 127\\.0\\.0\\.1:${ports[2]}`), 30_000, "comch_to_rdma_gga_offload");
    const h = start("initiator_comch", "host", ["-d", "b1:00.1", "--cpu", hostCpu, "--execution-strategy", strategy, ...initiator], simDir);
    procs.push(h);
    const all = Promise.all(procs.map((p) => p.exited));
    const timedOut = await Promise.race([all.then(() => false), sleep(90_000).then(() => true)]);
    const logs = targets.map((t, i) => `--- target ${i + 1}\n${brief(t.log)}`).join("\n");
    assert.ok(!timedOut, `the GGA flow did not finish in 90 s\n${logs}\n--- dpu\n${brief(d.log)}\n--- host\n${brief(h.log)}`);
    return { host: h, dpu: d, targets };
  } finally {
    for (const p of procs) if (p.code === null) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}
