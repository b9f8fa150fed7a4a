/**
 * Turns of the event loop for a loop of device tasks (the accelerator tasks' parts, chunks and stripes). A device
 * task's completion can resolve within the same turn (the progress engine is polled as the task is submitted), so
 * such a loop may run for seconds on microtasks alone, and a stop never gets its turn: a signal's handler, the timer
 * that delivers it on Deno, a closed pipe's error all run in a later turn of the loop. Measured on Deno: sha's
 * Ctrl-C took effect 4.6-12.5 s late, often only once the whole file was hashed.
 *
 * One turn every few milliseconds (by the clock, not per part: parts may be 4 KiB or 1 MiB) lets a stop in within
 * that time, at a cost too small to measure: setImmediate is one trip through the loop (a timer of 0 ms would be
 * clamped to 4 ms on Deno once nested, a quarter of the throughput at this period).
 */
import { setImmediate } from "node:timers";

/** The default period: a stop is heard within it, plus the current device task. */
export const TURN_EVERY_MS = 5;

export class LoopTurns {
  #last = performance.now();

  constructor(readonly everyMs: number = TURN_EVERY_MS) {}

  /**
   * Resolves at once when less than `everyMs` passed since the last turn, else after one turn of the event loop
   * (where a signal, a timer or an I/O error is delivered). Check the stop after awaiting it.
   */
  turn(): Promise<void> | undefined {
    const now = performance.now();
    if (now - this.#last < this.everyMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        this.#last = performance.now();
        resolve();
      })
    );
  }
}
