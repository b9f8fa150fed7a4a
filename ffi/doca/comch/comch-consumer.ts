/**
 * Comch fast-path consumer, created on a connection (connection.createConsumer): posts NativeMemory-backed receive
 * buffers on the shared task path; a producer on the other side fills them by consumer id. Each completed buffer is
 * copied out and reposted at once.
 */
import { copyOut } from "../../native/copy-out.ts";
import { batchMax, MessageSlab, ownBuffer } from "../../engine/message-slab.ts";
import { HANDLE, INTERNAL, internalOnly, NATIVE } from "../../engine/resource.ts";
import { doca, requireFns } from "../../native/library.ts";
import { check } from "../../native/errors.ts";
import { CtxCore, CtxResource } from "../../engine/ctx.ts";
import type { Native, TaskKind, TaskPath } from "../../engine/task-path.ts";
import { Inbox } from "../../engine/inbox.ts";
import {
  BufferSet,
  checkFastPathOptions,
  configureImmLength,
  createOnConnection,
  type FastPathCreateOptions,
  type FastPathMessage,
  type FastPathOptions,
} from "./comch-fastpath-common.ts";
import type { ComchConnection } from "./comch-connection.ts";
import type { Handle } from "../../load/types.ts";

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

/** A queued message as recv() hands it out: bytes in a buffer of their own. */
function ownMessage(m: FastPathMessage): FastPathMessage {
  return m.bytes.byteLength === m.bytes.buffer.byteLength ? m : { ...m, bytes: ownBuffer(m.bytes) };
}

/** The imm of a message without immediate data: shared, frozen by being empty (nothing can be written into it). */
const EMPTY = new Uint8Array(0);

/** doca_comch_consumer_task_post_recv: one receive buffer (its index) per task; completions yield messages. */
class PostRecvKind implements TaskKind<number, undefined> {
  readonly taskName = "doca_comch_consumer_task_post_recv";
  readonly noun = "receive";
  readonly allocName = "doca_comch_consumer_task_post_recv_alloc_init";
  task: Native = 0;
  stopping = false;
  /** Looked up once (not per message). */
  readonly #fns = consumerFns();
  /** Raw form (native values in and out); present: consumerFns() checked it. */
  readonly #asTask = doca().raw.doca_comch_consumer_task_post_recv_as_task!;

  /** Per slot: the post_recv task (native form) and the buffer index it is bound to (-1: none yet). */
  readonly #typed: Native[];
  readonly #bound: Int32Array;
  /** Re-binds a kept task to another buffer; absent from DOCA builds without it (then tasks are not kept). */
  readonly #setBuf = doca().raw.doca_comch_consumer_task_post_recv_set_buf;
  /** TaskPath keeps completed tasks and calls this instead of alloc + free per message (DOCA lets a completed
   * post_recv task be submitted again: NVIDIA's samples resubmit it from its completion callback). */
  rearm?: (slot: number, index: number) => number;

  constructor(readonly ctxHandle: number, readonly buffers: BufferSet, readonly consumer: ComchConsumer) {
    const slots = buffers.bufs.length;
    this.#typed = new Array(slots).fill(0);
    this.#bound = new Int32Array(slots).fill(-1);
    if (this.#setBuf) this.rearm = this.#rearm;
  }

  allocInit(slot: number, index: number): number {
    const d = doca();
    const f = this.#fns;
    const buf = this.buffers.bufs[index];
    buf.resetData(); // empty again, from the buffer's start (where the previous message was written)
    d.scratch.clear(0);
    const rc = f.doca_comch_consumer_task_post_recv_alloc_init(this.ctxHandle, buf[HANDLE], d.scratch.slot(0));
    if (rc !== 0) return rc;
    const typed = d.scratch.u64Native(0);
    this.#typed[slot] = typed;
    this.#bound[slot] = index;
    // The native form (bigint on Deno), as TaskPath hands it to doca_task_submit: a number there deoptimizes.
    this.task = this.#asTask(typed);
    return 0;
  }

  /** The slot's kept task, emptied, receives into buffer `index` again (re-bound when the slot served another). */
  readonly #rearm = (slot: number, index: number): number => {
    const buf = this.buffers.bufs[index];
    buf.resetData();
    if (this.#bound[slot] !== index) {
      this.#setBuf!(this.#typed[slot], buf[NATIVE]);
      this.#bound[slot] = index;
    }
    return 0;
  };

  complete(_slot: number, typedTask: number, ok: boolean, index: number): void {
    if (!ok || this.stopping) return;
    const f = this.#fns;
    const buffers = this.buffers;
    const length = buffers.bufs[index].dataLength;
    const offset = index * buffers.size;
    const bytes = copyMessage(this.consumer, buffers.memory.bytes.subarray(offset, offset + length));
    // A consumer configured without immediate data receives none: no calls to ask. Otherwise DOCA 3.x headers have
    // a per-task length getter; builds without it deliver the consumer's configured length.
    let imm = EMPTY;
    if (this.consumer.immDataLength > 0) {
      const immLength = f.doca_comch_consumer_task_post_recv_get_imm_data_len?.(typedTask) ?? this.consumer.immDataLength;
      const immAddress = immLength > 0 ? f.doca_comch_consumer_task_post_recv_get_imm_data(typedTask) : 0;
      if (immAddress) imm = copyOut(immAddress, immLength);
    }
    const producerId = f.doca_comch_consumer_task_post_recv_get_producer_id?.(typedTask);
    deliverMessage(this.consumer, { bytes, imm, producerId }, index);
  }

  detachedError(error: Error): void {
    if (!this.stopping) failConsumer(this.consumer, error);
  }
}

/**
 * What the receive path and the connection ask of a consumer (set in ComchConsumer's static block, so none of it is
 * on the consumer's public type).
 */
let failConsumer: (consumer: ComchConsumer, error: unknown) => void;
let openConsumer: (connection: ComchConnection, opts: FastPathOptions) => Promise<ComchConsumer>;
let copyMessage: (consumer: ComchConsumer, bytes: Uint8Array) => Uint8Array;
let deliverMessage: (consumer: ComchConsumer, message: FastPathMessage, index: number) => void;

/** @internal ComchConnection.createConsumer. */
export function consumerOnConnection(connection: ComchConnection, opts: FastPathOptions): Promise<ComchConsumer> {
  return openConsumer(connection, opts);
}

export class ComchConsumer extends CtxResource<Handle<"doca_comch_consumer">> {
  static {
    failConsumer = (consumer, error) => consumer.fail(error);
    openConsumer = (connection, opts) => ComchConsumer.#onConnection(connection, opts);
    copyMessage = (consumer, bytes) => consumer.#copyMessage(bytes);
    deliverMessage = (consumer, message, index) => consumer.#deliver(message, index);
  }

  protected readonly kind = "ComchConsumer";
  /** The id the producer addresses (the peer also learns it from its consumer event). */
  id = 0;
  /** Immediate-data length configured on the consumer (used when DOCA has no per-task length getter). */
  immDataLength = 0;
  readonly connection: ComchConnection;
  protected readonly core: CtxCore;
  readonly #buffers: BufferSet;
  readonly #kind: PostRecvKind;
  readonly #path: TaskPath<number, undefined>;
  /** Received messages and the readers waiting for them. */
  readonly #inbox: Inbox<FastPathMessage>;
  #failure: unknown;
  /** Once someone reads with recvBatch(): queued messages are copied into shared slabs (recv() copies them out). */
  #slab: MessageSlab | undefined;

  private constructor(token: symbol, handle: number, connection: ComchConnection, buffers: BufferSet) {
    internalOnly(token, "ComchConsumer");
    super(handle, [connection, connection.pe, connection.device]);
    this.connection = connection;
    this.#buffers = buffers;
    this.#inbox = new Inbox(connection.pe, { what: "a Comch fast-path message", own: ownMessage });
    this.#kind = new PostRecvKind(handle, buffers, this);
    this.core = new CtxCore(consumerFns().doca_comch_consumer_as_ctx(handle), connection.pe, this.callbackOwner());
    this.#path = this.core.addTasks(this.#kind, buffers.bufs.length);
  }

  /** Same as `opts.connection.createConsumer(opts)`. */
  static create(opts: FastPathCreateOptions): Promise<ComchConsumer> {
    return createOnConnection("ComchConsumer.create", opts, (connection) => connection.createConsumer(opts));
  }

  /** ComchConnection.createConsumer (through consumerOnConnection). */
  static async #onConnection(connection: ComchConnection, opts: FastPathOptions): Promise<ComchConsumer> {
    const { bufferSize, buffers: count } = checkFastPathOptions("ComchConnection.createConsumer", opts);
    const f = consumerFns();
    const d = doca();
    const buffers = new BufferSet(connection.device, bufferSize, count);
    let handle = 0;
    let consumer: ComchConsumer | undefined;
    try {
      d.scratch.clear(0);
      check(f.doca_comch_consumer_create(connection[HANDLE], buffers.mmap[HANDLE], d.scratch.slot(0)), "doca_comch_consumer_create");
      handle = d.scratch.u64(0);
      consumer = new ComchConsumer(INTERNAL, handle, connection, buffers);
      // Completions through the native completion ring when it has room, else JS callbacks.
      const cbs = consumer.#path.completionCallbacks();
      check(f.doca_comch_consumer_task_post_recv_set_conf(handle, cbs.ok, cbs.error, count), "doca_comch_consumer_task_post_recv_set_conf");
      consumer.immDataLength = configureImmLength(handle, connection.device, opts);
      if (!consumer.core.start()) await consumer.core.untilRunning("Comch consumer", opts.timeoutMs ?? 10_000);
      d.scratch.clear(0);
      check(f.doca_comch_consumer_get_id(handle, d.scratch.slot(0)), "doca_comch_consumer_get_id");
      consumer.id = d.scratch.u32At(0);
      for (let index = 0; index < count; index++) consumer.#path.post(index, undefined);
      if (consumer.#failure !== undefined) throw consumer.#failure;
      return consumer;
    } catch (e) {
      if (consumer) await consumer.close().catch(() => {});
      else {
        if (handle) f.doca_comch_consumer_destroy(handle);
        buffers.close();
      }
      throw e;
    }
  }

  /** The next message a producer sent to this consumer. */
  recv(opts: { timeoutMs?: number } = {}): Promise<FastPathMessage> {
    // Queued messages go to whoever waits first: a reader arriving while others wait takes its turn after them. They
    // are copies: still readable once the consumer is closed (its connection gone), as a connection's are.
    const queued = this.#inbox.takeOne();
    if (queued) return Promise.resolve(queued);
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#wait(opts.timeoutMs, undefined) as Promise<FastPathMessage>;
  }

  #wait(timeoutMs: number | undefined, max: number | undefined): Promise<FastPathMessage | FastPathMessage[]> {
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      this.#failure = undefined;
      return Promise.reject(failure);
    }
    return this.#inbox.wait(timeoutMs, max);
  }

  /**
   * The messages queued now (at most `max`), or, when none is, the next one and whatever arrived with it: one
   * Promise per batch instead of one per message. Their `bytes` may share one ArrayBuffer (slabs of 256 KiB, each
   * message a view: `bytes.buffer` holds others too, so copy before transferring it); a slab lives while any of its
   * messages does. Rejects as recv() does.
   */
  recvBatch(opts: { max?: number; timeoutMs?: number } = {}): Promise<FastPathMessage[]> {
    // Not async: its Promise settles in as many steps as recv()'s (readers waiting together see their turns in order).
    let max: number;
    try {
      max = batchMax("ComchConsumer.recvBatch", opts.max);
      const queued = this.#inbox.takeMany(max);
      if (queued) return Promise.resolve(queued);
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    this.#slab ??= new MessageSlab();
    return this.#wait(opts.timeoutMs, max) as Promise<FastPathMessage[]>;
  }

  /** A received buffer's bytes, copied: its own ArrayBuffer for a recv() waiting first, else a slab view
   * once the reader takes batches. */
  #copyMessage(bytes: Uint8Array): Uint8Array {
    return this.#slab && !this.#inbox.direct() ? this.#slab.copy(bytes) : bytes.slice();
  }

  /** A buffer completed: hand the message out (or queue it for the readers, see Inbox), repost the buffer. */
  #deliver(message: FastPathMessage, index: number): void {
    this.#inbox.put(message);
    this.#path.post(index, undefined);
  }

  /** A callback or repost failed: the waiting recv() (or the next) rejects with it. */
  protected override fail(error: unknown): void {
    super.fail(error);
    this.#inbox.serve(); // what arrived before the failure is delivered first
    if (this.#inbox.waiting > 0) this.#inbox.rejectAll(error);
    else this.#failure ??= error;
  }

  protected override beforeStop(): void {
    this.#kind.stopping = true;
    this.#inbox.serve(); // what arrived before the close is delivered first
    this.#inbox.rejectAll(new Error("ComchConsumer closed"));
  }

  protected destroyNative(handle: number): void {
    check(consumerFns().doca_comch_consumer_destroy(handle), "doca_comch_consumer_destroy");
    this.#buffers.close();
  }

  protected summary(): string {
    return `id=${this.id} ${this.core.stateName} buffers=${this.#buffers.bufs.length}x${this.#buffers.size} queued=${this.#inbox.length}`;
  }
}
