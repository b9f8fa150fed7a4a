#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read --allow-write
/**
 * Step: one DMA copy between a local buffer and a remote exported buffer (submit + wait through the progress
 * engine). Importable (`dmaTransfer`) and runnable: import a descriptor written by export-mmap.ts and read from or
 * write to the exporter's memory.
 *
 *   DOCA_SIM_SIDE=dpu deno run -A tasks/steps/dma-transfer.ts --descriptor desc.json --read out.bin
 *   DOCA_SIM_SIDE=dpu deno run -A tasks/steps/dma-transfer.ts --descriptor desc.json --write in.bin
 */
import { parseArgs } from "node:util";
import { readFileSync, writeFileSync } from "node:fs";
import { Buffer } from "node:buffer";
import process from "node:process";
import { BufInventory } from "../../ffi/buf.ts";
import { Access } from "../../ffi/constants.ts";
import { openDevice } from "../../ffi/device.ts";
import { Dma } from "../../ffi/dma.ts";
import { NativeMemory } from "../../ffi/memory.ts";
import { Mmap } from "../../ffi/mmap.ts";
import { ProgressEngine } from "../../ffi/pe.ts";
import { isMain, print, runMain } from "../common/main.ts";

export interface TransferEnd {
  mmap: Mmap;
  address: number;
}

/** Copies `length` bytes from `from` to `to` with one DMA memcpy task; buffers are released whatever happens. */
export async function dmaTransfer(opts: {
  dma: Dma;
  inventory: BufInventory;
  from: TransferEnd;
  to: TransferEnd;
  length: number;
}): Promise<void> {
  const { dma, inventory, from, to, length } = opts;
  if (length === 0) return; // DOCA buffers cannot be empty; nothing to move
  const src = inventory.bufByData(from.mmap, from.address, length);
  let dst;
  try {
    dst = inventory.bufByAddr(to.mmap, to.address, length);
  } catch (e) {
    src.close();
    throw e;
  }
  try {
    await dma.memcpy(src, dst);
  } finally {
    src.close();
    dst.close();
  }
}

const HELP = `Usage: dma-transfer --descriptor FILE (--read OUT | --write IN) [--offset N] [--length N] [-p PCI]

Imports a memory map exported by the peer (export-mmap.ts --out FILE writes the JSON this reads: base64
descriptor, address, length) and runs one DMA copy: --read copies the peer's bytes into OUT, --write copies IN's
bytes into the peer's memory (the export must allow PCI writes). Run it on the other side of the export (on the
software device: DOCA_SIM_SIDE=dpu for a host export). Prints what it moved.`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      descriptor: { type: "string" },
      read: { type: "string" },
      write: { type: "string" },
      offset: { type: "string" },
      length: { type: "string" },
      "pci-addr": { type: "string", short: "p" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return void print(HELP);
  if (!values.descriptor || (values.read === undefined) === (values.write === undefined)) {
    throw new Error("need --descriptor FILE and exactly one of --read OUT / --write IN (see --help)");
  }
  const exported = JSON.parse(readFileSync(values.descriptor, "utf8")) as { descriptor: string; address: number; length: number };
  const offset = Number(values.offset ?? 0);
  const input = values.write !== undefined ? new Uint8Array(readFileSync(values.write)) : undefined;
  const length = input ? input.length : Number(values.length ?? exported.length - offset);
  if (!(offset >= 0 && length > 0 && offset + length <= exported.length)) {
    throw new Error(`range offset ${offset} length ${length} does not fit the export of ${exported.length} bytes`);
  }
  using device = openDevice(values["pci-addr"]);
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
    await dmaTransfer({ dma, inventory, from: localEnd, to: remoteEnd, length });
    print(`wrote ${length} bytes to the peer at offset ${offset}`);
  } else {
    await dmaTransfer({ dma, inventory, from: remoteEnd, to: localEnd, length });
    writeFileSync(values.read!, local.bytes);
    print(`read ${length} bytes from the peer at offset ${offset} into ${values.read}`);
  }
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
