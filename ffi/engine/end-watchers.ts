/**
 * The handlers a connection runs when it ends, one implementation for every kind of connection (Comch and RDMA):
 *
 * - registration: a handler must be a function, and runs once;
 * - late registration: a handler registered after the connection ended still runs (with the same reason), as if it
 *   had been registered in time;
 * - handler failure: every handler runs in a microtask of its own, after the native callback that ended the
 *   connection returned (nothing runs inside DOCA's frames), and one that throws neither stops the handlers after it
 *   nor is lost: what it threw goes to `onThrow` (the connection's owner, which rejects whoever waits on it).
 */
export class EndWatchers<R> {
  #handlers: ((reason: R) => void)[] = [];
  #ended = false;
  #reason: R | undefined;

  /** `what` names the method in errors ("RdmaConnection.onDisconnect"); `onThrow` receives what a handler threw. */
  constructor(private readonly what: string, private readonly onThrow: (error: unknown) => void) {}

  /** True once end() ran. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Handlers registered and not run yet. */
  get size(): number {
    return this.#handlers.length;
  }

  /** Registers `handler`; after the end it is scheduled at once. */
  add(handler: (reason: R) => void): void {
    if (typeof handler !== "function") throw new TypeError(`${this.what}: the handler must be a function`);
    if (this.#ended) this.#schedule(handler, this.#reason as R);
    else this.#handlers.push(handler);
  }

  /** The connection ended: every handler registered so far runs once, in registration order. Idempotent. */
  end(reason: R): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reason = reason;
    const handlers = this.#handlers;
    this.#handlers = [];
    for (const handler of handlers) this.#schedule(handler, reason);
  }

  #schedule(handler: (reason: R) => void, reason: R): void {
    queueMicrotask(() => {
      try {
        handler(reason);
      } catch (e) {
        try {
          this.onThrow(e);
        } catch {
          // onThrow only rejects waiters; a microtask must not throw either
        }
      }
    });
  }
}
