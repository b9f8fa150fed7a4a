/**
 * Stops for a loop that waits many times (a stream's batches), watched once for the whole loop: one abort listener
 * and one watch of each other way the loop can end (a peer's stop notice), instead of a raceAbort and a
 * Promise.race per wait. Those cost a third of comch-stream's 64 B rate (their promises and listeners, per batch of a
 * few messages), and a Promise.race against one long-lived promise keeps a reaction per call until it settles.
 */
import { interruption } from "./interrupt.ts";

/** A deadline on the loop's progress: waits under way for `ms` with none settling end the loop with `error()`. */
export interface IdleLimit {
  ms: number;
  error: () => Error;
}

export class StopWatch {
  #stop: { error: unknown } | undefined;
  /** The rejections of the waits under way (lanes wait at the same time). */
  readonly #waiting = new Set<(error: unknown) => void>();
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort: () => void;
  /** When a wait last settled, or the first of the waits under way began. */
  #lastProgress = performance.now();
  #idleTimer: ReturnType<typeof setInterval> | undefined;

  /**
   * `what()` says what the loop was doing when the signal aborted (read then, so it can name the current step);
   * `ends` are promises that only reject (a peer's stop notice): the first of them to reject stops the loop too;
   * `idle` bounds how long waits may go on with none settling (a peer gone silent), checked by one timer for the
   * whole loop rather than one per wait.
   */
  constructor(signal: AbortSignal | undefined, what: () => string, ends: Promise<never>[] = [], idle?: IdleLimit) {
    this.#signal = signal;
    this.#onAbort = () => this.#end(interruption(signal!, what()));
    if (signal?.aborted) this.#onAbort();
    else signal?.addEventListener("abort", this.#onAbort, { once: true });
    for (const end of ends) end.catch((e) => this.#end(e));
    if (idle) {
      this.#idleTimer = setInterval(() => {
        if (this.#waiting.size > 0 && performance.now() - this.#lastProgress > idle.ms) this.#end(idle.error());
      }, Math.max(10, Math.min(1000, idle.ms / 4)));
    }
  }

  /** Settles like `p`, unless the loop was stopped before or while it waits: then rejects with that stop. */
  wait<T>(p: Promise<T>): Promise<T> {
    if (this.#stop) {
      p.catch(() => {}); // its own end no longer matters
      return Promise.reject(this.#stop.error);
    }
    if (this.#waiting.size === 0) this.#lastProgress = performance.now(); // idle time before this wait is not its own
    return new Promise<T>((resolve, reject) => {
      this.#waiting.add(reject);
      const settled = () => {
        this.#waiting.delete(reject);
        this.#lastProgress = performance.now();
      };
      p.then(
        (v) => (settled(), resolve(v)),
        (e) => (settled(), reject(e)),
      );
    });
  }

  /** Stops watching the signal and the loop's idle time (the loop is over); the stop seen so far, if any, stays. */
  [Symbol.dispose](): void {
    this.#signal?.removeEventListener("abort", this.#onAbort);
    clearInterval(this.#idleTimer);
  }

  #end(error: unknown): void {
    if (this.#stop) return;
    clearInterval(this.#idleTimer);
    this.#stop = { error };
    for (const reject of this.#waiting) reject(error);
    this.#waiting.clear();
  }
}
