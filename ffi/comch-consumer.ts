/**
 * Comch fast-path consumer: posts NativeMemory-backed receive buffers on a connection; a producer on the other side
 * fills them by consumer id. Each completed buffer is copied out and reposted at once.
 */
import { clearTimeout, setTimeout } from "node:timers";
import { doca, requireFns } from "./library.ts";
import { check, TimeoutError } from "./errors.ts";
import { type CtxOwner, nativeCallbacks } from "./callbacks.ts";
import { CtxCore } from "./ctx.ts";
import { AsyncResource } from "./resource.ts";
import { PumpGate } from "./comch-endpoint.ts";
import { awaitRunning, BufferSet, configureImmLength, type FastPathMessage, type FastPathOptions } from "./comch-fastpath-common.ts";

/** The consumer functions (optional in the table: older DOCA has no fast path). */
const consumerFns = () =>
  requireFns(
    "doca_comch_consumer_create",
    "doca_comch_consumer_destroy",
    "doca_comch_consumer_as_ctx",
    "doca_comch_consumer_get_id",
    "doca_comch_consumer_task_post_recv_set_conf",
    "doca_comch_consumer_task_post_recv_alloc_init",
    "doca_comch_consumer_task_post_recv_as_task",
    "doca_comch_consumer_task_post_recv_get_imm_data",
  );

export class ComchConsumer extends AsyncResource implements CtxOwner {
  protected readonly kind = "ComchConsumer";
  /** The id the producer addresses (the peer also learns it from its consumer event). */
  id = 0;
  /** Immediate-data length configured on the consumer (used when DOCA has no per-task length getter). */
  immDataLength = 0;
  readonly #core: CtxCore;
  readonly #gate: PumpGate;
  readonly #buffers: BufferSet;
  readonly #tasks: number[];
  readonly #queue: FastPathMessage[] = [];
  readonly #waiters: ((m: FastPathMessage) => void)[] = [];
  #stopping = false;

  private constructor(handle: number, opts: FastPathOptions, buffers: BufferSet) {
    super(handle, [opts.device, opts.pe], (h) => consumerFns().doca_comch_consumer_destroy(h));
    this.#buffers = buffers;
    this.#gate = new PumpGate(opts.pe);
    this.#tasks = new Array(buffers.bufs.length).fill(0);
    this.#core = new CtxCore(consumerFns().doca_comch_consumer_as_ctx(handle), opts.pe, this);
  }

  static async create(opts: FastPathOptions): Promise<ComchConsumer> {
    const d = doca();
    const f = consumerFns();
        const count = opts.buffers ?? 16;
    const buffers = new BufferSet(opts.device, opts.bufferSize ?? 4096, count);
    d.scratch.clear(0);
    const rc = f.doca_comch_consumer_create(opts.connection.handle, buffers.mmap.handle, d.scratch.slot(0));
    if (rc !== 0) {
      buffers.close();
      check(rc, "doca_comch_consumer_create");
    }
    const handle = d.scratch.u64(0);
    let consumer: ComchConsumer | undefined;
    try {
      consumer = new ComchConsumer(handle, opts, buffers);
      const cbs = nativeCallbacks();
      check(f.doca_comch_consumer_task_post_recv_set_conf(handle, cbs.taskOk.address, cbs.taskError.address, count), "doca_comch_consumer_task_post_recv_set_conf");
      consumer.immDataLength = configureImmLength(handle, opts);
      consumer.#core.start();
      await awaitRunning(consumer.#core, consumer.#gate, "Comch consumer", opts.timeoutMs ?? 10_000);
      d.scratch.clear(0);
      check(f.doca_comch_consumer_get_id(handle, d.scratch.slot(0)), "doca_comch_consumer_get_id");
      consumer.id = d.scratch.u32At(0);
      for (let slot = 0; slot < count; slot++) consumer.#post(slot);
      return consumer;
    } catch (e) {
      if (consumer) consumer.close();
      else {
        f.doca_comch_consumer_destroy(handle);
        buffers.close();
      }
      throw e;
    }
  }

  #post(slot: number): void {
    const d = doca();
    const f = consumerFns();
    const buf = this.#buffers.bufs[slot];
    buf.setData(this.#buffers.address(slot), 0);
    d.scratch.clear(0);
    check(f.doca_comch_consumer_task_post_recv_alloc_init(this.handle, buf.handle, d.scratch.slot(0)), "doca_comch_consumer_task_post_recv_alloc_init");
    const task = f.doca_comch_consumer_task_post_recv_as_task(d.scratch.u64(0));
    f.doca_task_set_user_data(task, slot);
    const rc = f.doca_task_submit(task);
    if (rc !== 0) {
      f.doca_task_free(task);
      check(rc, "doca_task_submit");
    }
    this.#tasks[slot] = task;
  }

  /** The next message a producer sent to this consumer. */
  recv(opts: { timeoutMs?: number } = {}): Promise<FastPathMessage> {
    this.assertOpen();
    const ready = this.#queue.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter = (m: FastPathMessage) => {
        if (timer !== undefined) clearTimeout(timer);
        this.#gate.set(false);
        resolve(m);
      };
      if (opts.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          this.#gate.set(false);
          reject(new TimeoutError("a Comch fast-path message", opts.timeoutMs!));
        }, opts.timeoutMs);
      }
      this.#waiters.push(waiter);
      this.#gate.set(true);
    });
  }

  /** @internal post-recv completion: copy the data and immediate bytes out, repost the buffer. */
  onTaskDone(typedTask: number, slot: number, ok: boolean): void {
    const d = doca();
    const f = consumerFns();
    const task = this.#tasks[slot];
    this.#tasks[slot] = 0;
    if (!ok || this.#stopping) {
      f.doca_task_free(task);
      return;
    }
    const length = this.#buffers.bufs[slot].dataLength;
    const offset = slot * this.#buffers.size;
    const bytes = this.#buffers.memory.bytes.slice(offset, offset + length);
    // DOCA 3.x headers have a per-task length getter; builds without it deliver the consumer's configured length.
    const immLength = f.doca_comch_consumer_task_post_recv_get_imm_data_len?.(typedTask) ?? this.immDataLength;
    const immAddress = f.doca_comch_consumer_task_post_recv_get_imm_data(typedTask);
    const imm = immLength && immAddress ? new Uint8Array(d.backend.view(immAddress, immLength)).slice() : new Uint8Array(0);
    const producerId = f.doca_comch_consumer_task_post_recv_get_producer_id?.(typedTask);
    f.doca_task_free(task);
    const message = { bytes, imm, producerId };
    const waiter = this.#waiters.shift();
    if (waiter) waiter(message);
    else this.#queue.push(message);
    this.#post(slot);
  }

  /** @internal */
  onStateChanged(_prev: number, next: number): void {
    this.#core?.noteState(next);
  }

  protected destroyNative(handle: number): void {
    this.#stopping = true;
    const drained = this.#core.stopAndDrain();
    this.#gate.drop();
    this.#core.dispose();
    if (!drained) throw new Error("ComchConsumer: the context did not stop within 5 s");
    check(consumerFns().doca_comch_consumer_destroy(handle), "doca_comch_consumer_destroy");
    this.#buffers.close();
  }

  protected summary(): string {
    return `id=${this.id} ${this.#core.stateName} buffers=${this.#buffers.bufs.length}x${this.#buffers.size} queued=${this.#queue.length}`;
  }
}
