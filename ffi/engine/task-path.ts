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
 *
 * A context's CtxCore creates its paths (CtxCore.addTasks: a context = core + task kinds) and is their completion
 * target: the ctx user data names the core's paths, the task user data (set here) the path and slot, so a completion
 * lands in onTaskDone here straight from the bridge (callbacks.ts), and the core refuses/shuts down its paths when
 * the context stops. Kinds set no user data and relay nothing.
 *
 * Fast path (issue 13), for every kind alike:
 * - completions: completionCallbacks() gives the context's *_set_conf the native completion ring's callbacks when
 *   the ring has room for this path's capacity (else the JS ones); ProgressEngine.progress() drains the ring after
 *   each doca_pe_progress (callbacks.ts drainCompletions), which lands in onTaskDone here, as a JS callback would.
 * - task reuse: a kind with a `rearm` hook keeps its task in the slot after completion and re-arms it for the next
 *   request (DOCA allows resubmitting a completed task); kept tasks are freed when the context is asked to stop
 *   (refuse()), and from then on completed tasks are freed at once. Kinds without `rearm` alloc/free per task.
 * - batches: a kind with `submitMany` submits a batch's first free-slot-full of requests in one go (DMA: native
 *   call loops, three FFI calls per batch); the rest and any failure take the per-task path.
 * - counted groups: with the ring, such a batch chunk is submitted as this path's one counted group: its tasks carry
 *   the path's ring counter in their user data (completion-ring.ts), so their successes only count, and one read of
 *   the counter per drain settles them all (onCounted); the group's slots go back to the free stack together, in
 *   submission order, when its last member settled. Failures are recorded with their slot and settle per slot.
 *   One group per path at a time; other batches meanwhile take per-slot completions.
 */
import { doca } from "../native/library.ts";
import { DocaError } from "../native/errors.ts";
import { DocaErrorCode } from "../native/constants.ts";
import type { ProgressEngine } from "./pe.ts";
import { setImmediate, setTimeout } from "node:timers";
import { type CompletionCallbacks, completionCallbacks, type CountedTarget, TASK_PATH_SPAN } from "./callbacks.ts";
import { COUNTED_TAG } from "../native/completion-ring.ts";

/** Retries of a DOCA_ERROR_AGAIN streak made on the next event-loop turn before falling back to timers. */
const AGAIN_QUICK_RETRIES = 64;

export type Native = number | bigint;

/** What one kind of task tells the path. */
export interface TaskKind<A, B> {
  /** The task kind named in errors, e.g. "doca_dma_task_memcpy". */
  readonly taskName: string;
  /** The function whose failure means the task could not even be allocated, e.g. "doca_dma_task_memcpy_alloc_init". */
  readonly allocName: string;
  /**
   * Allocates and initialises one task for (a, b) in `slot` (the path then sets its task user data); returns the
   * doca_error_t and, on success, leaves the doca_task (native form) in `task`.
   */
  allocInit(slot: number, a: A, b: B): number;
  task: Native;
  /** A request about to wait in the queue: return what is safe to keep (copy caller-owned bytes). */
  retain?(a: A, b: B): [A, B];
  /** Receive-style kinds: handle a completion before the task is freed (typedTask: what DOCA passed). */
  complete?(slot: number, typedTask: number, ok: boolean, a: A, b: B): void;
  /** What one task is called in "closed before/while" errors, e.g. "copy", "message". */
  readonly noun: string;
  /** A request without a Promise (post()) failed. */
  detachedError?(error: Error, a: A, b: B): void;
  /** DOCA_ERROR_AGAIN at submit means "full, try again after progress" for this kind (producer send). */
  readonly againMeansRetry?: boolean;
  /**
   * Task reuse: re-arms the slot's kept task (the one its last allocInit made, already completed) for (a, b);
   * returns the doca_error_t. Present only where DOCA lets a kind's task be re-armed through setters (DMA memcpy, SHA
   * hash, EC create, AES-GCM encrypt/decrypt; AllocKind's Rearming).
   */
  rearm?(slot: number, a: A, b: B): number;
  /**
   * Batch submit: `slots[0..n)` are free slots that all hold a kept (armed for something) task, `as[0..n)`/`bs` the
   * requests (and `handles`, when the caller read them, their native handles as plain numbers); re-arm and submit
   * them in order, return how many were submitted (a failure stops there; the path retries that request on the
   * per-task path, which reports its error). `again`: the same slots and requests as the kind's previous call, which
   * submitted all of them (the kind may skip re-reading what it wrote then).
   */
  submitMany?(slots: Int32Array, n: number, as: readonly A[], bs: readonly B[], handles?: BatchHandles, again?: boolean): number;
}

/** A batch's requests as plain-number handles, read once by the caller (memcpyBatch: one getter per Buf). */
export interface BatchHandles {
  readonly a: ArrayLike<number>;
  readonly b: ArrayLike<number>;
}

interface Batch {
  remaining: number;
  error: Error | undefined;
  resolve: () => void;
  reject: (e: Error) => void;
  /** The batch's requests: held here once, not per slot, until the batch settles (no finalizer frees them). */
  readonly as: readonly unknown[];
  readonly bs: readonly unknown[];
}

interface Queued<A, B> {
  a: A;
  b: B;
  resolve: (() => void) | undefined;
  reject: ((e: Error) => void) | undefined;
  batch: Batch | undefined;
}

export class TaskPath<A, B> implements CountedTarget {
  readonly capacity: number;
  /** Added to the slot in the task user data: this path's index in its context (see TASK_PATH_SPAN). */
  readonly #tag: number;
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
  /** 1 while the slot's task is submitted (#tasks may also hold a kept, completed task for reuse). */
  readonly #busy: Uint8Array;
  readonly #reuse: boolean;
  /** Completion callbacks given to DOCA (ring or JS); the ring reservation is returned at shutdown. */
  #callbacks: CompletionCallbacks | undefined;
  readonly #free: Int32Array;
  /** Scratch for #startMany: the slots of one batch in submission order. */
  readonly #order: Int32Array;
  #freeTop: number;
  #inflight = 0;
  readonly #queue: Queued<A, B>[] = [];
  #retrying = false;
  /** The ctx owner id (callbacks.ts) a failure in a counted drain goes to. */
  readonly #owner: number;
  /** The ring counter of this path's counted group, or -1 (no ring, no counter free, or no batch kind). */
  #counter = -1;
  /** Per slot: its task's own user data (the path's tag + slot) in native form, made once (a BigInt on Deno). */
  readonly #slotUserData: Native[];
  /** Per slot: 1 while its task's user data is the counted one (COUNTED_TAG + counter, see completion-ring.ts). */
  readonly #countedTag: Uint8Array;
  /** The counted group in flight: its slots in submission order, its size (0: none), how many settled, its batch. */
  readonly #groupSlots: Int32Array;
  #groupSize = 0;
  #groupDone = 0;
  #groupBatch: Batch | undefined;
  /**
   * The request arrays and size of the last counted group, while its slots are untouched since (any other use of a
   * slot clears them): a batch with the same arrays is submitted again without per-slot checks (#startMany).
   */
  #lastGroupAs: readonly A[] | undefined;
  #lastGroupBs: readonly B[] | undefined;
  #lastGroupSize = 0;
  /** Set once the context stops: new work and queued work are refused with it. */
  #refused: Error | undefined;
  // The Promise executor is shared (no closure per task): it parks resolve/reject here for the caller.
  #nextResolve: () => void = () => {};
  #nextReject: (e: Error) => void = () => {};
  readonly #executor = (resolve: () => void, reject: (e: Error) => void) => {
    this.#nextResolve = resolve;
    this.#nextReject = reject;
  };

  /** Made by CtxCore.addTasks (index: the path's place among its context's paths). */
  constructor(kind: TaskKind<A, B>, pe: ProgressEngine, capacity: number, index = 0, owner = 0) {
    if (!(capacity >= 1 && capacity <= TASK_PATH_SPAN)) throw new RangeError(`TaskPath: capacity ${capacity} out of range`);
    this.#tag = index * TASK_PATH_SPAN;
    this.#kind = kind;
    this.#pe = pe;
    this.capacity = capacity;
    this.#tasks = new Array(capacity).fill(0);
    this.#a = new Array(capacity).fill(undefined);
    this.#b = new Array(capacity).fill(undefined);
    this.#resolves = new Array(capacity).fill(undefined);
    this.#rejects = new Array(capacity).fill(undefined);
    this.#batches = new Array(capacity).fill(undefined);
    this.#busy = new Uint8Array(capacity);
    this.#reuse = typeof kind.rearm === "function";
    this.#free = new Int32Array(capacity);
    this.#order = new Int32Array(capacity);
    this.#owner = owner;
    this.#countedTag = new Uint8Array(capacity);
    this.#slotUserData = Array.from({ length: capacity }, (_, slot) => this.#native(this.#tag + slot));
    this.#groupSlots = new Int32Array(kind.submitMany ? capacity : 0);
    for (let i = 0; i < capacity; i++) this.#free[i] = capacity - 1 - i;
    this.#freeTop = capacity;
  }

  /**
   * The completion callbacks this path's context gives its *_set_conf (call once, before starting the context):
   * the native ring's when it has room for `capacity` tasks, else the JS callbacks.
   */
  completionCallbacks(): CompletionCallbacks {
    if (!this.#callbacks) {
      const k = this.#kind;
      const batches = k.submitMany !== undefined && this.#reuse && k.complete === undefined;
      this.#callbacks = completionCallbacks(this.capacity, batches ? { path: this, owner: this.#owner } : undefined);
      this.#counter = this.#callbacks.counter;
    }
    return this.#callbacks;
  }

  /** Returns the ring reservation: the context is IDLE or was never started (idempotent). */
  releaseCallbacks(): void {
    this.#callbacks?.release();
  }

  /** Whether completions of this path come through the native ring. */
  get usesRing(): boolean {
    return this.#callbacks?.ring === true;
  }

  /** Whether batches settle as counted groups (a ring counter is this path's). */
  get countsBatches(): boolean {
    return this.#counter >= 0;
  }

  /** What one task is called in errors (the kind's noun). */
  get noun(): string {
    return this.#kind.noun;
  }

  /** Tasks submitted and not yet completed. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Completed tasks kept in their slots for reuse (live DOCA tasks until the context stops; kinds with rearm). */
  get kept(): number {
    let n = 0;
    for (let slot = 0; slot < this.capacity; slot++) if (this.#tasks[slot] !== 0 && this.#busy[slot] === 0) n++;
    return n;
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
    if (this.#freeTop > 0 && this.#queue.length === 0 && !this.#retrying) this.#start(a, b, this.#nextResolve, this.#nextReject, undefined);
    else this.#enqueue(a, b, this.#nextResolve, this.#nextReject, undefined);
    return promise;
  }

  /** Many tasks, one Promise: resolves once all completed, rejects with the first failure after all settled. */
  submitBatch(as: readonly A[], bs: readonly B[], handles?: BatchHandles): Promise<void> {
    if (this.#refused) return Promise.reject(this.#refused);
    if (as.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const batch: Batch = { remaining: as.length, error: undefined, resolve, reject, as, bs };
      let i = this.#kind.submitMany && this.canSubmitNow ? this.#startMany(as, bs, batch, handles) : 0;
      for (; i < as.length; i++) {
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

  /**
   * Batch fast path: the first min(n, free slots) requests go to the kind's submitMany in one go. Pair k takes the
   * k-th of the top n free slots in completion order, so a batch that repeats the previous one finds its tasks
   * armed as it needs them. Slots without a task get one first (allocInit). Returns
   * how many requests were submitted; the caller takes the rest through the per-task path.
   */
  #startMany(as: readonly A[], bs: readonly B[], batch: Batch, handles: BatchHandles | undefined): number {
    const kind = this.#kind;
    const n = Math.min(as.length, this.#freeTop);
    if (n < 2) return 0;
    const free = this.#free;
    const base = this.#freeTop - n;
    // The counted group again: the same request arrays as the last group, which all went out, and no slot used
    // since it ended, so the top of the free stack is its slots in order, each armed, tagged and allocated for its
    // pair: nothing per slot to check (memcpyBatch hands the same arrays only for the same Bufs, none closed).
    const again = as === this.#lastGroupAs && bs === this.#lastGroupBs && n === this.#lastGroupSize && this.#groupSize === 0 && !this.#refused;
    this.#lastGroupAs = this.#lastGroupBs = undefined;
    const counted = this.#counter >= 0 && this.#groupSize === 0 && !this.#refused;
    let order = this.#order, ready = n;
    if (again) {
      order = this.#groupSlots;
    } else {
      // The n slots under the top of the free stack, oldest-freed first: completions push slots in completion order,
      // so a batch that repeats the previous one gets back, pair by pair, the tasks armed with its own buffers.
      for (let k = 0; k < n; k++) order[k] = free[base + k];
      for (ready = 0; ready < n; ready++) {
        const slot = order[ready];
        if (this.#tasks[slot] !== 0) continue;
        let rc: number;
        try {
          rc = kind.allocInit(slot, as[ready], bs[ready]);
        } catch {
          rc = -1;
        }
        if (rc !== 0) break; // the per-task path allocates again and reports the failure
        this.#tasks[slot] = this.#tagged(kind.task, slot);
      }
      if (ready < 2) return 0;
      // A counted group when none is in flight: each task's user data says counted or not (set only on a change).
      const tags = this.#countedTag, want = counted ? 1 : 0;
      for (let k = 0; k < ready; k++) if (tags[order[k]] !== want) this.#retag(order[k], counted);
    }
    let submitted: number;
    try {
      submitted = kind.submitMany!(order, ready, as, bs, handles, again);
    } catch {
      submitted = 0;
    }
    if (submitted === 0) return 0;
    // Per slot only what the completion needs: the batch holds the requests (a, b) for all of its slots, and a free
    // slot's a, b, resolve and reject are already undefined. Kinds that read a/b at completion get them per slot.
    // A counted group's batch is the group's (onTaskDone and shutdown find it there).
    const busy = this.#busy;
    for (let k = 0; k < submitted; k++) busy[order[k]] = 1;
    if (counted) {
      if (!again) this.#groupSlots.set(order.subarray(0, submitted));
      this.#groupSize = submitted;
      this.#groupDone = 0;
      this.#groupBatch = batch;
      if (submitted === n) {
        this.#lastGroupAs = as;
        this.#lastGroupBs = bs;
        this.#lastGroupSize = n;
      }
    } else {
      const batches = this.#batches;
      for (let k = 0; k < submitted; k++) batches[order[k]] = batch;
    }
    if (kind.complete) {
      for (let k = 0; k < submitted; k++) {
        this.#a[order[k]] = as[k];
        this.#b[order[k]] = bs[k];
      }
    }
    // The slots not submitted stay free, in the same order.
    let top = base;
    for (let k = submitted; k < n; k++) free[top++] = order[k];
    this.#freeTop = top;
    // Counted before demand(): a pump that starts now runs progress at once, and its completions count down.
    const wasIdle = this.#inflight === 0;
    this.#inflight += submitted;
    if (wasIdle) this.#pe.demand();
    else this.#pe.kick();
    return submitted;
  }

  /**
   * A freshly allocated task: its user data names this path and slot (the completion's way back). The task must be
   * in native form (a kind gets it from a raw function): a plain number on Deno, where raw functions take bigint,
   * sent every submit and completion of the path down V8's deoptimize/re-optimize loop ("not a BigInt"), which cost
   * Comch 30 % of its message rate.
   */
  #tagged(task: Native, slot: number): Native {
    if ((typeof task === "bigint") !== this.#nativeIsBigint) throw new TypeError(`${this.#kind.allocName}: the task is not in native form (${typeof task})`);
    this.#raw.doca_task_set_user_data(task, this.#slotUserData[slot]);
    this.#countedTag[slot] = 0;
    return task;
  }

  /** Sets a kept task's user data to the counted one (this path's counter) or back to the per-slot one. */
  #retag(slot: number, counted: boolean): void {
    const data = counted ? this.#native(COUNTED_TAG + this.#counter * TASK_PATH_SPAN + slot) : this.#slotUserData[slot];
    this.#raw.doca_task_set_user_data(this.#tasks[slot], data);
    this.#countedTag[slot] = counted ? 1 : 0;
  }

  readonly #native = doca().backend.native;
  readonly #nativeIsBigint = typeof doca().backend.native(1) === "bigint";

  #enqueue(a: A, b: B, resolve: (() => void) | undefined, reject: ((e: Error) => void) | undefined, batch: Batch | undefined): void {
    if (this.#kind.retain) [a, b] = this.#kind.retain(a, b);
    this.#queue.push({ a, b, resolve, reject, batch });
  }

  #start(a: A, b: B, resolve: (() => void) | undefined, reject: ((e: Error) => void) | undefined, batch: Batch | undefined): void {
    const kind = this.#kind;
    const raw = this.#raw;
    const slot = this.#free[--this.#freeTop];
    this.#lastGroupAs = undefined; // a slot used one by one: the free stack no longer ends with the last group
    let error: Error;
    try {
      let task = this.#tasks[slot];
      let rc: number;
      if (task !== 0) {
        if (this.#countedTag[slot] === 1) this.#retag(slot, false); // it served a counted group: per-slot again
        rc = kind.rearm!(slot, a, b); // a kept task (only kinds with rearm keep them)
      } else {
        rc = kind.allocInit(slot, a, b);
        if (rc === 0) task = this.#tagged(kind.task, slot);
      }
      if (rc === 0) {
        rc = raw.doca_task_submit(task);
        if (rc === 0) {
          this.#againStreak = 0;
          this.#tasks[slot] = task;
          this.#busy[slot] = 1;
          this.#a[slot] = a;
          this.#b[slot] = b;
          this.#resolves[slot] = resolve;
          this.#rejects[slot] = reject;
          this.#batches[slot] = batch;
          if (this.#inflight++ === 0) this.#pe.demand();
          else this.#pe.kick();
          return;
        }
        // A task DOCA refused is still ours: free it (a kept one too; the slot allocates afresh next time).
        raw.doca_task_free(task);
        this.#tasks[slot] = 0;
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
    // A busy peer usually makes room within microseconds: the first retries of a streak come on the next
    // event-loop turn; then a timer (≥ 1 ms on Node and Deno), so a peer that never makes room is not spun on.
    // (Timers only, 1 ms per retry, held two JavaScript peers to 44k 4 KiB messages/s.)
    if (this.#againStreak++ < AGAIN_QUICK_RETRIES) setImmediate(this.#retryNow);
    else setTimeout(this.#retryNow, 0);
  }

  /** Consecutive AGAIN retries since the last submit DOCA took. */
  #againStreak = 0;

  readonly #retryNow = (): void => {
    this.#retrying = false;
    this.#pe.release();
    this.#drain();
  };

  #drain(): void {
    const queue = this.#queue;
    while (queue.length > 0 && this.#freeTop > 0 && !this.#retrying && !this.#refused) {
      const batch = queue[0].batch;
      if (batch !== undefined && this.#kind.submitMany && this.#freeTop >= 2 && queue.length >= 2 && queue[1].batch === batch) {
        // Queued members of one batch (it had more requests than free slots) go out together, like its first ones.
        const max = Math.min(queue.length, this.#freeTop);
        let m = 2;
        while (m < max && queue[m].batch === batch) m++;
        const as: A[] = new Array(m), bs: B[] = new Array(m);
        for (let k = 0; k < m; k++) {
          as[k] = queue[k].a;
          bs[k] = queue[k].b;
        }
        const started = this.#startMany(as, bs, batch, undefined);
        if (started > 0) {
          queue.splice(0, started);
          continue;
        }
      }
      const next = queue.shift()!;
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
    if (this.#busy[slot] !== 1) return; // not ours (or already settled by a shutdown)
    if (this.#countedTag[slot] === 1 && this.#groupSize > 0) {
      // A counted group's member that failed (a success would only have been counted): it settles with the group.
      const error = ok ? undefined : new DocaError(raw.doca_task_get_status(this.#tasks[slot]), this.#kind.taskName);
      if (error && !this.#groupBatch!.error) this.#groupBatch!.error = error;
      this.onCounted(1);
      return;
    }
    const batch = this.#batches[slot];
    if (ok && batch !== undefined && this.#reuse && !this.#refused && this.#kind.complete === undefined) {
      // A batch member that succeeded (memcpyBatch): its task stays armed in the slot, nothing per slot to clear but
      // the batch reference; the batch settles when its last member does.
      this.#busy[slot] = 0;
      this.#batches[slot] = undefined;
      this.#free[this.#freeTop++] = slot;
      if (--this.#inflight === 0) this.#pe.release();
      if (--batch.remaining === 0) {
        if (batch.error) batch.reject(batch.error);
        else batch.resolve();
      }
      if (this.#queue.length > 0) this.#drain();
      return;
    }
    const task = this.#tasks[slot];
    const a = this.#a[slot]!, b = this.#b[slot]!;
    let error: Error | undefined = ok ? undefined : new DocaError(raw.doca_task_get_status(task), this.#kind.taskName);
    if (this.#kind.complete) {
      try {
        this.#kind.complete(slot, typedTask, ok, a, b);
      } catch (e) {
        error ??= e instanceof Error ? e : new Error(String(e));
      }
    }
    this.#busy[slot] = 0;
    // Reuse: the task stays in the slot for its next request, unless the context is stopping (or the kind cannot).
    if (!this.#reuse || this.#refused) {
      raw.doca_task_free(task);
      this.#tasks[slot] = 0;
    }
    const resolve = this.#resolves[slot], reject = this.#rejects[slot];
    this.#a[slot] = undefined;
    this.#b[slot] = undefined;
    this.#resolves[slot] = this.#rejects[slot] = this.#batches[slot] = undefined;
    this.#free[this.#freeTop++] = slot;
    if (--this.#inflight === 0) this.#pe.release();
    this.#settle(error, resolve, reject, batch, a, b);
    // Refill from the queue now that a slot is free (DOCA allows submitting from a completion callback).
    if (this.#queue.length > 0) this.#drain();
  }

  /**
   * `settled` members of the counted group in flight completed (successes the ring counted, or one failure). When the
   * last has, the group's slots go back to the free stack together, in submission order (the next batch of the same
   * pairs finds its tasks armed), and queued work may start.
   */
  onCounted(settled: number): void {
    const batch = this.#groupBatch;
    if (batch === undefined) return; // settled by a shutdown already
    this.#groupDone += settled;
    this.#inflight -= settled;
    if (this.#groupDone >= this.#groupSize) {
      const slots = this.#groupSlots, size = this.#groupSize;
      const busy = this.#busy, free = this.#free;
      let top = this.#freeTop;
      for (let k = 0; k < size; k++) {
        const slot = slots[k];
        busy[slot] = 0;
        free[top++] = slot;
      }
      this.#freeTop = top;
      this.#groupSize = 0;
      this.#groupBatch = undefined;
      if (this.#refused) this.#freeKeptTasks(); // a stopping context wants its tasks freed
    }
    if (this.#inflight === 0) this.#pe.release();
    batch.remaining -= settled;
    if (batch.remaining === 0) {
      if (batch.error) batch.reject(batch.error);
      else batch.resolve();
    }
    if (this.#queue.length > 0) this.#drain();
  }

  /** The context is stopping: refuse new work and reject what waits in the queue (in-flight tasks get flushed). */
  refuse(reason: Error): void {
    this.#refused ??= reason;
    for (const q of this.#queue.splice(0)) this.#settle(reason, q.resolve, q.reject, q.batch, q.a, q.b);
    this.#freeKeptTasks();
  }

  /** Frees every kept task not in flight (before the stop: DOCA wants a context's tasks freed before it is destroyed). */
  #freeKeptTasks(): void {
    if (!this.#reuse) return;
    this.#lastGroupAs = undefined;
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.#tasks[slot] !== 0 && this.#busy[slot] === 0) {
        this.#raw.doca_task_free(this.#tasks[slot]);
        this.#tasks[slot] = 0;
        this.#countedTag[slot] = 0;
      }
    }
  }

  /** The context is IDLE: anything DOCA did not flush is settled with `reason` (its task is gone with the ctx). */
  shutdown(reason: Error): void {
    this.refuse(reason);
    const group = this.#groupBatch;
    if (group !== undefined) {
      // The counted group's members not yet settled settle now, once each (its slots stay busy until it ends).
      const left = this.#groupSize - this.#groupDone;
      for (let k = 0; k < this.#groupSize; k++) {
        const slot = this.#groupSlots[k];
        this.#busy[slot] = 0;
        this.#tasks[slot] = 0;
        this.#countedTag[slot] = 0;
      }
      this.#groupSize = 0;
      this.#groupBatch = undefined;
      if (!group.error) group.error = reason;
      group.remaining -= left;
      if (left > 0 && group.remaining === 0) group.reject(group.error);
    }
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.#busy[slot] !== 1) continue;
      this.#busy[slot] = 0;
      const resolve = this.#resolves[slot], reject = this.#rejects[slot], batch = this.#batches[slot];
      const a = this.#a[slot]!, b = this.#b[slot]!;
      this.#tasks[slot] = 0;
      this.#countedTag[slot] = 0;
      this.#a[slot] = undefined;
      this.#b[slot] = undefined;
      this.#resolves[slot] = this.#rejects[slot] = this.#batches[slot] = undefined;
      this.#settle(reason, resolve, reject, batch, a, b);
    }
    if (this.#inflight > 0) {
      this.#inflight = 0;
      this.#pe.release();
    }
    this.releaseCallbacks(); // IDLE: no completion can reach the ring for this context any more
  }
}
