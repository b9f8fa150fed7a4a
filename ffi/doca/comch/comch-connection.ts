/**
 * One Comch connection (either end): a child of its server or client, and the parent of the fast-path producers and
 * consumers created on it (connection.createProducer / createConsumer). Its events reach it through the connection
 * user data (a small id, see callbacks.ts). Messages DOCA delivers are copied out at once (the buffer is valid only
 * in the callback) and queued; recv() takes from the queue or waits, keeping the progress engine pumped meanwhile.
 */
import { copyOut, staged } from "../../native/copy-out.ts";
import { batchMax, MessageSlab, ownBuffer } from "../../engine/message-slab.ts";
import { type ConnectionOwner, registerOwner, setConnectionOwner, unregisterOwner } from "../../engine/callbacks.ts";
import { hex, Resource, INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import { Waiters } from "../../engine/waiters.ts";
import { Inbox } from "../../engine/inbox.ts";
import { EndWatchers } from "../../engine/end-watchers.ts";
import { registerConnectionHooks } from "./comch-connection-hooks.ts";
import { type ComchEndpoint, endpointForConnection, type EndpointForConnection, UNREAD_MESSAGE_OVERHEAD } from "./comch-endpoint.ts";
import { type ComchProducer, producerOnConnection } from "./comch-producer.ts";
import { type ComchConsumer, consumerOnConnection } from "./comch-consumer.ts";
import type { FastPathOptions } from "./comch-fastpath-common.ts";
import type { Device } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import type { Handle } from "../../load/types.ts";

/** Only the server and client create connections (set in the class's static block, module-private). */
let createConnection: (handle: number, endpoint: ComchEndpoint) => ComchConnection;

/** @internal for comch-server.ts / comch-client.ts. */
export function newConnection(handle: number, endpoint: ComchEndpoint): ComchConnection {
  return createConnection(handle, endpoint);
}

export class ComchConnection extends Resource<Handle<"doca_comch_connection">> {
  protected readonly kind: string;
  readonly maxMsgSize: number;
  readonly #endpoint: ComchEndpoint;
  /** The endpoint's side of this connection (sending, unread accounting, ending). */
  readonly #to: EndpointForConnection;
  readonly #id: number;
  /** Received messages and the readers waiting for them (their unread bytes count towards the endpoint's bound). */
  readonly #inbox: Inbox<Uint8Array>;
  readonly #consumerWaiters: Waiters<number>;
  /** Keeps the engine pumped while someone watches for the disconnect. */
  readonly #watch: Waiters<void>;
  /** onDisconnect's handlers (the one implementation Comch and RDMA connections share). */
  readonly #ends: EndWatchers<void>;
  #connected = true;
  /** DOCA ended the connection (peer disconnect, client stopped): the native pointer must not be used again. */
  #gone = false;
  /** Something this connection's callbacks or watchers threw: the next recv() reports it. */
  #failure: unknown;
  /** Bytes the queue holds, each message counted with its overhead (the endpoint bounds the sum over connections). */
  #unreadBytes = 0;
  /** Cut for holding too many unread messages: what the peer sends from now on is dropped. */
  #cut = false;
  /** Messages dropped after the cut. */
  #dropped = 0;
  /** Once someone reads with recvBatch(): queued messages are copied into shared slabs (recv() copies them out). */
  #slab: MessageSlab | undefined;
  /** Consumer ids the peer announced (fast path), in arrival order. */
  readonly #remoteConsumers: number[] = [];

  static {
    createConnection = (handle, endpoint) => new ComchConnection(INTERNAL, handle, endpoint);
  }

  private constructor(token: symbol, handle: number, endpoint: ComchEndpoint) {
    internalOnly(token, "ComchConnection");
    super(handle, [endpoint]);
    this.#endpoint = endpoint;
    this.#to = endpointForConnection(endpoint);
    this.kind = `${endpoint.kind} connection`;
    this.maxMsgSize = endpoint.maxMsgSize;
    this.#inbox = new Inbox(endpoint.pe, {
      what: `a Comch message on ${endpoint.kind}`,
      own: ownBuffer,
      unread: {
        weight: (m) => m.length + UNREAD_MESSAGE_OVERHEAD,
        note: (delta) => {
          this.#unreadBytes += delta;
          this.#to.noteUnread(this, delta);
        },
      },
    });
    this.#consumerWaiters = new Waiters(endpoint.pe);
    this.#watch = new Waiters(endpoint.pe);
    this.#ends = new EndWatchers("ComchConnection.onDisconnect", (error) => this.#fail(error));
    const owner: ConnectionOwner = {
      onMessage: (buffer, length) => this.#onMessage(buffer, length),
      onStatus: (connected) => {
        if (!connected) this.#endedByDoca();
      },
      onRemoteConsumer: (id, created) => this.#onRemoteConsumer(id, created),
      fail: (error) => this.#fail(error),
    };
    registerConnectionHooks(this, { owner, gone: () => this.#endedByDoca(), cut: (error) => this.#cutForOverflow(error) });
    this.#id = registerOwner(owner);
    setConnectionOwner(handle, this.#id);
  }

  get connected(): boolean {
    return this.#connected && !this.closed;
  }

  /** The device and engine this connection's fast-path contexts use. */
  get device(): Device {
    return this.#endpoint.device;
  }

  get pe(): ProgressEngine {
    return this.#endpoint.pe;
  }

  /** Sends one message (≤ maxMsgSize bytes); resolves when DOCA completed the send task. */
  send(bytes: Uint8Array): Promise<void> {
    if (!this.connected) return Promise.reject(new Error(`${this.#endpoint.kind}: connection is closed`));
    return this.#to.sendOn(this[HANDLE], bytes);
  }

  /**
   * Sends the messages in order with one Promise (resolves once all completed; rejects with the first failure after
   * all settled). Each is checked before any is sent and copied at the call, as send() does.
   */
  sendBatch(messages: readonly Uint8Array[]): Promise<void> {
    if (!this.connected) return Promise.reject(new Error(`${this.#endpoint.kind}: connection is closed`));
    return this.#to.sendBatchOn(this[HANDLE], messages);
  }

  /** The next message. Rejects with TimeoutError after timeoutMs, or Error once the peer disconnected. */
  recv(opts: { timeoutMs?: number } = {}): Promise<Uint8Array> {
    // Queued messages go to whoever waits first: a reader arriving while others wait takes its turn after them.
    const queued = this.#inbox.takeOne();
    return queued ? Promise.resolve(queued) : this.#wait(opts.timeoutMs, undefined) as Promise<Uint8Array>;
  }

  #wait(timeoutMs: number | undefined, max: number | undefined): Promise<Uint8Array | Uint8Array[]> {
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      this.#failure = undefined;
      return Promise.reject(failure);
    }
    if (!this.connected) return Promise.reject(new Error(`${this.#endpoint.kind}: peer disconnected`));
    return this.#inbox.wait(timeoutMs, max);
  }

  /**
   * The messages queued now (at most `max`), or, when none is, the next one and whatever arrived with it: one
   * Promise per batch instead of one per message. Messages of a batch may share one ArrayBuffer (slabs of 256 KiB,
   * each message a view: `message.buffer` holds others too, so copy before transferring it); a slab lives while any
   * of its messages does. Rejects as recv() does.
   */
  recvBatch(opts: { max?: number; timeoutMs?: number } = {}): Promise<Uint8Array[]> {
    // Not async: its Promise settles in as many steps as recv()'s, so readers waiting together see their turns in
    // call order.
    let max: number;
    try {
      max = batchMax("ComchConnection.recvBatch", opts.max);
    } catch (e) {
      return Promise.reject(e);
    }
    this.#slab ??= new MessageSlab();
    const queued = this.#inbox.takeMany(max);
    return queued ? Promise.resolve(queued) : this.#wait(opts.timeoutMs, max) as Promise<Uint8Array[]>;
  }

  /** Every message until the peer disconnects. */
  async *messages(): AsyncIterableIterator<Uint8Array> {
    while (this.connected || this.#inbox.length > 0) {
      try {
        yield await this.recv();
      } catch (e) {
        if (!this.connected) return;
        throw e;
      }
    }
  }

  /**
   * Called once when the peer goes away (or the connection is closed); keeps the engine pumped to notice it. An
   * exception `cb` throws is not lost: the next recv() (or the one waiting) rejects with it.
   */
  onDisconnect(cb: () => void): void {
    this.#ends.add(cb);
    if (!this.#ends.ended && this.#watch.size === 0) void this.#watch.wait("the peer to disconnect").catch(() => {});
  }

  /** Consumer ids the peer has created on this connection and not destroyed (fast path). */
  get remoteConsumers(): number[] {
    return [...this.#remoteConsumers];
  }

  /** Resolves with the id of a consumer the peer created (the first not yet taken, or the next to come). */
  waitForRemoteConsumer(opts: { timeoutMs?: number } = {}): Promise<number> {
    const known = this.#remoteConsumers[0];
    if (known !== undefined) return Promise.resolve(known);
    return this.#consumerWaiters.wait(`the peer to create a Comch consumer on ${this.#endpoint.kind}`, opts.timeoutMs);
  }

  /** A fast-path producer on this connection (its child: closed before the connection). */
  createProducer(opts: FastPathOptions = {}): Promise<ComchProducer> {
    this.assertOpen();
    return producerOnConnection(this, opts);
  }

  /** A fast-path consumer on this connection (its child: closed before the connection). */
  createConsumer(opts: FastPathOptions = {}): Promise<ComchConsumer> {
    this.assertOpen();
    return consumerOnConnection(this, opts);
  }

  /** Bytes of messages received and not read yet (each counted with its overhead). */
  get unreadBytes(): number {
    return this.#unreadBytes;
  }

  /** A message arrived (inside progress). */
  #onMessage(buffer: number, length: number): void {
    if (this.#cut) {
      this.#dropped++;
      return;
    }
    // Straight to a recv() waiting first in a buffer of its own; else queued, into a slab once the reader takes
    // batches (recv() copies a slab view out).
    const ownCopy = this.#inbox.direct() || !this.#slab;
    this.#inbox.put(ownCopy ? copyOut(buffer, length) : this.#slab!.copy(staged(buffer, length)));
  }

  /** Cut for holding the most unread bytes (connectionOverflowed, comch-connection-hooks.ts). */
  #cutForOverflow(error: Error): void {
    const bytes = this.#unreadBytes;
    this.#cut = true;
    this.#dropped += this.#inbox.clear();
    this.#unreadBytes = 0;
    this.#to.noteUnread(this, -bytes);
    this.#fail(error);
    this.#markDisconnected();
    if (!this.#gone && !this.closed) queueMicrotask(() => this.closeAsync().catch((e) => this.#fail(e)));
  }

  /** DOCA ended the connection: mark it disconnected; closing it later skips the native side. */
  #endedByDoca(): void {
    if (this.#gone || this.closed) return;
    this.#gone = true;
    this.#markDisconnected();
    this.#to.forgetConnection(this);
    // Nothing can use it any more: close it (and the producers/consumers on it) once this callback returns.
    queueMicrotask(() => this.closeAsync().catch((e) => this.#fail(e)));
  }

  /** The peer created (or destroyed) a consumer. */
  #onRemoteConsumer(id: number, created: boolean): void {
    if (!created) {
      const i = this.#remoteConsumers.indexOf(id);
      if (i >= 0) this.#remoteConsumers.splice(i, 1);
      return;
    }
    this.#remoteConsumers.push(id);
    this.#consumerWaiters.resolveAll(id);
  }

  /** A callback or watcher failed: whoever waits on this connection gets the error. */
  #fail(error: unknown): void {
    this.#inbox.serve(); // what arrived before the failure is delivered first
    if (this.#inbox.waiting > 0) this.#inbox.rejectAll(error);
    else this.#failure ??= error;
    this.#consumerWaiters.rejectAll(error);
  }

  /** The peer disconnected or our side closed. */
  #markDisconnected(): void {
    if (!this.#connected) return;
    this.#connected = false;
    this.#inbox.serve(); // what arrived before the disconnect is delivered first
    this.#inbox.rejectAll(new Error(`${this.#endpoint.kind}: peer disconnected`));
    this.#consumerWaiters.rejectAll(new Error(`${this.#endpoint.kind}: peer disconnected`));
    this.#watch.resolveAll();
    this.#ends.end();
  }

  /**
   * Ends the connection: our id is cleared from it first (a late event then finds no owner rather than a reused
   * id), restored if the end fails so the connection stays usable and close() can be retried.
   */
  protected override destroySync(handle: number): void {
    if (this.#gone) return this.#ended();
    setConnectionOwner(handle, 0);
    try {
      this.#to.endConnectionSync(this);
    } catch (e) {
      setConnectionOwner(handle, this.#id);
      throw e;
    }
    this.#ended();
  }

  protected override destroyAsync(handle: number): Promise<void> | void {
    if (this.#gone) return this.#ended();
    setConnectionOwner(handle, 0);
    const restore = (e: unknown) => {
      setConnectionOwner(handle, this.#id);
      throw e;
    };
    let ending: Promise<void> | void = undefined;
    try {
      ending = this.#to.endConnection(this);
    } catch (e) {
      restore(e);
    }
    if (!ending) return this.#ended();
    return ending.then(() => this.#ended(), restore);
  }

  #ended(): void {
    this.#to.forgetConnection(this);
    unregisterOwner(this.#id);
    this.#markDisconnected();
  }

  protected destroyNative(handle: number): void {
    this.destroySync(handle);
  }

  protected summary(): string {
    const dropped = this.#cut ? ` overflowed (${this.#dropped} dropped)` : "";
    return `${this.#endpoint.kind} ${hex(this[HANDLE])} ${this.#connected ? "connected" : "disconnected"} queued=${this.#inbox.length}${dropped}`;
  }
}
