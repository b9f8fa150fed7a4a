/**
 * One Comch connection (either end): a child of its server or client, and the parent of the fast-path producers and
 * consumers created on it (connection.createProducer / createConsumer). Its events reach it through the connection
 * user data (a small id, see callbacks.ts). Messages DOCA delivers are copied out at once (the buffer is valid only
 * in the callback) and queued; recv() takes from the queue or waits, keeping the progress engine pumped meanwhile.
 */
import { copyOut, staged } from "./copy-out.ts";
import { batchMax, MessageSlab, ownBuffer } from "./message-slab.ts";
import { type ConnectionOwner, registerOwner, setConnectionOwner, unregisterOwner } from "./callbacks.ts";
import { hex, Resource, INTERNAL, internalOnly, HANDLE } from "./resource.ts";
import { Waiters } from "./waiters.ts";
import { type ComchEndpoint, UNREAD_MESSAGE_OVERHEAD } from "./comch-endpoint.ts";
import { ComchProducer } from "./comch-producer.ts";
import { ComchConsumer } from "./comch-consumer.ts";
import type { FastPathOptions } from "./comch-fastpath-common.ts";
import type { Device } from "./device.ts";
import type { ProgressEngine } from "./pe.ts";
import type { Handle } from "./types.ts";

/** Only the server and client create connections (set in the class's static block, module-private). */
let createConnection: (handle: number, endpoint: ComchEndpoint) => ComchConnection;

/** @internal for comch-server.ts / comch-client.ts. */
export function newConnection(handle: number, endpoint: ComchEndpoint): ComchConnection {
  return createConnection(handle, endpoint);
}

export class ComchConnection extends Resource<Handle<"doca_comch_connection">> implements ConnectionOwner {
  protected readonly kind: string;
  readonly maxMsgSize: number;
  readonly #endpoint: ComchEndpoint;
  readonly #id: number;
  readonly #queue: Uint8Array[] = [];
  /** recv() and recvBatch() waiters, served in call order (a recvBatch waiter's tag: { max }). */
  readonly #messages: Waiters<Uint8Array | Uint8Array[]>;
  /** A microtask will hand queued messages to waiters (#serve). */
  #serving = false;
  /**
   * Messages at the end of the queue that arrived while readers were waiting for them: not unread (they do not count
   * towards maxUnreadBytes) unless #serve finds no reader left for them.
   */
  #claimed = 0;
  readonly #consumerWaiters: Waiters<number>;
  /** Keeps the engine pumped while someone watches for the disconnect. */
  readonly #watch: Waiters<void>;
  readonly #onDisconnect: (() => void)[] = [];
  #connected = true;
  /** DOCA ended the connection (peer disconnect, client stopped): the native pointer must not be used again. */
  #gone = false;
  /** Something this connection's callbacks or watchers threw: the next recv() reports it. */
  #failure: unknown;
  /** Bytes the queue holds, each message counted with its overhead (the endpoint bounds the sum over connections). */
  #unreadBytes = 0;
  /** Cut for holding too many unread messages: what the peer sends from now on is dropped. */
  #overflowed = false;
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
    this.kind = `${endpoint.kind} connection`;
    this.maxMsgSize = endpoint.maxMsgSize;
    this.#messages = new Waiters(endpoint.pe);
    this.#consumerWaiters = new Waiters(endpoint.pe);
    this.#watch = new Waiters(endpoint.pe);
    this.#id = registerOwner(this);
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
    return this.#endpoint.sendOn(this[HANDLE], bytes);
  }

  /**
   * Sends the messages in order with one Promise (resolves once all completed; rejects with the first failure after
   * all settled). Each is checked before any is sent and copied at the call, as send() does.
   */
  sendBatch(messages: readonly Uint8Array[]): Promise<void> {
    if (!this.connected) return Promise.reject(new Error(`${this.#endpoint.kind}: connection is closed`));
    return this.#endpoint.sendBatchOn(this[HANDLE], messages);
  }

  /** The next message. Rejects with TimeoutError after timeoutMs, or Error once the peer disconnected. */
  recv(opts: { timeoutMs?: number } = {}): Promise<Uint8Array> {
    // Queued messages go to whoever waits first: a reader arriving while others wait takes its turn after them.
    if (this.#queue.length > 0 && this.#messages.size === 0) return Promise.resolve(ownBuffer(this.#take(1)[0]));
    return this.#wait(opts.timeoutMs, undefined) as Promise<Uint8Array>;
  }

  #wait(timeoutMs: number | undefined, tag: { max: number } | undefined): Promise<Uint8Array | Uint8Array[]> {
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      this.#failure = undefined;
      return Promise.reject(failure);
    }
    if (!this.connected) return Promise.reject(new Error(`${this.#endpoint.kind}: peer disconnected`));
    return this.#messages.wait(`a Comch message on ${this.#endpoint.kind}`, timeoutMs, tag);
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
    if (this.#queue.length > 0 && this.#messages.size === 0) return Promise.resolve(this.#take(max));
    return this.#wait(opts.timeoutMs, { max }) as Promise<Uint8Array[]>;
  }

  /**
   * Hands queued messages to the waiters in call order: a recvBatch waiter takes what is queued (up to its max), a
   * recv() waiter one message. Runs once per burst (a microtask after the progress that delivered them), so a
   * batch waiter gets everything that arrived together and no later reader is served before an earlier one.
   */
  readonly #serve = (): void => {
    this.#serving = false;
    while (this.#queue.length > 0 && this.#messages.size > 0) {
      const tag = this.#messages.nextTag as { max: number } | undefined;
      this.#messages.resolveNext(tag ? this.#take(tag.max) : ownBuffer(this.#take(1)[0]));
    }
    if (this.#claimed > 0) {
      // Their readers timed out or took their max: unread now, like any message nobody waits for.
      let bytes = 0;
      for (let i = this.#queue.length - this.#claimed; i < this.#queue.length; i++) bytes += this.#queue[i].length + UNREAD_MESSAGE_OVERHEAD;
      this.#claimed = 0;
      this.#unreadBytes += bytes;
      this.#endpoint.noteUnread(this, bytes);
    }
  };

  /** Takes up to `max` queued messages (as queued: slab views too). */
  #take(max: number): Uint8Array[] {
    const unread = this.#queue.length - this.#claimed;
    const taken = this.#queue.splice(0, max);
    const counted = Math.min(taken.length, unread);
    this.#claimed -= taken.length - counted;
    let bytes = 0;
    for (let i = 0; i < counted; i++) bytes += taken[i].length + UNREAD_MESSAGE_OVERHEAD;
    if (bytes > 0) {
      this.#unreadBytes -= bytes;
      this.#endpoint.noteUnread(this, -bytes);
    }
    return taken;
  }

  /** Every message until the peer disconnects. */
  async *messages(): AsyncIterableIterator<Uint8Array> {
    while (this.connected || this.#queue.length > 0) {
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
    if (!this.connected) {
      queueMicrotask(() => this.#runWatcher(cb));
      return;
    }
    this.#onDisconnect.push(cb);
    if (this.#watch.size === 0) void this.#watch.wait("the peer to disconnect").catch(() => {});
  }

  #runWatcher(cb: () => void): void {
    try {
      cb();
    } catch (e) {
      this.fail(e);
    }
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
    return ComchProducer.onConnection(this, opts);
  }

  /** A fast-path consumer on this connection (its child: closed before the connection). */
  createConsumer(opts: FastPathOptions = {}): Promise<ComchConsumer> {
    this.assertOpen();
    return ComchConsumer.onConnection(this, opts);
  }

  /** Bytes of messages received and not read yet (each counted with its overhead). */
  get unreadBytes(): number {
    return this.#unreadBytes;
  }

  /** @internal a message arrived (inside progress). */
  onMessage(buffer: number, length: number): void {
    if (this.#overflowed) {
      this.#dropped++;
      return;
    }
    if (this.#messages.size > 0 && this.#queue.length === 0 && this.#messages.nextTag === undefined) {
      this.#messages.resolveNext(copyOut(buffer, length)); // a recv() waits first: this message is its own
      return;
    }
    // Queued (into a slab once the reader takes batches; recv() copies a slab view out); waiters are served once
    // the burst is in.
    const message = this.#slab ? this.#slab.copy(staged(buffer, length)) : copyOut(buffer, length);
    this.#queue.push(message);
    if (this.#messages.size > 0) {
      this.#claimed++; // a reader waits for it: not unread
      if (!this.#serving) {
        this.#serving = true;
        queueMicrotask(this.#serve);
      }
    } else {
      this.#unreadBytes += length + UNREAD_MESSAGE_OVERHEAD;
      this.#endpoint.noteUnread(this, length + UNREAD_MESSAGE_OVERHEAD);
    }
  }

  /**
   * @internal this connection held the most unread bytes when its endpoint passed maxUnreadBytes: its unread
   * messages are dropped, the next recv() rejects with `error`, later messages are dropped, and a server
   * disconnects the client (a client's connection ends when the program closes the client).
   */
  overflowed(error: Error): void {
    const bytes = this.#unreadBytes;
    this.#overflowed = true;
    this.#dropped += this.#queue.length;
    this.#queue.length = 0;
    this.#claimed = 0;
    this.#unreadBytes = 0;
    this.#endpoint.noteUnread(this, -bytes);
    this.fail(error);
    this.markDisconnected();
    if (!this.#gone && !this.closed) queueMicrotask(() => this.closeAsync().catch((e) => this.fail(e)));
  }

  /** @internal the connection's status changed (server side: disconnect events). */
  onStatus(connected: boolean, _successful: boolean): void {
    if (!connected) this.gone();
  }

  /** @internal DOCA ended the connection: mark it disconnected; closing it later skips the native side. */
  gone(): void {
    if (this.#gone || this.closed) return;
    this.#gone = true;
    this.markDisconnected();
    this.#endpoint.forgetConnection(this[HANDLE], this);
    // Nothing can use it any more: close it (and the producers/consumers on it) once this callback returns.
    queueMicrotask(() => this.closeAsync().catch((e) => this.fail(e)));
  }

  /** @internal the peer created (or destroyed) a consumer. */
  onRemoteConsumer(id: number, created: boolean): void {
    if (!created) {
      const i = this.#remoteConsumers.indexOf(id);
      if (i >= 0) this.#remoteConsumers.splice(i, 1);
      return;
    }
    this.#remoteConsumers.push(id);
    this.#consumerWaiters.resolveAll(id);
  }

  /** @internal a callback or watcher failed: whoever waits on this connection gets the error. */
  fail(error: unknown): void {
    this.#serve(); // what arrived before the failure is delivered first
    if (this.#messages.size > 0) this.#messages.rejectAll(error);
    else this.#failure ??= error;
    this.#consumerWaiters.rejectAll(error);
  }

  /** @internal the peer disconnected or our side closed. */
  markDisconnected(): void {
    if (!this.#connected) return;
    this.#connected = false;
    this.#serve(); // what arrived before the disconnect is delivered first
    this.#messages.rejectAll(new Error(`${this.#endpoint.kind}: peer disconnected`));
    this.#consumerWaiters.rejectAll(new Error(`${this.#endpoint.kind}: peer disconnected`));
    this.#watch.resolveAll();
    for (const cb of this.#onDisconnect.splice(0)) queueMicrotask(() => this.#runWatcher(cb));
  }

  /**
   * Ends the connection: our id is cleared from it first (a late event then finds no owner rather than a reused
   * id), restored if the end fails so the connection stays usable and close() can be retried.
   */
  protected override destroySync(handle: number): void {
    if (this.#gone) return this.#ended();
    setConnectionOwner(handle, 0);
    try {
      this.#endpoint.endConnectionSync(this);
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
      ending = this.#endpoint.endConnection(this);
    } catch (e) {
      restore(e);
    }
    if (!ending) return this.#ended();
    return ending.then(() => this.#ended(), restore);
  }

  #ended(): void {
    this.#endpoint.forgetConnection(this[HANDLE], this);
    unregisterOwner(this.#id);
    this.markDisconnected();
  }

  protected destroyNative(handle: number): void {
    this.destroySync(handle);
  }

  protected summary(): string {
    const dropped = this.#overflowed ? ` overflowed (${this.#dropped} dropped)` : "";
    return `${this.#endpoint.kind} ${hex(this[HANDLE])} ${this.#connected ? "connected" : "disconnected"} queued=${this.#queue.length}${dropped}`;
  }
}
