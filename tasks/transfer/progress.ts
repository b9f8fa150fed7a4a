/**
 * Progress of the file copies (dma-copy, rdma-copy): the shared progress line (tasks/common/progress.ts) over one
 * file's bytes, named by the side that draws it ("dma-copy: host side: 62.0 MiB of 191 MiB (32%), 112 MiB/s, ETA
 * 1.2 s"); nothing while running when stderr is not a terminal (the caller prints a one-line summary at the end).
 */
import { readFileSync } from "node:fs";
import { clearInterval, setInterval } from "node:timers";
import process from "node:process";
import { formatBytes, formatRate } from "../common/units.ts";
import { Progress, type ProgressOptions } from "../common/progress.ts";

export { formatBytes, formatRate };

export class ProgressBar {
  readonly #total: number;
  readonly #progress: Progress;

  /** `label`: how the side's lines begin ("dma-copy: DPU side", "rdma-copy"). */
  constructor(label: string, total: number, options: ProgressOptions = {}) {
    this.#total = total;
    this.#progress = new Progress(label, options);
  }

  update(done: number): void {
    this.#progress.update(done, this.#total);
  }

  /** The line's text at `done` bytes and time `now`. */
  line(done: number, now?: number): string {
    return this.#progress.line(done, this.#total, now);
  }

  /** Erases the line (the summary or the error follows on a clean line). */
  finish(): void {
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
