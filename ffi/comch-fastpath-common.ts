/**
 * What the Comch fast-path contexts share: options, the message shape, a set of registered buffers over one
 * NativeMemory, and waiting for a freshly started context to run.
 */
import { clearTimeout, setTimeout } from "node:timers";
import { doca } from "./library.ts";
import { check, TimeoutError } from "./errors.ts";
import { Access, CtxState } from "./constants.ts";
import { NativeMemory } from "./memory.ts";
import { Mmap } from "./mmap.ts";
import { type Buf, BufInventory } from "./buf.ts";
import type { CtxCore } from "./ctx.ts";
import type { PumpGate } from "./comch-endpoint.ts";
import type { ComchConnection } from "./comch-connection.ts";
import type { Device } from "./device.ts";
import type { ProgressEngine } from "./pe.ts";

export interface FastPathOptions {
  connection: ComchConnection;
  device: Device;
  pe: ProgressEngine;
  /** Bytes per buffer; default 4096. */
  bufferSize?: number;
  /** Buffers posted (consumer) or sends in flight (producer); default 16. */
  buffers?: number;
  /** Consumer: immediate-data bytes per message (doca_comch_consumer_set_imm_data_len), capped by the device; default 32. */
  immDataLength?: number;
  /** How long start-up may take; default 10 s. */
  timeoutMs?: number;
}

export interface FastPathMessage {
  bytes: Uint8Array;
  imm: Uint8Array;
  producerId?: number;
}

/** Buffers over one NativeMemory: memory, map, inventory, one Buf per slot (closed together). */
export class BufferSet {
  readonly memory: NativeMemory;
  readonly mmap: Mmap;
  readonly inventory: BufInventory;
  readonly bufs: Buf[];
  constructor(device: Device, readonly size: number, count: number) {
    this.memory = NativeMemory.alloc(size * count);
    try {
      this.mmap = Mmap.create({ memory: this.memory, permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE, devices: [device] });
      this.inventory = new BufInventory(count);
      this.bufs = Array.from({ length: count }, (_, i) => this.inventory.bufByAddr(this.mmap, this.memory.address + i * size, size));
    } catch (e) {
      this.memory.close();
      throw e;
    }
  }
  address(slot: number): number {
    return this.memory.address + slot * this.size;
  }
  close(): void {
    this.inventory.close();
    this.mmap.close();
    this.memory.close();
  }
}

/** Sets the consumer's immediate-data length (when DOCA has the setter) and returns what is in effect. */
export function configureImmLength(consumer: number, opts: FastPathOptions): number {
  const d = doca();
  const f = d.fns;
  let wanted = opts.immDataLength ?? 32;
  if (f.doca_comch_consumer_cap_get_max_imm_data_len) {
    d.scratch.clear(0);
    if (f.doca_comch_consumer_cap_get_max_imm_data_len(opts.device.devinfo, d.scratch.slot(0)) === 0) {
      wanted = Math.min(wanted, d.scratch.u32At(0));
    }
  }
  if (f.doca_comch_consumer_set_imm_data_len) {
    check(f.doca_comch_consumer_set_imm_data_len(consumer, wanted), "doca_comch_consumer_set_imm_data_len");
  }
  if (f.doca_comch_consumer_get_imm_data_len) {
    d.scratch.clear(0);
    if (f.doca_comch_consumer_get_imm_data_len(consumer, d.scratch.slot(0)) === 0) return d.scratch.u32At(0);
  }
  return wanted;
}

/** Waits until a freshly started context is RUNNING (producer/consumer starts may be asynchronous). */
export async function awaitRunning(core: CtxCore, gate: PumpGate, what: string, timeoutMs: number): Promise<void> {
  if (core.state === CtxState.RUNNING) return;
  gate.set(true);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} to start`, timeoutMs)), timeoutMs);
  });
  try {
    while (core.state !== CtxState.RUNNING) {
      await Promise.race([core.nextStateChange(), timeout]);
      if (core.state === CtxState.IDLE) throw new Error(`${what} failed to start`);
    }
  } finally {
    clearTimeout(timer);
    gate.set(false);
  }
}

