/**
 * One Comch connection (either end). Messages DOCA delivers are copied out at once (the buffer is only valid in the
 * callback) and queued; recv() takes from the queue or waits, keeping the progress engine pumped while it waits.
 */
import { clearTimeout, setTimeout } from "node:timers";
import { TimeoutError } from "./errors.ts";
import { hex } from "./resource.ts";

/** What a connection needs from its server or client. */
export interface ComchEndpoint {
  readonly kind: string;
  sendOn(connection: number, bytes: Uint8Array): Promise<void>;
  /** Keep the progress engine pumping (true) or stop asking (false). */
  pump(on: boolean): void;
}

interface Waiter {
  resolve: (m: Uint8Array) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class ComchConnection {
  readonly maxMsgSize: number;
  /** @internal the doca_comch_connection pointer. */
  readonly handle: number;
  readonly #endpoint: ComchEndpoint;
  readonly #queue: Uint8Array[] = [];
  readonly #waiters: Waiter[] = [];
  readonly #onDisconnect: (() => void)[] = [];
  #connected = true;
  #watching = false;
  /** Consumer ids the peer announced (fast path), in arrival order; and who waits for the next one. */
  readonly #remoteConsumers: number[] = [];
  readonly #consumerWaiters: ((id: number) => void)[] = [];

  /** @internal created by ComchServer / ComchClient. */
  constructor(handle: number, endpoint: ComchEndpoint, maxMsgSize: number) {
    this.handle = handle;
    this.#endpoint = endpoint;
    this.maxMsgSize = maxMsgSize;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** Sends one message (≤ maxMsgSize bytes); resolves when DOCA completed the send task. */
  send(bytes: Uint8Array): Promise<void> {
    if (!this.#connected) return Promise.reject(new Error(`${this.#endpoint.kind}: connection is closed`));
    return this.#endpoint.sendOn(this.handle, bytes);
  }

  /** The next message. Rejects with TimeoutError after timeoutMs, or Error once the peer disconnected. */
  recv(opts: { timeoutMs?: number } = {}): Promise<Uint8Array> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    if (!this.#connected) return Promise.reject(new Error(`${this.#endpoint.kind}: peer disconnected`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      if (opts.timeoutMs !== undefined) {
        waiter.timer = setTimeout(() => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          this.#endpoint.pump(false);
          reject(new TimeoutError(`a Comch message on ${this.#endpoint.kind}`, opts.timeoutMs!));
        }, opts.timeoutMs);
      }
      this.#waiters.push(waiter);
      this.#endpoint.pump(true);
    });
  }

  /** Every message until the peer disconnects. */
  async *messages(): AsyncIterableIterator<Uint8Array> {
    while (this.#connected || this.#queue.length > 0) {
      try {
        yield await this.recv();
      } catch (e) {
        if (!this.#connected) return;
        throw e;
      }
    }
  }

  /** Called once when the peer goes away (or the connection is closed); keeps the engine pumped to notice it. */
  onDisconnect(cb: () => void): void {
    if (!this.#connected) {
      void Promise.resolve().then(cb);
      return;
    }
    this.#onDisconnect.push(cb);
    if (!this.#watching) {
      this.#watching = true;
      this.#endpoint.pump(true);
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
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter = (id: number) => {
        if (timer !== undefined) clearTimeout(timer);
        this.#endpoint.pump(false);
        resolve(id);
      };
      if (opts.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const i = this.#consumerWaiters.indexOf(waiter);
          if (i >= 0) this.#consumerWaiters.splice(i, 1);
          this.#endpoint.pump(false);
          reject(new TimeoutError(`the peer to create a Comch consumer on ${this.#endpoint.kind}`, opts.timeoutMs!));
        }, opts.timeoutMs);
      }
      this.#consumerWaiters.push(waiter);
      this.#endpoint.pump(true);
    });
  }

  /** @internal the peer created (or destroyed) a consumer. */
  noteRemoteConsumer(id: number, created: boolean): void {
    if (!created) {
      const i = this.#remoteConsumers.indexOf(id);
      if (i >= 0) this.#remoteConsumers.splice(i, 1);
      return;
    }
    this.#remoteConsumers.push(id);
    for (const waiter of this.#consumerWaiters.splice(0)) waiter(id);
  }

  /** @internal a message arrived (already copied). */
  deliver(message: Uint8Array): void {
    const waiter = this.#waiters.shift();
    if (!waiter) {
      this.#queue.push(message);
      return;
    }
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    this.#endpoint.pump(false);
    waiter.resolve(message);
  }

  /** @internal the peer disconnected or our side closed. */
  markDisconnected(): void {
    if (!this.#connected) return;
    this.#connected = false;
    for (const waiter of this.#waiters.splice(0)) {
      if (waiter.timer !== undefined) clearTimeout(waiter.timer);
      this.#endpoint.pump(false);
      waiter.reject(new Error(`${this.#endpoint.kind}: peer disconnected`));
    }
    if (this.#watching) {
      this.#watching = false;
      this.#endpoint.pump(false);
    }
    for (const cb of this.#onDisconnect.splice(0)) void Promise.resolve().then(cb);
  }

  toString(): string {
    return `ComchConnection { ${this.#endpoint.kind} ${hex(this.handle)} ${this.#connected ? "connected" : "disconnected"} queued=${this.#queue.length} }`;
  }

  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}
