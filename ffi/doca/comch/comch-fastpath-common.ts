/**
 * What the Comch fast-path contexts share: options, the message shape, a set of registered buffers over one
 * NativeMemory, the immediate-data length, and the context plumbing (created on a connection, its child).
 */
import { doca } from "../../native/library.ts";
import { check } from "../../native/errors.ts";
import { Access } from "../../native/constants.ts";
import { NativeMemory } from "../common/memory.ts";
import { Mmap } from "../common/mmap.ts";
import { type Buf, BufInventory } from "../common/buf.ts";
import { duration, integerIn } from "../../engine/validate.ts";
import type { ComchConnection } from "./comch-connection.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";

export interface FastPathOptions {
  /** Bytes per buffer; default 4096. */
  bufferSize?: number;
  /** Buffers posted (consumer) or sends in flight (producer); default 16. */
  buffers?: number;
  /** Consumer: immediate-data bytes per message (doca_comch_consumer_set_imm_data_len), capped by the device; default 32. */
  immDataLength?: number;
  /** How long start-up may take; default 10 s. */
  timeoutMs?: number;
}

/** The static create() form: the connection to create on (device and engine are the connection's). */
export interface FastPathCreateOptions extends FastPathOptions {
  connection: ComchConnection;
  /** Accepted for compatibility; must be the connection's device when given. */
  device?: Device;
  /** Accepted for compatibility; must be the connection's engine when given. */
  pe?: unknown;
}

export interface FastPathMessage {
  bytes: Uint8Array;
  imm: Uint8Array;
  producerId?: number;
}

/** Checks options before anything native exists. */
export function checkFastPathOptions(where: string, opts: FastPathOptions): { bufferSize: number; buffers: number } {
  integerIn(where, "bufferSize", opts.bufferSize, 1, 1 << 30);
  integerIn(where, "buffers", opts.buffers, 1, 4096);
  integerIn(where, "immDataLength", opts.immDataLength, 0, 1 << 16);
  duration(where, "timeoutMs", opts.timeoutMs);
  return { bufferSize: opts.bufferSize ?? 4096, buffers: opts.buffers ?? 16 };
}

/** The connection of a static create() call, checking that device/pe (if given) are the connection's own. */
export function connectionOf(where: string, opts: FastPathCreateOptions): ComchConnection {
  const conn = opts.connection;
  if (opts.device !== undefined && opts.device !== conn.device) throw new Error(`${where}: device must be the connection's device`);
  if (opts.pe !== undefined && opts.pe !== conn.pe) throw new Error(`${where}: pe must be the connection's progress engine`);
  return conn;
}

/**
 * A producer's or consumer's static create(): the options' connection creates it; a check that throws (options that
 * do not fit the connection) comes back as a rejected promise like the connection's own failures.
 */
export function createOnConnection<T>(where: string, opts: FastPathCreateOptions, create: (connection: ComchConnection) => Promise<T>): Promise<T> {
  try {
    return create(connectionOf(where, opts));
  } catch (e) {
    return Promise.reject(e);
  }
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
export function configureImmLength(consumer: number, device: Device, opts: FastPathOptions): number {
  const d = doca();
  const f = d.fns;
  let wanted = opts.immDataLength ?? 32;
  if (f.doca_comch_consumer_cap_get_max_imm_data_len) {
    d.scratch.clear(0);
    if (f.doca_comch_consumer_cap_get_max_imm_data_len(device[DEVINFO], d.scratch.slot(0)) === 0) {
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
