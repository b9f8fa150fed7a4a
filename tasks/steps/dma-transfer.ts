#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read --allow-write
/**
 * Step 3 of NVIDIA's DMA Copy flow: one DMA memcpy between a local buffer and a remote exported one. It is two
 * steps, as in NVIDIA's samples: submit the task (`submitDmaCopy`: get a source and a destination doca_buf, submit a
 * memcpy task), then poll the progress engine until the task's completion callback ran (`pollUntilComplete`: the
 * doca_pe_progress loop). `dmaTransfer` runs both. Runnable: import a descriptor written by export-mmap.ts and read
 * from or write to the exporter's memory.
 *
 *   DOCA_SIM_SIDE=dpu deno run -A tasks/steps/dma-transfer.ts --descriptor desc.json --read out.bin
 *   DOCA_SIM_SIDE=dpu deno run -A tasks/steps/dma-transfer.ts --descriptor desc.json --write in.bin
 */
import "../common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { OutputFile } from "../accel/output-file.ts";
import { Buffer } from "node:buffer";
import process from "node:process";
import { setImmediate } from "node:timers";
import { BufInventory } from "../../ffi/doca/common/buf.ts";
import { Access } from "../../ffi/native/constants.ts";
import { Dma } from "../../ffi/doca/dma/dma.ts";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import { Mmap } from "../../ffi/doca/common/mmap.ts";
import { ProgressEngine } from "../../ffi/engine/pe.ts";
import { parseFlags, parseSide, positiveInt, UsageError, wholeNumber } from "../common/cli.ts";
import { requireFitsInMemory } from "../common/memory-limit.ts";
import { applySide, openDeviceOf } from "../common/device.ts";
import { isMain, print, runMain } from "../common/main.ts";
import { userPath } from "../common/user-path.ts";
import { STOPPED_STATUSES } from "../common/interrupt.ts";
import { taskFlags } from "../common/task-flags.ts";
import { readJsonFlagFile as readDescriptorFile } from "../common/json-config.ts";
import { readFlagFile } from "../common/input-file.ts";
import { checkOptions, type OptionRules } from "../common/options-check.ts";

export interface TransferEnd {
  mmap: Mmap;
  address: number;
}

/** A submitted DMA task: settles once its completion (or error) callback ran; its buffers are released then. */
export type DmaCompletion = Promise<void>;

/** submitDmaCopy's and dmaTransfer's options, checked at run time (plain JavaScript callers). */
const SUBMIT_OPTIONS: OptionRules = {
  dma: { type: "object", required: true, hint: "an open Dma context" },
  inventory: { type: "object", required: true, hint: "a BufInventory" },
  from: { type: "object", required: true, hint: "{ mmap, address }" },
  to: { type: "object", required: true, hint: "{ mmap, address }" },
  length: { type: "integer", required: true, flag: "--length" },
};
const TRANSFER_OPTIONS: OptionRules = { ...SUBMIT_OPTIONS, pe: { type: "object", required: true, hint: "a ProgressEngine" } };

/**
 * Gets the two doca_bufs and submits one memcpy task of `length` bytes from `from` to `to`. The returned completion
 * settles through the progress engine (see pollUntilComplete); the buffers are released when it does.
 */
export function submitDmaCopy(opts: { dma: Dma; inventory: BufInventory; from: TransferEnd; to: TransferEnd; length: number }): DmaCompletion {
  checkOptions("submitDmaCopy", opts, SUBMIT_OPTIONS);
  const { dma, inventory, from, to, length } = opts;
  if (length === 0) return Promise.resolve(); // DOCA buffers cannot be empty; nothing to move
  const src = inventory.bufByData(from.mmap, from.address, length);
  let dst;
  try {
    dst = inventory.bufByAddr(to.mmap, to.address, length);
  } catch (e) {
    src.close();
    throw e;
  }
  const release = () => {
    src.close();
    dst.close();
  };
  let submitted: Promise<void>;
  try {
    submitted = dma.memcpy(src, dst);
  } catch (e) {
    release();
    throw e;
  }
  return submitted.finally(release);
}

/**
 * The doca_pe_progress loop of NVIDIA's samples, without blocking the event loop: progress the engine once per
 * turn of the event loop until `completion` settled (callbacks run inside progress()), then return its outcome.
 * Many completions may be polled at once; the engine's own pump keeps running beside these calls.
 */
export async function pollUntilComplete(pe: ProgressEngine, completion: DmaCompletion): Promise<void> {
  let settled = false;
  const watched = completion.then(() => void (settled = true), () => void (settled = true));
  while (!settled) {
    pe.progress();
    await Promise.race([watched, new Promise<void>((resolve) => setImmediate(resolve))]);
  }
  return completion;
}

/** Submits one DMA memcpy and polls the progress engine until it completed; buffers released whatever happens. */
export async function dmaTransfer(opts: {
  dma: Dma;
  pe: ProgressEngine;
  inventory: BufInventory;
  from: TransferEnd;
  to: TransferEnd;
  length: number;
}): Promise<void> {
  checkOptions("dmaTransfer", opts, TRANSFER_OPTIONS);
  const { pe, ...submit } = opts;
  await pollUntilComplete(pe, submitDmaCopy(submit));
}

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {
    descriptor: { type: "string" },
    read: { type: "string" },
    write: { type: "string" },
    offset: { type: "string" },
  },
  "length", "pci-addr", "side", "help",
);

const HELP = `Usage: dma-transfer --descriptor FILE (--read OUT | --write IN) [--offset N] [--length N] [-p PCI]
                    [--side host|dpu]

Imports a memory map exported by the peer (FILE is the JSON export-mmap.ts writes: base64 descriptor,
address, length) and runs one DMA copy: --read copies the peer's bytes into OUT, --write copies IN's
bytes into the peer's memory (the export must allow PCI writes). Run it on the other side of the export (on the
software device: --side dpu, the default, for a host export; else DOCA_SIM_SIDE). Prints what it moved. No wait
on a peer: the exporter must keep its map alive while this runs.
Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: --descriptor FILE, --read OUT, --write IN, --offset N, --length N, -p/--pci-addr PCI (default: the
first device), --side host|dpu, -h/--help.`;

/** The step holds the whole file in memory (one buffer): the most one JavaScript byte array holds everywhere. */
const MAX_STEP_FILE_BYTES = 2 ** 31 - 1;

async function main(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return void print(HELP);
  if (!values.descriptor || (values.read === undefined) === (values.write === undefined)) {
    throw new UsageError("need --descriptor FILE and exactly one of --read OUT / --write IN");
  }
  applySide(parseSide(values.side, process.env, "dpu"));
  // a folder or FIFO at the output's name: said now, not after the transfer
  if (values.read !== undefined) OutputFile.checkFree(userPath(values.read), values.read, true, "--read");
  const offset = values.offset === undefined ? 0 : wholeNumber(values.offset, "--offset");
  const wanted = values.length === undefined ? undefined : positiveInt(values.length, "--length");
  if (wanted !== undefined) requireFitsInMemory(wanted, "--length"); // before the descriptor is read or memory allocated
  const exported = readDescriptorFile("--descriptor", values.descriptor) as { descriptor: string; address: number; length: number };
  const input = values.write !== undefined ? readFlagFile("--write", values.write, MAX_STEP_FILE_BYTES).bytes : undefined;
  const length = input ? input.length : wanted ?? exported.length - offset;
  if (!(offset >= 0 && length > 0 && offset + length <= exported.length)) {
    // the flags' range (or --write's file) against the descriptor's: a usage error naming them
    const flags = input ? `--offset with --write ${values.write}` : "--offset/--length";
    throw new UsageError(`${flags}: range offset ${offset} length ${length} does not fit the export of ${exported.length} bytes`);
  }
  using device = openDeviceOf(values["pci-addr"]);
  using pe = new ProgressEngine();
  using remote = Mmap.fromExport(new Uint8Array(Buffer.from(exported.descriptor, "base64")), device);
  using local = NativeMemory.alloc(length);
  if (input) local.bytes.set(input);
  using localMap = Mmap.create({ memory: local, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(2);
  using dma = new Dma(device, pe);
  const remoteEnd = { mmap: remote, address: remote.range.address + offset };
  const localEnd = { mmap: localMap, address: local.address };
  if (input) {
    await dmaTransfer({ dma, pe, inventory, from: localEnd, to: remoteEnd, length });
    print(`dma-transfer: wrote ${length} bytes to the peer at offset ${offset}`);
  } else {
    await dmaTransfer({ dma, pe, inventory, from: remoteEnd, to: localEnd, length });
    OutputFile.writeWhole(userPath(values.read!), values.read!, local.bytes, "dma-transfer", "--read");
    print(`dma-transfer: read ${length} bytes from the peer at offset ${offset} into ${values.read}`);
  }
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
