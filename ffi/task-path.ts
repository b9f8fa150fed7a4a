/**
 * The one task path every context kind uses (DMA memcpy, Comch send on server and client, producer send, consumer
 * post-recv): a slot table (the slot number travels in the task user data), alloc/init through the kind's hook,
 * submit, settle on completion or error, free, queueing beyond capacity, flush on stop, batches.
 *
 * A kind says only how to allocate and initialise its task (and, for receives, what a completion yields). DOCA's
 * doca_task_submit does not validate a task on hardware (errors arrive through the completion error callback); a
 * device may also refuse at submit. Both give the caller the same DocaError: the task kind's name and the code.
 *
 * Hot path: nothing is allocated per task besides the Promise the caller gets (the executor is shared; per-slot
 * state lives in preallocated arrays; the queue only grows beyond capacity). The objects a task uses (a and b, e.g.
 * the two Bufs of a memcpy) are held in the slot until it settles, so no finalizer can free them under the device.
 */
import { doca } from "./library.ts";
import { DocaError } from "./errors.ts";
import { DocaErrorCode } from "./constants.ts";
import type { ProgressEngine } from "./pe.ts";
import { setTimeout } from "node:timers";

export type Native = number | bigint;

/** What one kind of task tells the path. */
export interface TaskKind<A, B> {
  /** The task kind named in errors, e.g. "doca_dma_task_memcpy". */
  readonly taskName: string;
  /** The function whose failure means the task could not even be allocated, e.g. "doca_dma_task_memcpy_alloc_init". */
  readonly allocName: string;
  /**
   * Allocates and initialises one task for (a, b) with `slot` as its task user data; returns the doca_error_t and,
   * on success, leaves the doca_task (native form) in `task`.
   */
  allocInit(slot: number, a: A, b: B): number;
  task: Native;
  /** A request about to wait in the queue: return what is safe to keep (copy caller-owned bytes). */
  retain?(a: A, b: B): [A, B];
  /** Receive-style kinds: handle a completion before the task is freed (typedTask: what DOCA passed). */
  complete?(slot: number, typedTask: number, ok: boolean, a: A, b: B): void;
  /** A request without a Promise (post()) failed. */
  detachedError?(error: Error, a: A, b: B): void;
  /** DOCA_ERROR_AGAIN at submit means "full, try again after progress" for this kind (producer send). */
  readonly againMeansRetry?: boolean;
}

interface Batch {
  remaining: number;
  error: Error | undefined;
  resolve: () => void;
  reject: (e: Error) => void;
}

interface Queued<A, B> {
  a: A;
  b: B;
  resolve: (() => void) | undefined;
  reject: ((e: Error) => void) | undefined;
  batch: Batch | undefined;
}

export class TaskPath<A, B> {
  readonly capacity: number;
  readonly #kind: TaskKind<A, B>;
  readonly #pe: ProgressEngine;
  /** The hot-path functions, looked up once. */
  readonly #raw = doca().raw;
  // Per-slot state (index = task user data).
  readonly #tasks: Native[];
  readonly #a: (A | undefined)[];
  readonly #b: (B | undefined)[];
  readonly #resolves: ((() => void) | undefined)[];
  readonly #rejects: (((e: Error) => void) | undefined)[];
  readonly #batches: (Batch | undefined)[];
  readonly #free: Int32Array;
  #freeTop: number;
  #inflight = 0;
  readonly #queue: Queued<A, B>[] = [];
  #retrying = false;
  /** Set once the context stops: new work and queued work are refused with it. */
  #refused: Error | undefined;
  // The Promise executor is shared (no closure per task): it parks resolve/reject here for the caller.
  #nextResolve: () => void = () => {};
  #nextReject: (e: Error) => void = () => {};
  readonly #executor = (resolve: () => void, reject: (e: Error) => void) => {
    this.#nextResolve = resolve;
    this.#nextReject = reject;
  };

  constructor(kind: TaskKind<A, B>, pe: ProgressEngine, capacity: number) {
    this.#kind = kind;
    this.#pe = pe;
    this.capacity = capacity;
    this.#tasks = new Array(capacity).fill(0);
    this.#a = new Array(capacity).fill(undefined);
    this.#b = new Array(capacity).fill(undefined);
    this.#resolves = new Array(capacity).fill(undefined);
    this.#rejects = new Array(capacity).fill(undefined);
    this.#batches = new Array(capacity).fill(undefined);
    this.#free = new Int32Array(capacity);
    for (let i = 0; i < capacity; i++) this.#free[i] = capacity - 1 - i;
    this.#freeTop = capacity;
  }

  /** Tasks submitted and not yet completed. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Whether a submit now would go straight to DOCA (no queueing). */
  get canSubmitNow(): boolean {
    return this.#freeTop > 0 && this.#queue.length === 0 && !this.#retrying;
  }

  /** One task; resolves when it completed, rejects with DocaError (task kind, code) when it failed. */
  submit(a: A, b: B): Promise<void> {
    if (this.#refused) return Promise.reject(this.#refused);
    const promise = new Promise<void>(this.#executor);
    if (this.canSubmitNow) this.#start(a, b, this.#nextResolve, this.#nextReject, undefined);
    else this.#enqueue(a, b, this.#nextResolve, this.#nextReject, undefined);
    return promise;
  }

  /** Many tasks, one Promise: resolves once all completed, rejects with the first failure after all settled. */
  submitBatch(as: readonly A[], bs: readonly B[]): Promise<void> {
    if (this.#refused) return Promise.reject(this.#refused);
    if (as.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const batch: Batch = { remaining: as.length, error: undefined, resolve, reject };
      for (let i = 0; i < as.length; i++) {
        if (this.canSubmitNow) this.#start(as[i], bs[i], undefined, undefined, batch);
        else this.#enqueue(as[i], bs[i], undefined, undefined, batch);
      }
    });
  }

  /** A task nobody awaits (receive buffers): failures go to the kind's detachedError. */
  post(a: A, b: B): void {
    if (this.#refused) return;
    if (this.canSubmitNow) this.#start(a, b, undefined, undefined, undefined);
    else this.#enqueue(a, b, undefined, undefined, undefined);
  }

  #enqueue(a: A, b: B, resolve: (() => void) | undefined, reject: ((e: Error) => void) | undefined, batch: Batch | undefined): void {
    if (this.#kind.retain) [a, b] = this.#kind.retain(a, b);
    this.#queue.push({ a, b, resolve, reject, batch });
  }

  #start(a: A, b: B, resolve: (() => void) | undefined, reject: ((e: Error) => void) | undefined, batch: Batch | undefined): void {
    const kind = this.#kind;
    const raw = this.#raw;
    const slot = this.#free[--this.#freeTop];
    let error: Error;
    try {
      let rc = kind.allocInit(slot, a, b);
      if (rc === 0) {
        const task = kind.task;
        rc = raw.doca_task_submit(task);
        if (rc === 0) {
          this.#tasks[slot] = task;
          this.#a[slot] = a;
          this.#b[slot] = b;
          this.#resolves[slot] = resolve;
          this.#rejects[slot] = reject;
          this.#batches[slot] = batch;
          if (this.#inflight++ === 0) this.#pe.demand();
          else this.#pe.kick();
          return;
        }
        raw.doca_task_free(task);
        if (rc === DocaErrorCode.AGAIN && kind.againMeansRetry) {
          this.#free[this.#freeTop++] = slot;
          this.#retryLater(a, b, resolve, reject, batch);
          return;
        }
        error = new DocaError(rc, kind.taskName);
      } else {
        error = new DocaError(rc, kind.allocName);
      }
    } catch (e) {
      error = e instanceof Error ? e : new Error(String(e));
    }
    this.#free[this.#freeTop++] = slot;
    this.#settle(error, resolve, reject, batch, a, b);
  }

  /** DOCA said AGAIN (the peer's queue is full): keep the order, let the engine run, try the head again. */
  #retryLater(a: A, b: B, resolve: (() => void) | undefined, reject: ((e: Error) => void) | undefined, batch: Batch | undefined): void {
    if (this.#kind.retain) [a, b] = this.#kind.retain(a, b);
    this.#queue.unshift({ a, b, resolve, reject, batch });
    if (this.#retrying) return;
    this.#retrying = true;
    this.#pe.demand();
    setTimeout(() => {
      this.#retrying = false;
      this.#pe.release();
      this.#drain();
    }, 0);
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#freeTop > 0 && !this.#retrying && !this.#refused) {
      const next = this.#queue.shift()!;
      this.#start(next.a, next.b, next.resolve, next.reject, next.batch);
    }
  }

  #settle(
    error: Error | undefined,
    resolve: (() => void) | undefined,
    reject: ((e: Error) => void) | undefined,
    batch: Batch | undefined,
    a: A,
    b: B,
  ): void {
    if (batch) {
      if (error && !batch.error) batch.error = error;
      if (--batch.remaining === 0) {
        if (batch.error) batch.reject(batch.error);
        else batch.resolve();
      }
    } else if (reject) {
      if (error) reject(error);
      else resolve!();
    } else if (error) {
      this.#kind.detachedError?.(error, a, b);
    }
  }

  /**
   * The completion entry point (success or error), called from inside doca_pe_progress with what DOCA passed: the
   * task, its user data (our slot) and whether it succeeded.
   */
  onTaskDone(typedTask: number, slot: number, ok: boolean): void {
    const raw = this.#raw;
    const task = this.#tasks[slot];
    if (!task) return; // not ours (or already settled by a shutdown)
    const a = this.#a[slot]!, b = this.#b[slot]!;
    let error: Error | undefined = ok ? undefined : new DocaError(raw.doca_task_get_status(task), this.#kind.taskName);
    if (this.#kind.complete) {
      try {
        this.#kind.complete(slot, typedTask, ok, a, b);
      } catch (e) {
        error ??= e instanceof Error ? e : new Error(String(e));
      }
    }
    raw.doca_task_free(task);
    const resolve = this.#resolves[slot], reject = this.#rejects[slot], batch = this.#batches[slot];
    this.#tasks[slot] = 0;
    this.#a[slot] = undefined;
    this.#b[slot] = undefined;
    this.#resolves[slot] = this.#rejects[slot] = this.#batches[slot] = undefined;
    this.#free[this.#freeTop++] = slot;
    if (--this.#inflight === 0) this.#pe.release();
    this.#settle(error, resolve, reject, batch, a, b);
    // Refill from the queue now that a slot is free (DOCA allows submitting from a completion callback).
    if (this.#queue.length > 0) this.#drain();
  }

  /** The context is stopping: refuse new work and reject what waits in the queue (in-flight tasks get flushed). */
  refuse(reason: Error): void {
    this.#refused ??= reason;
    for (const q of this.#queue.splice(0)) this.#settle(reason, q.resolve, q.reject, q.batch, q.a, q.b);
  }

  /** The context is IDLE: anything DOCA did not flush is settled with `reason` (its task is gone with the ctx). */
  shutdown(reason: Error): void {
    this.refuse(reason);
    for (let slot = 0; slot < this.capacity; slot++) {
      if (!this.#tasks[slot]) continue;
      const resolve = this.#resolves[slot], reject = this.#rejects[slot], batch = this.#batches[slot];
      const a = this.#a[slot]!, b = this.#b[slot]!;
      this.#tasks[slot] = 0;
      this.#a[slot] = undefined;
      this.#b[slot] = undefined;
      this.#resolves[slot] = this.#rejects[slot] = this.#batches[slot] = undefined;
      this.#settle(reason, resolve, reject, batch, a, b);
    }
    if (this.#inflight > 0) {
      this.#inflight = 0;
      this.#pe.release();
    }
  }
}
