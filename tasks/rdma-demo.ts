#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run --allow-sys=statfs
/**
 * RDMA demo on the software device: rdma-copy between two processes in two network namespaces joined by a veth
 * pair (when this runs as root and `ip netns` works), else over loopback; it says which. A random file goes across
 * by RDMA write, and back by RDMA read, each checked by SHA-256.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { randomFillSync } from "node:crypto";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { parseFlags, positiveInt } from "./common/cli.ts";
import { checkWorkRoom } from "./common/work-room.ts";
import { interruption, isStopStatus, onForcedExit, stopOnSignals, STOPPED_STATUSES, stopsDelivered } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printError } from "./common/output.ts";
import { versionLine } from "./common/version.ts";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { ownExtension } from "./common/run-pair.ts";
import { formatElapsed, startLiveLine } from "./common/live-line.ts";
import { taskFlags } from "./common/task-flags.ts";
import { sha256OfFile } from "./common/file-sha256.ts";
import { formatBytes, formatRate } from "./common/units.ts";

export const FLAGS = taskFlags({ loopback: { type: "boolean" }, keep: { type: "boolean" } }, "size", "version", "help");
const TASK = "rdma-demo";

const HELP = `Usage: rdma-demo [--size BYTES] [--loopback] [--keep]

On the software DOCA device: copies a random file (default 8 MiB) with tasks/rdma-copy.ts from one process to
another by RDMA write, then back by RDMA read, and checks both by SHA-256. As root with a working \`ip netns\` the two
processes run in two fresh network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2; removed afterwards),
so the RDMA traffic crosses a network link; otherwise (or with --loopback) both run here over 127.0.0.1. It prints
which. --size is at most 1 GiB (1073741824), and the work folder (under $TMPDIR, else /tmp) must have room for three
copies of the file: both are checked before anything is written. --keep leaves the working folder in place. Waits:
each copy gives up after 30 s without its peer.
Ctrl-C, SIGTERM, SIGHUP or a closed output stop both copies, remove the namespaces and the working folder.
Flags: --size BYTES, --loopback, --keep, --version (versions of doca-ts and DOCA), -h/--help.
Exit status 0 when both copies were verified, 1 when one failed, 2 for bad flags, ${STOPPED_STATUSES}.`;

// The package's built JavaScript runs its sibling rdma-copy.js (plain Node), the sources rdma-copy.ts.
const COPY = fileURLToPath(new URL(`./rdma-copy${ownExtension}`, import.meta.url));
const PORT = 7471;

/** The command that runs rdma-copy under this runtime, with exactly its deno.json permissions on Deno. */
function copyCommand(args: string[]): string[] {
  switch (currentRuntime()) {
    case "deno":
      return [(globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath(), "run", "--no-prompt", "--allow-ffi", "--allow-env", "--allow-read", "--allow-write", "--allow-net", "--allow-run", "--allow-sys=statfs", COPY, ...args];
    case "bun":
      return [process.execPath, COPY, ...args];
    default:
      return COPY.endsWith(".js") ? [process.execPath, COPY, ...args] : [process.execPath, "--import", "tsx", COPY, ...args];
  }
}

interface Net {
  how: string;
  receiverHost: string;
  /** Prefix that runs a command on each side (empty on loopback). */
  receiverPrefix: string[];
  senderPrefix: string[];
  cleanup(): void;
}

function sh(args: string[]): { ok: boolean; err: string } {
  const r = spawnSync(args[0], args.slice(1), { encoding: "utf8" });
  return { ok: r.status === 0, err: (r.stderr || r.error?.message || "").trim() };
}

/** Sleeps without the event loop (cleanup runs on the way out, where nothing asynchronous may be left to run). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes a namespace, trying again for a while: `ip netns exec` gave each side its own mount namespace, in which the
 * namespace's file is mounted too, and until the kernel has torn down the mount namespace of a side that just exited
 * (later on a loaded machine) `ip netns del` fails with EBUSY and leaves the name behind.
 */
function removeNamespace(name: string): void {
  for (let tries = 0; tries < 100; tries++) {
    sh(["ip", "netns", "del", name]);
    if (!existsSync(`/run/netns/${name}`)) return;
    sleepSync(50);
  }
  printError(`rdma-demo: could not remove the network namespace ${name} (remove it with: ip netns del ${name})`);
}

/** Two namespaces joined by a veth pair, or undefined with the reason it could not be made. */
function namespaces(): Net | string {
  // No uid check of our own (Deno guards both process.getuid() and /proc/self): `ip netns add` says whether it may.
  const tag = `${process.pid}`.slice(-6);
  const a = `doca-ts-a${tag}`, b = `doca-ts-b${tag}`;
  const cleanup = () => {
    removeNamespace(a);
    removeNamespace(b);
  };
  const steps = [
    ["ip", "netns", "add", a],
    ["ip", "netns", "add", b],
    ["ip", "link", "add", `dtsa${tag}`, "type", "veth", "peer", "name", `dtsb${tag}`],
    ["ip", "link", "set", `dtsa${tag}`, "netns", a],
    ["ip", "link", "set", `dtsb${tag}`, "netns", b],
    ["ip", "-n", a, "addr", "add", "10.77.0.1/24", "dev", `dtsa${tag}`],
    ["ip", "-n", b, "addr", "add", "10.77.0.2/24", "dev", `dtsb${tag}`],
    ["ip", "-n", a, "link", "set", `dtsa${tag}`, "up"],
    ["ip", "-n", b, "link", "set", `dtsb${tag}`, "up"],
    ["ip", "-n", a, "link", "set", "lo", "up"],
    ["ip", "-n", b, "link", "set", "lo", "up"],
  ];
  for (const step of steps) {
    const r = sh(step);
    if (!r.ok) {
      cleanup();
      return `\`${step.join(" ")}\` failed: ${r.err || "no message"}`;
    }
  }
  return {
    how: `two network namespaces (${a} 10.77.0.1 ⇄ ${b} 10.77.0.2, veth)`,
    receiverHost: "10.77.0.1",
    receiverPrefix: ["ip", "netns", "exec", a],
    senderPrefix: ["ip", "netns", "exec", b],
    cleanup,
  };
}

interface Run {
  done: Promise<{ code: number | null; stderr: string; stdout: string }>;
  stderr(): string;
}

/** Starts a side; a stop (Ctrl-C, SIGTERM, SIGHUP, closed output) passes SIGTERM on to it, so it stops as cleanly. */
/** The sides still running: a forced exit (the grace period over, a second Ctrl-C) kills them before cleaning up. */
const running = new Set<ChildProcess>();

function killRunning(): void {
  for (const child of running) child.kill("SIGKILL");
}

function run(cmd: string[], env: Record<string, string>, signal: AbortSignal): Run {
  const child = spawn(cmd[0], cmd.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.on("exit", () => running.delete(child));
  let stderr = "", stdout = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  const pass = () => child.kill("SIGTERM");
  signal.addEventListener("abort", pass, { once: true });
  const done = new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) =>
    child.on("close", (code) => {
      signal.removeEventListener("abort", pass);
      resolve({ code, stderr, stdout });
    })
  );
  return { done, stderr: () => stderr };
}

async function copyOnce(net: Net, from: string, to: string, mode: "write" | "read", env: Record<string, string>, signal: AbortSignal): Promise<string> {
  // On a terminal, a live line while the two sides (output captured) copy; nothing when stderr is piped.
  const started = performance.now();
  const live = startLiveLine(() => `rdma-demo: copying by RDMA ${mode}… ${formatElapsed(performance.now() - started)}`);
  try {
    return await copyOnceQuietly(net, from, to, mode, env, signal);
  } finally {
    live.stop();
  }
}

async function copyOnceQuietly(net: Net, from: string, to: string, mode: "write" | "read", env: Record<string, string>, signal: AbortSignal): Promise<string> {
  const what = `copying by RDMA ${mode} (both sides were stopped)`;
  const receiver = run([...net.receiverPrefix, ...copyCommand(["--receive", to, "--listen", `${net.receiverHost}:${PORT}`, "--json"])], env, signal);
  const deadline = Date.now() + 60_000;
  while (!receiver.stderr().includes("listening")) {
    if (signal.aborted) {
      await receiver.done;
      throw interruption(signal, what);
    }
    if (Date.now() > deadline) throw new Error(`the receiver did not start listening: ${receiver.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const sender = run([...net.senderPrefix, ...copyCommand(["--send", from, "--connect", `${net.receiverHost}:${PORT}`, "--mode", mode, "--json"])], env, signal);
  const [r, s] = await Promise.all([receiver.done, sender.done]);
  // A side ended by a stop (the terminal's Ctrl-C reaches it too) is this demo's stop, once the loop delivered it.
  if (isStopStatus(r.code) || isStopStatus(s.code)) await stopsDelivered();
  if (signal.aborted) throw interruption(signal, what);
  if (r.code !== 0 || s.code !== 0) throw new Error(`rdma-copy (${mode}) failed: receiver exit ${r.code}: ${r.stderr.trim()}; sender exit ${s.code}: ${s.stderr.trim()}`);
  const summary = JSON.parse(s.stdout.trim().split("\n").pop()!);
  // sizes for people as every task prints them (KiB/MiB/GiB; rdma-copy's JSON keeps the bytes)
  return `${mode}: ${formatBytes(summary.bytes)} in ${summary.seconds.toFixed(2)} s, ${formatRate(summary.bytes, summary.seconds)}`;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return (print(HELP), 0);
  if (values.version) return (print(versionLine(TASK)), 0);
  const size = values.size === undefined ? 8 << 20 : positiveInt(values.size, "--size", 1 << 30);
  // Three copies of the file (original, there, back) and the software device's files: refused now, not as ENOSPC.
  checkWorkRoom(tmpdir(), size, 3 * size + (1 << 20), "three copies of the file", TASK);
  const signal = stopOnSignals();
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-rdma-demo-"));
  const env = { DOCA_SIM_DIR: join(dir, "sim") };
  let net: Net | string = values.loopback ? "--loopback given" : namespaces();
  if (typeof net === "string") {
    print(`rdma-demo: over loopback 127.0.0.1 (network namespaces not used: ${net})`);
    net = { how: "loopback", receiverHost: "127.0.0.1", receiverPrefix: [], senderPrefix: [], cleanup: () => {} };
  } else {
    print(`rdma-demo: between ${net.how}`);
  }
  // If the process must exit without unwinding (a second Ctrl-C, the grace period over), this still runs.
  const leave = () => {
    killRunning();
    (net as Net).cleanup();
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  };
  const forget = onForcedExit(leave);
  try {
    const original = join(dir, "original.bin"), there = join(dir, "there.bin"), back = join(dir, "back.bin");
    const fd = openSync(original, "wx");
    const block = new Uint8Array(1 << 20);
    for (let done = 0; done < size; done += block.length) {
      const n = Math.min(block.length, size - done);
      randomFillSync(block, 0, n);
      writeSync(fd, block, 0, n, done);
    }
    closeSync(fd);
    if (signal.aborted) throw interruption(signal, `writing the demo's file`);
    const expect = await sha256OfFile(original, signal);
    const wrote = await copyOnce(net, original, there, "write", env, signal);
    const thereOk = (await sha256OfFile(there, signal)) === expect;
    print(`rdma-demo: ${wrote}, sha256 ${thereOk ? "matches" : "DIFFERS"}`);
    const read = await copyOnce(net, there, back, "read", env, signal);
    const backOk = (await sha256OfFile(back, signal)) === expect;
    print(`rdma-demo: ${read}, sha256 ${backOk ? "matches" : "DIFFERS"}`);
    return thereOk && backOk ? 0 : 1;
  } finally {
    forget();
    leave();
    if (values.keep) print(`rdma-demo: kept ${dir}`);
  }
}

if (isMain(import.meta)) runMain(() => main(process.argv.slice(2)));
