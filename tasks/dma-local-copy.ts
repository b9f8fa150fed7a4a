#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read
/**
 * DMA local copy: two buffers in this process, one device, one DMA memcpy task (the flow of NVIDIA's
 * dma_local_copy sample). Prints a check of both buffers and exits non-zero if they differ.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { createHash } from "node:crypto";
import process from "node:process";
import { Access, BufInventory, Dma, Mmap, NativeMemory, ProgressEngine } from "../mod.ts";
import { positiveInt, UsageError } from "./common/cli.ts";
import { openDeviceOf } from "./common/device.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { dmaTransfer } from "./steps/dma-transfer.ts";
import { STOPPED_STATUSES } from "./common/interrupt.ts";
import { parseTaskFlags, taskFlags } from "./common/task-flags.ts";
import { formatDuration } from "./common/units.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags({ text: { type: "string", short: "t" } }, "size", "pci-addr", "json", "version", "help");
const TASK = "dma-local-copy";

const HELP = `Usage: dma-local-copy [-t TEXT | --size BYTES] [-p PCI] [--json]

Copies a buffer into a second buffer of the same process with one DOCA DMA memcpy task on one device, then prints
each buffer's length and SHA-256 (and the text, for -t). Exit status 0, 1 if the destination differs (or on any
other error), 2 for bad flags, ${STOPPED_STATUSES}.
  -t, --text TEXT      bytes to copy (default "This is a sample piece of text")
      --size BYTES     copy BYTES of a pattern instead (must fit the device's max DMA buffer size)
  -p, --pci-addr PCI   device (default: the first one found)
      --json           print the result as one JSON object
      --version        print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help           this text
No peer and no waits: one local DMA task.`;

export interface LocalCopyResult {
  device: string;
  bytes: number;
  sourceSha256: string;
  destinationSha256: string;
  equal: boolean;
  /** The copy's duration (tasks/README.md: durations in seconds) */
  seconds: number;
  /** The same as a latency, in microseconds (the documented exception for one operation's latency) */
  latencyUs: number;
}

/** The data does not fit one DMA buffer of the device (0 bytes, or above its maximum). */
export class LocalCopySizeError extends RangeError {
  override name = "LocalCopySizeError";
  constructor(readonly bytes: number, readonly max: number) {
    super(`size must be 1..${max} bytes (the device's max DMA buffer), got ${bytes}`);
  }
}

/** The device's largest DMA buffer, in bytes: the most one local copy can move. */
export function maxLocalCopyBytes(pciAddr?: string): number {
  using device = openDeviceOf(pciAddr);
  return Dma.caps(device).maxBufSize;
}

/** Copies `data` through DMA into fresh memory and reports both buffers. */
export async function dmaLocalCopy(data: Uint8Array, pciAddr?: string): Promise<LocalCopyResult & { copy: Uint8Array }> {
  using device = openDeviceOf(pciAddr);
  const max = Dma.caps(device).maxBufSize;
  if (data.length === 0 || data.length > max) throw new LocalCopySizeError(data.length, max);
  using pe = new ProgressEngine();
  using src = NativeMemory.alloc(data.length);
  using dst = NativeMemory.alloc(data.length);
  src.bytes.set(data);
  using srcMap = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using dstMap = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(2);
  using dma = new Dma(device, pe);
  const t0 = performance.now();
  await dmaTransfer({
    pe,
    dma,
    inventory,
    from: { mmap: srcMap, address: src.address },
    to: { mmap: dstMap, address: dst.address },
    length: data.length,
  });
  const seconds = (performance.now() - t0) / 1000;
  const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
  const sourceSha256 = sha(src.bytes);
  const destinationSha256 = sha(dst.bytes);
  return {
    device: device.info.pciAddr,
    bytes: data.length,
    sourceSha256,
    destinationSha256,
    equal: sourceSha256 === destinationSha256,
    seconds,
    latencyUs: Math.round(seconds * 1e9) / 1000,
    copy: dst.bytes.slice(),
  };
}

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, TASK);
  if (values === undefined) return 0;
  if (values.size !== undefined && values.text !== undefined) throw new UsageError("give -t/--text or --size, not both");
  // Too large for the device is a bad flag (exit 2 naming it), not a failure of the copy.
  const tooLarge = (e: unknown) =>
    e instanceof LocalCopySizeError
      ? new UsageError(`${values.size !== undefined ? "--size" : "-t/--text"}: ${e.bytes} bytes is more than the device's largest DMA buffer (${e.max} bytes)`)
      : e;
  let data: Uint8Array;
  if (values.size !== undefined) {
    const n = positiveInt(values.size, "--size");
    // Checked against the device before anything is allocated: a size far over the limit must not end in the
    // runtime's own allocation error.
    const max = maxLocalCopyBytes(values["pci-addr"]);
    if (n > max) throw tooLarge(new LocalCopySizeError(n, max));
    data = new Uint8Array(n).map((_, i) => (i * 31 + 7) & 0xff);
  } else {
    // An empty text is no copy at all (a DMA buffer holds at least one byte): said before the device is asked
    if (values.text === "") throw new UsageError(`-t/--text: the text is empty; give at least one character to copy`);
    data = new TextEncoder().encode(values.text ?? "This is a sample piece of text");
  }
  const { copy, ...result } = await dmaLocalCopy(data, values["pci-addr"]).catch((e) => {
    throw tooLarge(e);
  });
  if (values.json) {
    printJson(result);
  } else {
    print(`dma-local-copy: device ${result.device}: DMA memcpy of ${result.bytes} bytes in ${formatDuration(result.seconds)}`);
    print(`dma-local-copy: source      sha256 ${result.sourceSha256}`);
    print(`dma-local-copy: destination sha256 ${result.destinationSha256}`);
    if (values.size === undefined) print(`dma-local-copy: destination text: ${new TextDecoder().decode(copy)}`);
    print(result.equal ? "dma-local-copy: the buffers are equal" : "dma-local-copy: MISMATCH: the destination differs from the source");
  }
  return result.equal ? 0 : 1;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
