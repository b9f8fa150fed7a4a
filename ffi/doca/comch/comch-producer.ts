/**
 * Comch fast-path producer, created on a connection (connection.createProducer): sends buffers (its own registered
 * copies, or a caller's Buf) to a consumer id on the peer, with optional immediate data, on the shared task path.
 * Sends beyond the slot count wait in order; DOCA_ERROR_AGAIN (the consumer's queue is full) is retried in order.
 */
import { HANDLE, INTERNAL, internalOnly, NATIVE } from "../../engine/resource.ts";
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { CtxCore, CtxResource } from "../../engine/ctx.ts";
import { NativeMemory } from "../common/memory.ts";
import { Buf } from "../common/buf.ts";
import type { Native, TaskKind, TaskPath } from "../../engine/task-path.ts";
import { integerIn } from "../../engine/validate.ts";
import {
  BufferSet,
  checkFastPathOptions,
  createOnConnection,
  type FastPathCreateOptions,
  type FastPathOptions,
} from "./comch-fastpath-common.ts";
import type { ComchConnection } from "./comch-connection.ts";
import type { Handle } from "../../load/types.ts";

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

const IMM_MAX = 64;
/** The default immediate data (none): one shared empty array, never written (its length is 0). */
const NO_IMM = new Uint8Array(0);

interface Send {
  own: Buf | undefined;
  bytes: Uint8Array | undefined;
  imm: Uint8Array;
  consumerId: number;
  /** Whether bytes/imm are our own copies (safe to keep while queued). */
  copied: boolean;
}

/** doca_comch_producer_task_send: stage the bytes (or take the caller's Buf), one task per slot. */
class ProducerSendKind implements TaskKind<Send, undefined> {
  readonly taskName = "doca_comch_producer_task_send";
  readonly noun = "message";
  readonly allocName = "doca_comch_producer_task_send_alloc_init";
  readonly againMeansRetry = true;
  task: Native = 0;
  /** Looked up once (not per message). */
  readonly #fns = producerFns();
  /** Raw form (native values in and out); present: producerFns() checked it. */
  readonly #asTask = doca().raw.doca_comch_producer_task_send_as_task!;

  /** Per slot: the send task (native form) and what it is armed with (buffer handle, consumer, imm length). */
  readonly #typed: Native[];
  readonly #armedBuf: number[];
  readonly #armedConsumer: number[];
  readonly #armedImm: Int32Array;
  readonly #raw = doca().raw;
  readonly #native = doca().backend.native;
  /** TaskPath keeps completed tasks and calls this instead of alloc + free per message; absent without the setters. */
  rearm?: (slot: number, send: Send) => number;

  constructor(readonly ctxHandle: number, readonly buffers: BufferSet, readonly imm: NativeMemory) {
    const slots = buffers.bufs.length;
    this.#typed = new Array(slots).fill(0);
    this.#armedBuf = new Array(slots).fill(0);
    this.#armedConsumer = new Array(slots).fill(-1);
    this.#armedImm = new Int32Array(slots);
    const r = this.#raw;
    if (
      r.doca_comch_producer_task_send_set_buf && r.doca_comch_producer_task_send_set_consumer_id &&
      r.doca_comch_producer_task_send_set_imm_data && r.doca_comch_producer_task_send_get_imm_data_len
    ) {
      this.rearm = this.#rearm;
    }
  }

  /** Stages the bytes (or takes the caller's Buf) and the imm for `slot`; returns the buffer to send. */
  #stage(slot: number, send: Send): Buf {
    const buffers = this.buffers;
    if (send.bytes) {
      buffers.memory.bytes.set(send.bytes, slot * buffers.size);
      buffers.bufs[slot].setData(buffers.address(slot), send.bytes.length);
    }
    if (send.imm.length > 0) this.imm.bytes.set(send.imm, slot * IMM_MAX);
    return send.own ?? buffers.bufs[slot];
  }

  allocInit(slot: number, send: Send): number {
    if (send.bytes && send.bytes.length > this.buffers.size) return DocaErrorCode.TOO_BIG; // never past its slot
    const d = doca();
    const f = this.#fns;
    const buf = this.#stage(slot, send);
    d.scratch.clear(0);
    const rc = f.doca_comch_producer_task_send_alloc_init(
      this.ctxHandle,
      buf[HANDLE],
      this.imm.address + slot * IMM_MAX,
      send.imm.length,
      send.consumerId,
      d.scratch.slot(0),
    );
    if (rc !== 0) return rc;
    const typed = d.scratch.u64Native(0);
    this.#typed[slot] = typed;
    this.#armedBuf[slot] = buf[HANDLE];
    this.#armedConsumer[slot] = send.consumerId;
    this.#armedImm[slot] = send.imm.length;
    // The native form (bigint on Deno), as TaskPath hands it to doca_task_submit: a number there deoptimizes.
    this.task = this.#asTask(typed);
    return 0;
  }

  /** The slot's kept task (completed), armed for the next send: only what differs from its last one is set. */
  readonly #rearm = (slot: number, send: Send): number => {
    if (send.bytes && send.bytes.length > this.buffers.size) return DocaErrorCode.TOO_BIG; // never past its slot
    const r = this.#raw;
    const typed = this.#typed[slot];
    const buf = this.#stage(slot, send);
    if (this.#armedBuf[slot] !== buf[HANDLE]) {
      r.doca_comch_producer_task_send_set_buf!(typed, buf[NATIVE]);
      this.#armedBuf[slot] = buf[HANDLE];
    }
    if (this.#armedConsumer[slot] !== send.consumerId) {
      r.doca_comch_producer_task_send_set_consumer_id!(typed, send.consumerId);
      this.#armedConsumer[slot] = send.consumerId;
    }
    // Immediate data is taken at arming (DOCA may copy it into the task): set again whenever there is some. The
    // setter returns nothing: a length it refuses (alloc_init answers INVALID_VALUE to the same) would leave the
    // previous send's immediate data armed, so the length it took is read back.
    if (send.imm.length > 0 || this.#armedImm[slot] !== 0) {
      r.doca_comch_producer_task_send_set_imm_data!(typed, this.#native(this.imm.address + slot * IMM_MAX), send.imm.length);
      const taken = r.doca_comch_producer_task_send_get_imm_data_len!(typed);
      this.#armedImm[slot] = taken;
      if (taken !== send.imm.length) return DocaErrorCode.INVALID_VALUE;
    }
    return 0;
  };

  retain(send: Send): [Send, undefined] {
    if (!send.copied) {
      send.bytes = send.bytes?.slice();
      send.imm = send.imm.slice();
      send.copied = true;
    }
    return [send, undefined];
  }
}

/** ComchConnection.createProducer's way in (set in ComchProducer's static block). */
let openProducer: (connection: ComchConnection, opts: FastPathOptions) => Promise<ComchProducer>;

/** @internal ComchConnection.createProducer. */
export function producerOnConnection(connection: ComchConnection, opts: FastPathOptions): Promise<ComchProducer> {
  return openProducer(connection, opts);
}

export class ComchProducer extends CtxResource<Handle<"doca_comch_producer">> {
  static {
    openProducer = (connection, opts) => ComchProducer.#onConnection(connection, opts);
  }

  protected readonly kind = "ComchProducer";
  static readonly IMM_MAX = IMM_MAX;
  protected readonly core: CtxCore;
  readonly connection: ComchConnection;
  readonly #buffers: BufferSet;
  readonly #imm: NativeMemory;
  readonly #path: TaskPath<Send, undefined>;

  private constructor(token: symbol, handle: number, connection: ComchConnection, buffers: BufferSet, imm: NativeMemory) {
    internalOnly(token, "ComchProducer");
    super(handle, [connection, connection.pe, connection.device]);
    this.connection = connection;
    this.#buffers = buffers;
    this.#imm = imm;
    this.core = new CtxCore(producerFns().doca_comch_producer_as_ctx(handle), connection.pe, this.callbackOwner());
    this.#path = this.core.addTasks(new ProducerSendKind(handle, buffers, imm), buffers.bufs.length);
  }

  /** Same as `opts.connection.createProducer(opts)`. */
  static create(opts: FastPathCreateOptions): Promise<ComchProducer> {
    return createOnConnection("ComchProducer.create", opts, (connection) => connection.createProducer(opts));
  }

  /** ComchConnection.createProducer (through producerOnConnection). */
  static async #onConnection(connection: ComchConnection, opts: FastPathOptions): Promise<ComchProducer> {
    const { bufferSize, buffers: count } = checkFastPathOptions("ComchConnection.createProducer", opts);
    const f = producerFns();
    const d = doca();
    // Registered buffers first (no context yet): a failure here leaves nothing behind but what the set closes.
    const buffers = new BufferSet(connection.device, bufferSize, count);
    let imm: NativeMemory | undefined;
    let handle = 0;
    let producer: ComchProducer | undefined;
    try {
      imm = NativeMemory.alloc(count * IMM_MAX);
      d.scratch.clear(0);
      check(f.doca_comch_producer_create(connection[HANDLE], d.scratch.slot(0)), "doca_comch_producer_create");
      handle = d.scratch.u64(0);
      producer = new ComchProducer(INTERNAL, handle, connection, buffers, imm);
      // Completions through the native completion ring when it has room, else JS callbacks.
      const cbs = producer.#path.completionCallbacks();
      check(f.doca_comch_producer_task_send_set_conf(handle, cbs.ok, cbs.error, count), "doca_comch_producer_task_send_set_conf");
      if (!producer.core.start()) await producer.core.untilRunning("Comch producer", opts.timeoutMs ?? 10_000);
      return producer;
    } catch (e) {
      if (producer) await producer.close().catch(() => {});
      else {
        if (handle) f.doca_comch_producer_destroy(handle);
        imm?.close();
        buffers.close();
      }
      throw e;
    }
  }

  /** Sends in flight. */
  get inflight(): number {
    return this.#path.inflight;
  }

  /**
   * Sends to the peer's consumer `consumerId`, with optional immediate data: either bytes (≤ bufferSize, copied into
   * the producer's own registered buffers) or a Buf of yours (its data section is sent, zero-copy). Messages are
   * submitted in call order, also across DOCA_ERROR_AGAIN (consumer queue full) retries.
   */
  send(data: Uint8Array | Buf, consumerId: number, imm: Uint8Array = NO_IMM): Promise<void> {
    try {
      this.assertOpen();
      integerIn("ComchProducer.send", "consumerId", consumerId, 0, 0xffff_ffff);
      return this.#path.submit(this.#request("ComchProducer.send", data, consumerId, imm), undefined);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Sends each of `messages` to consumer `consumerId` (with the same immediate data, if any), in order, with one
   * Promise: resolves once all completed, rejects with the first failure after all settled. Every message is
   * checked before any is sent; bytes are copied at the call, as send() does.
   */
  sendBatch(messages: readonly (Uint8Array | Buf)[], consumerId: number, imm: Uint8Array = NO_IMM): Promise<void> {
    try {
      this.assertOpen();
      integerIn("ComchProducer.sendBatch", "consumerId", consumerId, 0, 0xffff_ffff);
      if (!Array.isArray(messages)) throw new TypeError("ComchProducer.sendBatch: messages must be an array");
      const sends = messages.map((data) => this.#request("ComchProducer.sendBatch", data, consumerId, imm));
      return this.#path.submitBatch(sends, new Array<undefined>(sends.length));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** One send, checked: bytes (≤ bufferSize) or an open Buf, immediate data ≤ IMM_MAX. */
  #request(where: string, data: Uint8Array | Buf, consumerId: number, imm: Uint8Array): Send {
    const own = Buf.isBuf(data) ? data : undefined;
    if (own) own.assertOpen();
    else if (!(data instanceof Uint8Array)) throw new TypeError(`${where}: data must be a Uint8Array or a Buf`);
    const bytes = own ? undefined : data as Uint8Array;
    if (bytes && bytes.length > this.#buffers.size) {
      throw new DocaError(DocaErrorCode.TOO_BIG, "doca_comch_producer_task_send_alloc_init", `${bytes.length} > ${this.#buffers.size}`);
    }
    if (!(imm instanceof Uint8Array)) throw new TypeError(`${where}: imm must be a Uint8Array`);
    if (imm.length > IMM_MAX) {
      throw new DocaError(DocaErrorCode.TOO_BIG, "doca_comch_producer_task_send_alloc_init", "immediate data");
    }
    return { own, bytes, imm, consumerId, copied: false };
  }

  protected destroyNative(handle: number): void {
    check(producerFns().doca_comch_producer_destroy(handle), "doca_comch_producer_destroy");
    this.#buffers.close();
    this.#imm.close();
  }

  protected summary(): string {
    return `${this.core.stateName} inflight=${this.#path.inflight}`;
  }
}
