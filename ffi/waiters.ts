/**
 * The one waiter/timer helper: callers waiting for something a DOCA callback will deliver (a message, a
 * connection, a state change). Each waiter keeps its progress engine pumped while it waits (pe.demand/release),
 * may carry a timeout (TimeoutError naming what was awaited), and is settled exactly once.
 */
import { clearTimeout, setTimeout } from "node:timers";
import { TimeoutError } from "./errors.ts";

/** The part of a ProgressEngine a waiter needs: keep the pump running while someone waits. */
export interface Pump {
  demand(): void;
  release(): void;
}

interface Entry<T> {
  resolve: (value: T) => void;
  reject: (e: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class Waiters<T> {
  readonly #entries: Entry<T>[] = [];

  constructor(private readonly pump: Pump | undefined) {}

  get size(): number {
    return this.#entries.length;
  }

  /** Waits for the next resolveNext/resolveAll; rejects with TimeoutError(what) after timeoutMs (if given). */
  wait(what: string, timeoutMs?: number): Promise<T> {
    if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !(timeoutMs >= 0) || timeoutMs > 2 ** 31 - 1)) {
      // NaN would fire at once on some runtimes and never on others: refuse it the same way everywhere.
      return Promise.reject(new RangeError(`timeoutMs must be a number of milliseconds from 0 to 2147483647, got ${timeoutMs}`));
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Entry<T> = { resolve, reject, timer: undefined };
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => {
          if (this.#remove(entry)) reject(new TimeoutError(what, timeoutMs));
        }, Math.max(0, timeoutMs));
      }
      this.#entries.push(entry);
      this.pump?.demand();
    });
  }

  /** Settles the oldest waiter with `value`; false when nobody waits. */
  resolveNext(value: T): boolean {
    const entry = this.#entries[0];
    if (!entry) return false;
    this.#remove(entry);
    entry.resolve(value);
    return true;
  }

  resolveAll(value: T): void {
    for (const entry of [...this.#entries]) {
      this.#remove(entry);
      entry.resolve(value);
    }
  }

  rejectAll(error: unknown): void {
    for (const entry of [...this.#entries]) {
      this.#remove(entry);
      entry.reject(error);
    }
  }

  #remove(entry: Entry<T>): boolean {
    const i = this.#entries.indexOf(entry);
    if (i < 0) return false;
    this.#entries.splice(i, 1);
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    this.pump?.release();
    return true;
  }
}

/** Milliseconds left until `deadline` (Date.now() based), never negative. */
export function remaining(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}
