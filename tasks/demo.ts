#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run --allow-sys=statfs
/**
 * Demo on the software device: a host process and a DPU process (DOCA_SIM_SIDE=dpu, a private DOCA_SIM_DIR) run
 * dma-copy in both directions with a file larger than one DMA buffer, then a small copy in NVIDIA's classic
 * single-buffer sequence, and every result is checked by SHA-256. Exit status 1 on any failure or mismatch.
 * Like every task it refuses sizes it cannot hold (at most MAX_DEMO_SIZE, and room for three copies in the work
 * folder) before writing anything, and any stop (Ctrl-C, SIGTERM, SIGHUP, closed output) stops both sides the same
 * way and removes its work folder.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { randomFillSync } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { positiveInt } from "./common/cli.ts";
import { checkWorkRoom } from "./common/work-room.ts";
import { interruption, onForcedExit, stopOnSignals, STOPPED_STATUSES } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { runCopyPair } from "./common/run-pair.ts";
import type { Summary } from "./dma-copy/session.ts";
import { formatBytes, formatRate, plural } from "./common/units.ts";
import { formatElapsed, startLiveLine } from "./common/live-line.ts";
import { parseTaskFlags, taskFlags } from "./common/task-flags.ts";
import { sha256OfFile } from "./common/file-sha256.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags({ keep: { type: "boolean" } }, "size", "version", "help");
const TASK = "demo";

const HELP = `Usage: demo [--size BYTES] [--keep]

On the software DOCA device: generates a random file (default 5 MiB, larger than one 2 MiB DMA buffer), copies it
host → DPU and back DPU → host with tasks/dma-copy.ts running as two separate processes, then copies a 64 KiB file
in classic mode (NVIDIA's single-buffer message sequence), and checks every result's SHA-256 against the original.
--size is at most 4 GiB (4294967296), and the work folder (under $TMPDIR, else /tmp) must have room for three
copies of the file: both are checked before anything is written. --keep leaves the working folder (printed) in
place. Needs the software device: deno task sim:build. Waits: each copy's sides give up after 20 s without their
peer. Ctrl-C, SIGTERM, SIGHUP or a closed output stop both sides cleanly and remove the work folder.
Exit status 0 when every copy was verified, 1 when one failed, 2 for bad flags, ${STOPPED_STATUSES}.
Flags: --size BYTES, --keep, --version (versions of doca-ts and DOCA), -h/--help.`;

/** The largest --size: the demo writes the file three times (original, DPU copy, copy back). */
export const MAX_DEMO_SIZE = 4 * 1024 * 1024 * 1024;
const SMALL = 64 * 1024;

/** Refuses a work folder without room for the demo's files (three copies of `size` and two small files). */
function checkRoom(folder: string, size: number): void {
  checkWorkRoom(folder, size, 3 * size + 2 * SMALL, "three copies of the file", TASK);
}

export const HOST_PCI = "0000:b1:00.1";
export const DPU_PCI = "0000:03:00.1";

/** Writes `size` random bytes, giving the event loop a turn every 16 MiB so that a stop is heard at once. */
async function writeRandomFile(path: string, size: number, signal: AbortSignal): Promise<void> {
  const fd = openSync(path, "wx");
  try {
    const block = new Uint8Array(1 << 20);
    for (let done = 0; done < size; done += block.length) {
      if (done % (16 << 20) === 0) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (signal.aborted) throw interruption(signal, `writing the demo's ${formatBytes(size)} file`);
      }
      const n = Math.min(block.length, size - done);
      randomFillSync(block, 0, n);
      writeSync(fd, block, 0, n, done);
    }
  } finally {
    closeSync(fd);
  }
}

interface Step {
  title: string;
  hostFile: string;
  dpuFile: string;
  extra: string[];
  expect: string;
}

async function runStep(step: Step, env: Record<string, string>, signal: AbortSignal): Promise<{ ok: boolean; line: string }> {
  // The two sides run with their output captured: on a terminal, a live line says the copy is under way (4 GiB take
  // half a minute); nothing when stderr is piped.
  const started = performance.now();
  const live = startLiveLine(() => `demo: ${step.title}: copying… ${formatElapsed(performance.now() - started)}`);
  const { host, dpu } = await runCopyPair({
    signal,
    hostArgs: ["-f", step.hostFile, "-p", HOST_PCI, "--json-output", "--stats", "--timeout", "20", ...step.extra],
    dpuArgs: ["-f", step.dpuFile, "-p", DPU_PCI, "-r", HOST_PCI, "--json-output", "--stats", "--timeout", "20", ...step.extra],
    env,
  }).finally(() => live.stop());
  if (signal.aborted) throw interruption(signal, `copying ${step.title}; both sides were stopped`);
  if (host.code !== 0 || dpu.code !== 0) {
    return { ok: false, line: `${step.title}: FAILED (host exit ${host.code}, DPU exit ${dpu.code})\nthe host said: ${host.stderr.trim()}\nthe DPU said: ${dpu.stderr.trim()}` };
  }
  const h = JSON.parse(host.stdout.trim().split("\n").pop()!) as Summary;
  const d = JSON.parse(dpu.stdout.trim().split("\n").pop()!) as Summary;
  const receiver = h.role === "receive" ? step.hostFile : step.dpuFile;
  const got = await sha256OfFile(receiver, signal);
  const ok = got === step.expect && (h.mode === "classic" || (h.sha256 === step.expect && d.sha256 === step.expect));
  const sender = h.role === "send" ? h : d;
  return {
    ok,
    line: `${step.title}: ${ok ? "OK" : "MISMATCH"} ${formatBytes(sender.bytes)} ${h.mode}` +
      (h.mode === "extended" ? ` (${plural(sender.chunks, "chunk")}, ${sender.slots} in flight)` : "") +
      // Not the progress bar's DMA rate: from the first message to the receipt, hashing and fsync included.
      `, ${formatRate(sender.bytes, Math.max(h.seconds, d.seconds))} end to end; sha256 ${got.slice(0, 16)}… ` +
      `${ok ? "matches" : `expected ${step.expect.slice(0, 16)}…`}; peak RSS host ${formatBytes(h.peakRssBytes ?? 0)}, ` +
      `DPU ${formatBytes(d.peakRssBytes ?? 0)}`,
  };
}

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, TASK);
  if (values === undefined) return 0;
  const size = values.size === undefined ? 5 * 1024 * 1024 : positiveInt(values.size, "--size", MAX_DEMO_SIZE);
  const signal = stopOnSignals();
  checkRoom(tmpdir(), size);
  const work = mkdtempSync(join(tmpdir(), "doca-ts-demo-"));
  // If the process has to leave without unwinding (a second Ctrl-C, a hung child), the folder still goes.
  const unregister = onForcedExit(() => values.keep || rmSync(work, { recursive: true, force: true }));
  const hostDir = join(work, "host");
  const dpuDir = join(work, "dpu");
  const simDir = join(work, "sim");
  for (const d of [hostDir, dpuDir, simDir]) mkdirSync(d);
  const env = { DOCA_SIM_DIR: simDir };
  let failures = 0;
  try {
    const original = join(hostDir, "original.bin");
    await writeRandomFile(original, size, signal);
    const expect = await sha256OfFile(original, signal);
    print(`demo: ${formatBytes(size)} random file, sha256 ${expect}; host ${HOST_PCI}, DPU ${DPU_PCI} (separate processes)`);
    const small = join(hostDir, "small.bin");
    await writeRandomFile(small, SMALL, signal);
    const steps: Step[] = [
      { title: "host → DPU", hostFile: original, dpuFile: join(dpuDir, "from-host.bin"), extra: [], expect },
      { title: "DPU → host", hostFile: join(hostDir, "from-dpu.bin"), dpuFile: join(dpuDir, "from-host.bin"), extra: [], expect },
      { title: "classic (NVIDIA sequence) host → DPU", hostFile: small, dpuFile: join(dpuDir, "small.bin"), extra: ["--classic"], expect: await sha256OfFile(small, signal) },
    ];
    for (const step of steps) {
      const r = await runStep(step, env, signal);
      // every line of the result starts with the task's name, as every task's lines do (tasks/README.md)
      print(r.line.split("\n").map((line) => `demo: ${line}`).join("\n"));
      if (!r.ok) failures++;
    }
  } finally {
    unregister();
    if (values.keep) print(`demo: files kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  print(failures === 0 ? "demo: every copy verified" : `demo: ${failures} step(s) FAILED`);
  return failures === 0 ? 0 : 1;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
