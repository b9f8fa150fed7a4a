#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run --allow-sys=statfs
/**
 * Demo on the software device: a host process and a DPU process (DOCA_SIM_SIDE=dpu, a private DOCA_SIM_DIR) run
 * dma-copy in both directions with a file larger than one DMA buffer, then a small copy in NVIDIA's classic
 * single-buffer sequence, and every result is checked by SHA-256. Exit status 1 on any failure or mismatch.
 */
import { createHash, randomFillSync } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseFlags, wholeNumber } from "./common/cli.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { runCopyPair } from "./common/run-pair.ts";
import type { Summary } from "./dma-copy/session.ts";
import { formatBytes, formatRate } from "./common/units.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = { size: { type: "string" }, keep: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

const HELP = `Usage: demo [--size BYTES] [--keep]

On the software DOCA device: generates a random file (default 5 MiB, larger than one 2 MiB DMA buffer), copies it
host → DPU and back DPU → host with tasks/dma-copy.ts running as two separate processes, then copies a 64 KiB file
in classic mode (NVIDIA's single-buffer message sequence), and checks every result's SHA-256 against the original.
--keep leaves the working folder (printed) in place. Needs the software device: deno task sim:build. Waits: each
copy's sides give up after 30 s without their peer (dma-copy's default timeout).
Flags: --size BYTES, --keep, -h/--help.`;

export const HOST_PCI = "0000:b1:00.1";
export const DPU_PCI = "0000:03:00.1";

function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function writeRandomFile(path: string, size: number): void {
  const fd = openSync(path, "wx");
  try {
    const block = new Uint8Array(1 << 20);
    for (let done = 0; done < size; done += block.length) {
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

async function runStep(step: Step, env: Record<string, string>): Promise<{ ok: boolean; line: string }> {
  const { host, dpu } = await runCopyPair({
    hostArgs: ["-f", step.hostFile, "-p", HOST_PCI, "--json-output", "--stats", "--timeout", "20", ...step.extra],
    dpuArgs: ["-f", step.dpuFile, "-p", DPU_PCI, "-r", HOST_PCI, "--json-output", "--stats", "--timeout", "20", ...step.extra],
    env,
  });
  if (host.code !== 0 || dpu.code !== 0) {
    return { ok: false, line: `${step.title}: FAILED (host exit ${host.code}, DPU exit ${dpu.code})\n  host: ${host.stderr.trim()}\n  DPU: ${dpu.stderr.trim()}` };
  }
  const h = JSON.parse(host.stdout.trim().split("\n").pop()!) as Summary;
  const d = JSON.parse(dpu.stdout.trim().split("\n").pop()!) as Summary;
  const receiver = h.role === "receive" ? step.hostFile : step.dpuFile;
  const got = sha256File(receiver);
  const ok = got === step.expect && (h.mode === "classic" || (h.sha256 === step.expect && d.sha256 === step.expect));
  const sender = h.role === "send" ? h : d;
  return {
    ok,
    line: `${step.title}: ${ok ? "OK" : "MISMATCH"} ${formatBytes(sender.bytes)} ${h.mode}` +
      (h.mode === "extended" ? ` (${sender.chunks} chunks, ${sender.slots} in flight)` : "") +
      `, ${formatRate(sender.bytes, Math.max(h.seconds, d.seconds))}; sha256 ${got.slice(0, 16)}… ` +
      `${ok ? "matches" : `expected ${step.expect.slice(0, 16)}…`}; peak RSS host ${formatBytes(h.peakRssBytes ?? 0)}, ` +
      `DPU ${formatBytes(d.peakRssBytes ?? 0)}`,
  };
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    print(HELP);
    return 0;
  }
  const size = values.size === undefined ? 5 * 1024 * 1024 : wholeNumber(values.size, "--size");
  const work = mkdtempSync(join(tmpdir(), "doca-ts-demo-"));
  const hostDir = join(work, "host");
  const dpuDir = join(work, "dpu");
  const simDir = join(work, "sim");
  for (const d of [hostDir, dpuDir, simDir]) mkdirSync(d);
  const env = { DOCA_SIM_DIR: simDir };
  let failures = 0;
  try {
    const original = join(hostDir, "original.bin");
    writeRandomFile(original, size);
    const expect = sha256File(original);
    print(`demo: ${formatBytes(size)} random file, sha256 ${expect}; host ${HOST_PCI}, DPU ${DPU_PCI} (separate processes)`);
    const small = join(hostDir, "small.bin");
    writeRandomFile(small, 64 * 1024);
    const steps: Step[] = [
      { title: "host → DPU", hostFile: original, dpuFile: join(dpuDir, "from-host.bin"), extra: [], expect },
      { title: "DPU → host", hostFile: join(hostDir, "from-dpu.bin"), dpuFile: join(dpuDir, "from-host.bin"), extra: [], expect },
      { title: "classic (NVIDIA sequence) host → DPU", hostFile: small, dpuFile: join(dpuDir, "small.bin"), extra: ["--classic"], expect: sha256File(small) },
    ];
    for (const step of steps) {
      const r = await runStep(step, env);
      print(r.line);
      if (!r.ok) failures++;
    }
  } finally {
    if (values.keep) print(`demo: files kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  print(failures === 0 ? "demo: every copy verified" : `demo: ${failures} step(s) FAILED`);
  return failures === 0 ? 0 : 1;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
