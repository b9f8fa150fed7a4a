#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read --allow-write
/**
 * Step 1 of NVIDIA's DMA Copy flow (host side): put memory in a memory map the other side of PCIe may access, and export it. Importable (`exportMmap`)
 * and runnable: fills a buffer (from a file or a pattern), exports it, prints/writes the descriptor with its
 * address and length, then keeps the map alive until stdin closes (the peer needs it to exist while it copies).
 *
 *   deno run -A tasks/steps/export-mmap.ts --in data.bin --out desc.json --writable
 */
import "../common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { OutputFile } from "../accel/output-file.ts";
import { Buffer } from "node:buffer";
import process from "node:process";
import { Access } from "../../ffi/native/constants.ts";
import type { Device } from "../../ffi/doca/common/device.ts";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import { Mmap } from "../../ffi/doca/common/mmap.ts";
import { parseFlags, parseSide, positiveInt, UsageError } from "../common/cli.ts";
import { applySide, openDeviceOf } from "../common/device.ts";
import { raceAbort, stopOnSignals, STOPPED_STATUSES } from "../common/interrupt.ts";
import { isMain, print, runMain } from "../common/main.ts";
import { userPath } from "../common/user-path.ts";
import { taskFlags } from "../common/task-flags.ts";
import { readFlagFile } from "../common/input-file.ts";
import { allocateFor, requireFitsInMemory } from "../common/memory-limit.ts";
import { checkOptions, type OptionRules } from "../common/options-check.ts";

export interface ExportedMmap extends Disposable {
  memory: NativeMemory;
  mmap: Mmap;
  /** A copy of doca_mmap_export_pci's descriptor (valid while `mmap` lives). */
  descriptor: Uint8Array;
  address: number;
  length: number;
  close(): void;
}

/** exportMmap's options, checked at run time (plain JavaScript callers). */
const EXPORT_OPTIONS: OptionRules = {
  device: { type: "object", required: true, hint: "an open Device (openDeviceOf)" },
  memory: { type: "object", required: true, hint: "a NativeMemory" },
  writable: { type: "boolean" },
  length: { type: "integer", flag: "--length" },
};

/** Maps `memory` for `device` with PCI read (or read/write) access and exports it. */
export function exportMmap(opts: { device: Device; memory: NativeMemory; writable?: boolean; length?: number }): ExportedMmap {
  checkOptions("exportMmap", opts, EXPORT_OPTIONS);
  const length = opts.length ?? opts.memory.length;
  const mmap = Mmap.create({
    memory: opts.memory,
    length,
    permissions: opts.writable ? Access.PCI_READ_WRITE : Access.PCI_READ_ONLY,
    devices: [opts.device],
  });
  let descriptor: Uint8Array;
  try {
    descriptor = mmap.exportPci(opts.device);
  } catch (e) {
    mmap.close();
    throw e;
  }
  const close = () => mmap.close();
  return { memory: opts.memory, mmap, descriptor, address: opts.memory.address, length, close, [Symbol.dispose]: close };
}

/** The JSON form the runnable steps exchange (descriptor in base64). */
export function describeExport(e: { descriptor: Uint8Array; address: number; length: number }): string {
  return JSON.stringify({ descriptor: Buffer.from(e.descriptor).toString("base64"), address: e.address, length: e.length });
}

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {
    in: { type: "string" },
    writable: { type: "boolean" },
    out: { type: "string" },
  },
  "length", "pci-addr", "side", "help",
);

const HELP = `Usage: export-mmap (--in FILE | --length N) [--writable] [--out FILE] [-p PCI] [--side host|dpu]

Allocates native memory (filled from --in, or N bytes of the pattern i & 0xff), maps it for the device with PCI
read access (--writable: read/write), exports it with doca_mmap_export_pci and prints one JSON line
{descriptor (base64), address, length} (also written to --out). It then waits until stdin closes, printing the
first 32 bytes of the memory as hex when it does, so a peer's writes can be seen (it waits for stdin as long as
it stays open: no timeout; Ctrl-C, SIGTERM, SIGHUP or a closed stdout close the map and exit 130/143/129/141).
The software device's side: --side (default host, else DOCA_SIM_SIDE).
Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: --in FILE, --length N, --writable, --out FILE, -p/--pci-addr PCI (default: the first device),
--side host|dpu, -h/--help.`;

/** The step holds the whole file in memory (one buffer): the most one JavaScript byte array holds everywhere. */
const MAX_EXPORT_FILE_BYTES = 2 ** 31 - 1;

async function main(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return void print(HELP);
  if ((values.in === undefined) === (values.length === undefined)) throw new UsageError("need exactly one of --in FILE / --length N");
  // the limit is checked before anything is read or allocated
  if (values.length !== undefined) requireFitsInMemory(positiveInt(values.length, "--length"), "--length");
  const input = values.in !== undefined ? readFlagFile("--in", values.in, MAX_EXPORT_FILE_BYTES).bytes : undefined;
  const length = input ? input.length : positiveInt(values.length!, "--length");
  if (length === 0) throw new Error(`--in ${values.in}: the file is empty (a memory map cannot be)`);
  applySide(parseSide(values.side, process.env, "host"));
  if (values.out) OutputFile.checkFree(userPath(values.out), values.out, true, "--out"); // a folder or FIFO there: said now
  using device = openDeviceOf(values["pci-addr"]);
  using memory = input ? NativeMemory.alloc(length) : allocateFor(length, "--length");
  if (input) memory.bytes.set(input);
  else for (let i = 0; i < length; i++) memory.bytes[i] = i & 0xff;
  using exported = exportMmap({ device, memory, writable: values.writable });
  const line = describeExport(exported);
  if (values.out) OutputFile.writeWhole(userPath(values.out), values.out, line, "export-mmap", "--out");
  print(line);
  // Ctrl-C, SIGTERM, SIGHUP or a closed stdout end the wait like stdin's end would, but as an interruption: the map
  // is revoked and closed on the way out (`using`), and the exit status says which stop it was.
  const stdinClosed = new Promise<void>((resolve) => {
    process.stdin.on("end", resolve).on("close", resolve).resume();
  });
  try {
    await raceAbort(stdinClosed, stopOnSignals(), "keeping the export alive (waiting for stdin to close)");
  } finally {
    process.stdin.pause();
  }
  print(Buffer.from(memory.bytes.subarray(0, 32)).toString("hex"));
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
