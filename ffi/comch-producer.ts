/**
 * Comch fast-path producer: sends buffers (its own registered copies, or a caller's Buf) to a consumer id on the
 * peer, with optional immediate data. Sends beyond the slot count wait for a free slot.
 */
import { clearTimeout, setTimeout } from "node:timers";
import { doca, requireFns } from "./library.ts";
import { check, DocaError } from "./errors.ts";
import { DocaErrorCode } from "./constants.ts";
import { type CtxOwner, nativeCallbacks } from "./callbacks.ts";
import { CtxCore } from "./ctx.ts";
import { AsyncResource } from "./resource.ts";
import { NativeMemory } from "./memory.ts";
import { Buf } from "./buf.ts";
import { PumpGate } from "./comch-endpoint.ts";
import { awaitRunning, BufferSet, type FastPathOptions } from "./comch-fastpath-common.ts";

interface PendingSend {
  own: Buf | undefined;
  bytes: Uint8Array | undefined;
  imm: Uint8Array;
  consumerId: number;
  /** Staging slot, -1 until one is assigned. */
  slot: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** The producer functions (optional in the table: older DOCA has no fast path). */
const producerFns = () =>
  requireFns(
    "doca_comch_producer_create",
    "doca_comch_producer_destroy",
    "doca_comch_producer_as_ctx",
    "doca_comch_producer_task_send_set_conf",
    "doca_comch_producer_task_send_alloc_init",
    "doca_comch_producer_task_send_as_task",
  );

export class ComchProducer extends AsyncResource implements CtxOwner {
  protected readonly kind = "ComchProducer";
  readonly #core: CtxCore;
  readonly #gate: PumpGate;
  readonly #buffers: BufferSet;
  readonly #imm: NativeMemory;
  readonly #free: number[];
  readonly #tasks: number[];
  readonly #settle: (PendingSend | undefined)[];
  /** Sends not yet submitted, in call order (the head may hold a slot while DOCA says AGAIN). */
  readonly #queue: PendingSend[] = [];
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  static readonly IMM_MAX = 64;

  private constructor(handle: number, opts: FastPathOptions, buffers: BufferSet) {
    super(handle, [opts.device, opts.pe], (h) => producerFns().doca_comch_producer_destroy(h));
    const count = buffers.bufs.length;
    this.#buffers = buffers;
    this.#imm = NativeMemory.alloc(count * ComchProducer.IMM_MAX);
    this.#free = Array.from({ length: count }, (_, i) => count - 1 - i);
    this.#tasks = new Array(count).fill(0);
    this.#settle = new Array(count).fill(undefined);
    this.#gate = new PumpGate(opts.pe);
    this.#core = new CtxCore(producerFns().doca_comch_producer_as_ctx(handle), opts.pe, this);
  }

  static async create(opts: FastPathOptions): Promise<ComchProducer> {
    const d = doca();
    const f = producerFns();
        const count = opts.buffers ?? 16;
    d.scratch.clear(0);
    check(f.doca_comch_producer_create(opts.connection.handle, d.scratch.slot(0)), "doca_comch_producer_create");
    const handle = d.scratch.u64(0);
    let producer: ComchProducer | undefined;
    let buffers: BufferSet | undefined;
    try {
      buffers = new BufferSet(opts.device, opts.bufferSize ?? 4096, count);
      producer = new ComchProducer(handle, opts, buffers);
      const cbs = nativeCallbacks();
      check(f.doca_comch_producer_task_send_set_conf(handle, cbs.taskOk.address, cbs.taskError.address, count), "doca_comch_producer_task_send_set_conf");
      producer.#core.start();
      await awaitRunning(producer.#core, producer.#gate, "Comch producer", opts.timeoutMs ?? 10_000);
      return producer;
    } catch (e) {
      if (producer) producer.close();
      else {
        f.doca_comch_producer_destroy(handle);
        buffers?.close();
      }
      throw e;
    }
  }

  /**
   * Sends to the peer's consumer `consumerId`, with optional immediate data: either bytes (≤ bufferSize, copied into
   * the producer's own registered buffers) or a Buf of yours (its data section is sent, zero-copy). Messages are
   * submitted in call order, also across DOCA_ERROR_AGAIN (consumer queue full) retries.
   */
  send(data: Uint8Array | Buf, consumerId: number, imm: Uint8Array = new Uint8Array(0)): Promise<void> {
    this.assertOpen();
    const own = data instanceof Buf ? data : undefined;
    const bytes = own ? undefined : data as Uint8Array;
    if (bytes && bytes.length > this.#buffers.size) {
      return Promise.reject(new DocaError(DocaErrorCode.TOO_BIG, "doca_comch_producer_task_send_alloc_init", `${bytes.length} > ${this.#buffers.size}`));
    }
    if (imm.length > ComchProducer.IMM_MAX) {
      return Promise.reject(new DocaError(DocaErrorCode.TOO_BIG, "doca_comch_producer_task_send_alloc_init", "immediate data"));
    }
    return new Promise((resolve, reject) => {
      const entry: PendingSend = { own, bytes, imm, consumerId, slot: -1, resolve, reject };
      // Stage into a slot now when one is free, so the caller may reuse its array at once; otherwise keep a copy.
      if (this.#queue.length === 0 && this.#free.length > 0) this.#stage(entry);
      else {
        if (entry.bytes) entry.bytes = entry.bytes.slice();
        entry.imm = entry.imm.slice();
      }
      this.#queue.push(entry);
      this.#drain();
    });
  }

  /** Copies an entry's bytes and immediate data into a free slot. */
  #stage(entry: PendingSend): void {
    const slot = this.#free.pop()!;
    entry.slot = slot;
    if (entry.bytes) {
      this.#buffers.memory.bytes.set(entry.bytes, slot * this.#buffers.size);
      this.#buffers.bufs[slot].setData(this.#buffers.address(slot), entry.bytes.length);
    }
    this.#imm.bytes.set(entry.imm, slot * ComchProducer.IMM_MAX);
  }

  /** Submits queued sends in order until the queue is empty, slots run out, or DOCA says AGAIN. */
  #drain(): void {
    const d = doca();
    const f = producerFns();
    while (this.#queue.length > 0 && !this.#retryTimer && !this.closed) {
      const entry = this.#queue[0];
      if (entry.slot < 0) {
        if (this.#free.length === 0) return; // resumed by onTaskDone
        this.#stage(entry);
      }
      const slot = entry.slot;
      const bufHandle = entry.own ? entry.own.handle : this.#buffers.bufs[slot].handle;
      const immAddress = this.#imm.address + slot * ComchProducer.IMM_MAX;
      d.scratch.clear(0);
      let rc = f.doca_comch_producer_task_send_alloc_init(this.handle, bufHandle, immAddress, entry.imm.length, entry.consumerId, d.scratch.slot(0));
      let fn = "doca_comch_producer_task_send_alloc_init";
      if (rc === 0) {
        const task = f.doca_comch_producer_task_send_as_task(d.scratch.u64(0));
        f.doca_task_set_user_data(task, slot);
        rc = f.doca_task_submit(task);
        if (rc === 0) {
          this.#queue.shift();
          this.#tasks[slot] = task;
          this.#settle[slot] = entry;
          this.#gate.set(true);
          continue;
        }
        f.doca_task_free(task);
        fn = "doca_task_submit";
      }
      if (rc === DocaErrorCode.AGAIN) {
        // The consumer's queue is full: let the engine run (it drains) and try the same message again.
        this.#gate.set(true);
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          this.#gate.set(false);
          this.#drain();
        }, 0);
        return;
      }
      this.#queue.shift();
      this.#free.push(slot);
      entry.reject(new DocaError(rc, fn));
    }
  }

  /** @internal */
  onTaskDone(_typedTask: number, slot: number, ok: boolean): void {
    const f = producerFns();
    const task = this.#tasks[slot];
    const settle = this.#settle[slot];
    if (!task || !settle) return;
    const error = ok ? undefined : new DocaError(f.doca_task_get_status(task), "doca_comch_producer_task_send");
    f.doca_task_free(task);
    this.#tasks[slot] = 0;
    this.#settle[slot] = undefined;
    this.#gate.set(false);
    this.#free.push(slot);
    if (error) settle.reject(error);
    else settle.resolve();
    if (this.#queue.length > 0) this.#drain();
  }

  /** @internal */
  onStateChanged(_prev: number, next: number): void {
    this.#core?.noteState(next);
  }

  protected destroyNative(handle: number): void {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    for (const entry of this.#queue.splice(0)) entry.reject(new Error("ComchProducer closed before the message was sent"));
    const drained = this.#core.stopAndDrain();
    this.#gate.drop();
    this.#core.dispose();
    if (!drained) throw new Error("ComchProducer: the context did not stop within 5 s");
    check(producerFns().doca_comch_producer_destroy(handle), "doca_comch_producer_destroy");
    this.#buffers.close();
    this.#imm.close();
  }

  protected summary(): string {
    return `${this.#core.stateName} inflight=${this.#buffers.bufs.length - this.#free.length}`;
  }
}
