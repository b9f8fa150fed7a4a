/**
 * What the Comch server and client share: the ctx, the send path (messages staged in a native slab, one slot per
 * send task, the slot number in the task user data), copying received messages out, and pump bookkeeping.
 */
import { doca, mapPages, loadLibc } from "./library.ts";
import { check, DocaError } from "./errors.ts";
import { DocaErrorCode } from "./constants.ts";
import { connectionOwners, type CtxOwner } from "./callbacks.ts";
import type { ProgressEngine } from "./pe.ts";

type AllocFn = "doca_comch_server_task_send_alloc_init" | "doca_comch_client_task_send_alloc_init";

interface PendingSend {
  connection: number;
  bytes: Uint8Array;
  resolve: () => void;
  reject: (e: Error) => void;
}

export class SendPath {
  readonly slots: number;
  readonly slotSize: number;
  readonly #slab: number;
  readonly #slabBytes: Uint8Array;
  readonly #free: number[];
  readonly #tasks: number[];
  readonly #settle: (PendingSend | undefined)[];
  readonly #queue: PendingSend[] = [];
  #inflight = 0;

  constructor(
    readonly owner: { readonly handle: number; readonly pe: ProgressEngine },
    readonly allocFn: AllocFn,
    slots: number,
    slotSize: number,
  ) {
    this.slots = slots;
    this.slotSize = slotSize;
    this.#slab = mapPages(slots * slotSize);
    this.#slabBytes = new Uint8Array(doca().backend.view(this.#slab, slots * slotSize));
    this.#free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
    this.#tasks = new Array(slots).fill(0);
    this.#settle = new Array(slots).fill(undefined);
  }

  get inflight(): number {
    return this.#inflight;
  }

  send(connection: number, bytes: Uint8Array): Promise<void> {
    if (bytes.length > this.slotSize) {
      return Promise.reject(
        new DocaError(DocaErrorCode.TOO_BIG, this.allocFn, `message of ${bytes.length} bytes > max ${this.slotSize}`),
      );
    }
    return new Promise((resolve, reject) => {
      const pending = { connection, bytes, resolve, reject };
      if (this.#free.length > 0) this.#submit(pending);
      else this.#queue.push(pending);
    });
  }

  #submit(p: PendingSend): void {
    const d = doca();
    const f = d.fns;
    const slot = this.#free.pop()!;
    const address = this.#slab + slot * this.slotSize;
    this.#slabBytes.set(p.bytes, slot * this.slotSize);
    d.scratch.clear(0);
    let rc = f[this.allocFn](this.owner.handle, p.connection, address, p.bytes.length, d.scratch.slot(0));
    let fn: string = this.allocFn;
    if (rc === 0) {
      const task = f.doca_comch_task_send_as_task(d.scratch.u64(0));
      f.doca_task_set_user_data(task, slot);
      rc = f.doca_task_submit(task);
      if (rc === 0) {
        this.#tasks[slot] = task;
        this.#settle[slot] = p;
        if (this.#inflight++ === 0) this.owner.pe.demand();
        else this.owner.pe.kick();
        return;
      }
      f.doca_task_free(task);
      fn = "doca_task_submit";
    }
    this.#free.push(slot);
    p.reject(new DocaError(rc, fn));
  }

  /** A send task completed (inside progress). */
  done(slot: number, ok: boolean): void {
    const f = doca().fns;
    const task = this.#tasks[slot];
    const p = this.#settle[slot];
    if (!task || !p) return;
    const error = ok ? undefined : new DocaError(f.doca_task_get_status(task), "doca_comch_task_send");
    f.doca_task_free(task);
    this.#tasks[slot] = 0;
    this.#settle[slot] = undefined;
    this.#free.push(slot);
    if (--this.#inflight === 0) this.owner.pe.release();
    if (error) p.reject(error);
    else p.resolve();
    const next = this.#queue.shift();
    if (next) this.#submit(next);
  }

  /** Rejects queued sends and forgets in-flight accounting (after the ctx stopped). */
  shutdown(reason: Error): void {
    for (const p of this.#queue.splice(0)) p.reject(reason);
    if (this.#inflight > 0) {
      this.#inflight = 0;
      this.owner.pe.release();
    }
  }

  free(): void {
    loadLibc().libc.munmap(this.#slab, this.slots * this.slotSize);
  }
}

/** Copies a message out of DOCA's receive buffer (valid only during the callback). */
export function copyMessage(buffer: number, length: number): Uint8Array {
  return new Uint8Array(doca().backend.view(buffer, length)).slice();
}

/** Pump bookkeeping: one pe.demand() per outstanding waiter. */
export class PumpGate {
  #count = 0;
  constructor(private readonly pe: ProgressEngine) {}
  set(on: boolean): void {
    if (on) {
      this.#count++;
      this.pe.demand();
    } else if (this.#count > 0) {
      this.#count--;
      this.pe.release();
    }
  }
  drop(): void {
    while (this.#count > 0) this.set(false);
  }
}

export function registerConnection(connection: number, owner: CtxOwner): void {
  connectionOwners.set(connection, owner);
}

export function forgetConnection(connection: number): void {
  connectionOwners.delete(connection);
}

export function checkName(name: string, devinfo: number): void {
  const d = doca();
  const getMax = d.fns.doca_comch_cap_get_max_name_len;
  if (!getMax) return;
  d.scratch.clear(0);
  check(getMax(devinfo, d.scratch.slot(0)), "doca_comch_cap_get_max_name_len");
  const max = d.scratch.u32At(0);
  if (max && new TextEncoder().encode(name).length + 1 > max) {
    throw new DocaError(DocaErrorCode.INVALID_VALUE, "doca_comch_cap_get_max_name_len", `server name "${name}" longer than ${max - 1} bytes`);
  }
}

/** Comch sizes are uint32_t in DOCA: refuse anything that would wrap or truncate on the way to C. */
export function checkSizes(where: string, sizes: Record<string, number | undefined>): void {
  for (const [name, value] of Object.entries(sizes)) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1 || value > 0xffff_ffff) {
      throw new RangeError(`${where}: ${name} must be an integer from 1 to 4294967295, got ${value}`);
    }
  }
}
