/**
 * DMA memcpy. Tasks are identified by a slot number carried in the task user data; per-slot arrays hold the
 * doca_task pointer and how to settle it, so the hot path allocates nothing but the Promise it returns (and
 * memcpyBatch one Promise per batch). Beyond maxTasks, submissions wait in a JS queue and go out as slots free.
 */
import { doca } from "./library.ts";
import { check, DocaError } from "./errors.ts";
import { DocaErrorCode } from "./constants.ts";
import { nativeCallbacks, type CtxOwner } from "./callbacks.ts";
import { CtxCore } from "./ctx.ts";
import { Resource, hex } from "./resource.ts";
import type { Device } from "./device.ts";
import type { ProgressEngine } from "./pe.ts";
import { Buf } from "./buf.ts";

type Settle = (error?: Error) => void;

interface Batch {
  remaining: number;
  error: Error | undefined;
  resolve: () => void;
  reject: (e: Error) => void;
}

type Native = number | bigint;

interface Queued {
  src: Native;
  dst: Native;
  resolve?: () => void;
  reject?: (e: Error) => void;
  batch?: Batch;
}

export interface DmaOptions {
  /** Tasks DOCA preallocates (and the most in flight at once); default 256. */
  maxTasks?: number;
}

/** Only a Buf from a BufInventory carries a live doca_buf; anything else would hand native code a forged pointer. */
function assertBuf(value: unknown, method: string, name: string): asserts value is Buf {
  if (!(value instanceof Buf)) {
    throw new TypeError(`Dma.${method}: ${name} must be a Buf from BufInventory.bufByAddr/bufByData, got ${describe(value)}`);
  }
}

function describe(value: unknown): string {
  if (value === null || typeof value !== "object") return String(value);
  return value.constructor?.name ?? "object";
}

export class Dma extends Resource implements CtxOwner {
  protected readonly kind = "Dma";
  readonly device: Device;
  readonly pe: ProgressEngine;
  readonly maxTasks: number;
  readonly #core: CtxCore;
  // Per-slot state (index = task user data).
  /** doca_task per slot, in native form (bigint on Deno) so completion frees it without conversions. */
  readonly #tasks: Native[];
  /** Slot numbers in native form, for the task user data argument. */
  readonly #slotNative: Native[];
  readonly #resolves: ((() => void) | undefined)[];
  readonly #rejects: (((e: Error) => void) | undefined)[];
  readonly #batches: (Batch | undefined)[];
  readonly #free: Int32Array;
  #freeTop: number;
  #inflight = 0;
  readonly #queue: Queued[] = [];
  // The Promise executor is shared (no closure per memcpy): it parks resolve/reject here for the caller.
  #nextResolve: () => void = () => {};
  #nextReject: (e: Error) => void = () => {};
  readonly #executor = (resolve: () => void, reject: (e: Error) => void) => {
    this.#nextResolve = resolve;
    this.#nextReject = reject;
  };

  constructor(device: Device, pe: ProgressEngine, opts: DmaOptions = {}) {
    const d = doca();
    const f = d.fns;
    const maxTasks = opts.maxTasks ?? 256;
    if (!device.info.caps.dmaMemcpy) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_dma_cap_task_memcpy_is_supported", device.info.pciAddr);
    }
    d.scratch.clear(0);
    check(f.doca_dma_create(device.handle, d.scratch.slot(0)), "doca_dma_create");
    const handle = d.scratch.u64(0);
    super(handle, [device, pe], (h) => doca().fns.doca_dma_destroy(h));
    this.device = device;
    this.pe = pe;
    this.maxTasks = maxTasks;
    this.#tasks = new Array(maxTasks).fill(0);
    this.#slotNative = Array.from({ length: maxTasks }, (_, i) => d.backend.native(i));
    this.#resolves = new Array(maxTasks).fill(undefined);
    this.#rejects = new Array(maxTasks).fill(undefined);
    this.#batches = new Array(maxTasks).fill(undefined);
    this.#free = new Int32Array(maxTasks);
    for (let i = 0; i < maxTasks; i++) this.#free[i] = maxTasks - 1 - i;
    this.#freeTop = maxTasks;
    let core: CtxCore | undefined;
    try {
      core = new CtxCore(f.doca_dma_as_ctx(handle), pe, this);
      const cbs = nativeCallbacks();
      check(f.doca_dma_task_memcpy_set_conf(handle, cbs.taskOk.address, cbs.taskError.address, maxTasks), "doca_dma_task_memcpy_set_conf");
      core.start();
    } catch (e) {
      core?.dispose();
      f.doca_dma_destroy(handle);
      this.abandon();
      throw e;
    }
    this.#core = core;
  }

  static caps(device: Device): { maxBufSize: number; maxBufListLen: number } {
    return { maxBufSize: device.info.caps.dmaMaxBufSize, maxBufListLen: device.info.caps.dmaMaxBufListLen };
  }

  /** Tasks submitted and not yet completed. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Copies src's data into dst (dst's data section becomes the copied bytes). Rejects with DocaError. */
  memcpy(src: Buf, dst: Buf): Promise<void> {
    assertBuf(src, "memcpy", "src");
    assertBuf(dst, "memcpy", "dst");
    const s = src.native;
    const t = dst.native;
    this.assertOpen();
    const promise = new Promise<void>(this.#executor);
    if (this.#freeTop > 0) this.#submit(s, t, this.#nextResolve, this.#nextReject, undefined);
    else this.#queue.push({ src: s, dst: t, resolve: this.#nextResolve, reject: this.#nextReject });
    return promise;
  }

  /** Submits every pair, resolves once all completed (rejects with the first failure after all settled). */
  memcpyBatch(pairs: Array<[Buf, Buf]>): Promise<void> {
    this.assertOpen();
    if (pairs.length === 0) return Promise.resolve();
    pairs.forEach(([s, t], i) => {
      assertBuf(s, "memcpyBatch", `pairs[${i}][0]`);
      assertBuf(t, "memcpyBatch", `pairs[${i}][1]`);
    });
    const handles = pairs.map(([s, t]) => [s.native, t.native]);
    return new Promise<void>((resolve, reject) => {
      const batch: Batch = { remaining: handles.length, error: undefined, resolve, reject };
      for (const [s, t] of handles) {
        if (this.#freeTop > 0) this.#submit(s, t, undefined, undefined, batch);
        else this.#queue.push({ src: s, dst: t, batch });
      }
    });
  }

  #submit(src: Native, dst: Native, resolve: (() => void) | undefined, reject: ((e: Error) => void) | undefined, batch: Batch | undefined): void {
    const d = doca();
    // Hot path: raw functions with pre-converted arguments (see Backend.native); nothing allocated here.
    const f = d.raw;
    const slot = this.#free[--this.#freeTop];
    const scratch = d.scratch;
    let rc = f.doca_dma_task_memcpy_alloc_init(this.native, src, dst, this.#slotNative[slot], scratch.slotNative(0));
    let fn = "doca_dma_task_memcpy_alloc_init";
    if (rc === 0) {
      const task = f.doca_dma_task_memcpy_as_task(scratch.u64Native(0));
      rc = f.doca_task_submit(task);
      if (rc === 0) {
        this.#tasks[slot] = task;
        this.#resolves[slot] = resolve;
        this.#rejects[slot] = reject;
        this.#batches[slot] = batch;
        if (this.#inflight++ === 0) this.pe.demand();
        else this.pe.kick();
        return;
      }
      f.doca_task_free(task);
      fn = "doca_task_submit";
    }
    this.#free[this.#freeTop++] = slot;
    this.#settle(new DocaError(rc, fn), resolve, reject, batch);
  }

  #settle(error: Error | undefined, resolve?: () => void, reject?: (e: Error) => void, batch?: Batch): void {
    if (batch) {
      if (error && !batch.error) batch.error = error;
      if (--batch.remaining === 0) {
        if (batch.error) batch.reject(batch.error);
        else batch.resolve();
      }
    } else if (error) reject!(error);
    else resolve!();
  }

  /** @internal DOCA's memcpy completion (success or error), from inside doca_pe_progress. */
  onTaskDone(_task: number, slot: number, ok: boolean): void {
    const f = doca().raw;
    const task = this.#tasks[slot];
    const error = ok ? undefined : new DocaError(f.doca_task_get_status(task), "doca_dma_task_memcpy");
    f.doca_task_free(task);
    const resolve = this.#resolves[slot], reject = this.#rejects[slot], batch = this.#batches[slot];
    this.#resolves[slot] = this.#rejects[slot] = this.#batches[slot] = undefined;
    this.#free[this.#freeTop++] = slot;
    if (--this.#inflight === 0) this.pe.release();
    this.#settle(error, resolve, reject, batch);
    // Refill from the queue now that a slot is free (DOCA allows submitting from a completion callback).
    const next = this.#queue.shift();
    if (next && !this.closed) this.#submit(next.src, next.dst, next.resolve, next.reject, next.batch);
  }

  /** @internal */
  onStateChanged(_prev: number, next: number): void {
    this.#core?.noteState(next);
  }

  /** Stops (flushing in-flight tasks, which reject) and destroys. Queued copies reject. */
  override close(): void {
    if (this.closed) return;
    const closedError = new Error("Dma closed before the copy was submitted");
    for (const q of this.#queue.splice(0)) this.#settle(closedError, q.resolve, q.reject, q.batch);
    super.close();
  }

  protected destroyNative(handle: number): void {
    const drained = this.#core.stopAndDrain();
    this.#core.dispose();
    if (this.#inflight > 0) {
      this.#inflight = 0;
      this.pe.release();
    }
    if (!drained) throw new Error("Dma.close: the context did not stop within 5 s");
    check(doca().fns.doca_dma_destroy(handle), "doca_dma_destroy");
  }

  protected summary(): string {
    return `${this.device.info.pciAddr} ${this.#core?.stateName ?? "?"} inflight=${this.#inflight} ${hex(this.handle)}`;
  }
}
