/**
 * Progress of the file copies (dma-copy, rdma-copy): the shared progress line (tasks/common/progress.ts) over one
 * file's bytes, named by the side that draws it ("dma-copy: host side: 62.0 MiB of 191 MiB (32%), 112 MiB/s, ETA
 * 1.2 s"); nothing while running when stderr is not a terminal (the caller prints a one-line summary at the end).
 */
import { readFileSync } from "node:fs";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "node:timers";
import process from "node:process";
import { formatBytes, formatRate } from "../common/units.ts";
import { Progress, type ProgressOptions } from "../common/progress.ts";
import { drawStatusLine } from "../common/status-line.ts";
import { formatElapsed } from "../common/live-line.ts";

/** A timer that never keeps a finished program running. */
const unref = (timer: unknown) => (timer as { unref?: () => void }).unref?.();

export { formatBytes, formatRate };

export class ProgressBar {
  readonly #total: number;
  readonly #progress: Progress;
  readonly #label: string;
  readonly #enabled: boolean;
  readonly #write: ((text: string) => void) | undefined;
  readonly #now: () => number;
  /** settle()'s pending or running redraw of the line that follows the bar. */
  #settling: { timer: ReturnType<typeof setTimeout> } | undefined;

  /** `label`: how the side's lines begin ("dma-copy: DPU side", "rdma-copy"). */
  constructor(label: string, total: number, options: ProgressOptions = {}) {
    this.#total = total;
    this.#progress = new Progress(label, options);
    this.#label = label;
    this.#enabled = options.enabled ?? process.stderr.isTTY === true;
    this.#write = options.write;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Every byte has moved; what is left has no byte count (the checksums, the receiver's fsync and rename, its
   * receipt), and on a large file it takes seconds in which the bar sat at 100% and then vanished, as if the copy
   * hung. The bar gives way to "LABEL: WHAT… N s" once that lasts `afterMs` (a quick end draws nothing), redrawn
   * until finish() erases it.
   */
  settle(what: string, afterMs = 1000): void {
    this.#progress.end();
    if (!this.#enabled || this.#settling) return;
    const since = this.#now();
    const draw = () => drawStatusLine(`${this.#label}: ${what}… ${formatElapsed(this.#now() - since)}`, this.#write);
    const settling = {
      timer: setTimeout(() => {
        draw();
        settling.timer = setInterval(draw, 250);
        unref(settling.timer);
      }, afterMs),
    };
    unref(settling.timer);
    this.#settling = settling;
  }

  update(done: number): void {
    this.#progress.update(done, this.#total);
  }

  /** The line's text at `done` bytes and time `now`. */
  line(done: number, now?: number): string {
    return this.#progress.line(done, this.#total, now);
  }

  /** Erases the line, the bar or settle()'s (the summary or the error follows on a clean line). */
  finish(): void {
    if (this.#settling) {
      clearTimeout(this.#settling.timer);
      clearInterval(this.#settling.timer);
      this.#settling = undefined;
    }
    this.#progress.end();
  }
}

/**
 * Peak resident set size in bytes: the kernel's VmHWM from /proc/self/status where readable (Node, Bun, Deno -A),
 * else the largest RSS sampled every 20 ms since start() (Deno needs --allow-all for /proc/self).
 */
export class PeakRss {
  #max = 0;
  #timer: ReturnType<typeof setInterval> | undefined;


  start(): this {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), 20);
    this.#timer.unref(); // never keeps a failed run's process alive
    return this;
  }

  #sample(): void {
    try {
      this.#max = Math.max(this.#max, process.memoryUsage().rss);
    } catch {
      // not available: stays at what we have
    }
  }

  /** Stops sampling; returns the peak and where it came from. */
  stop(): { bytes: number; source: "VmHWM" | "sampled" } {
    clearInterval(this.#timer);
    this.#sample();
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
      if (m) return { bytes: Number(m[1]) * 1024, source: "VmHWM" };
    } catch {
      // no /proc or no permission
    }
    return { bytes: this.#max, source: "sampled" };
  }
}
