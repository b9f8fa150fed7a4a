/**
 * Progress reporting: a redrawn bar with throughput and ETA on stderr when stderr is a TTY, nothing while running
 * otherwise (the caller prints a one-line summary at the end).
 */
import { readFileSync } from "node:fs";
import { clearInterval, setInterval } from "node:timers";
import process from "node:process";
import { formatBytes, formatRate } from "../common/units.ts";

export { formatBytes, formatRate };

export class ProgressBar {
  readonly #total: number;
  readonly #enabled: boolean;
  readonly #start = performance.now();
  #lastDraw = 0;

  constructor(total: number, enabled = process.stderr.isTTY === true) {
    this.#total = total;
    this.#enabled = enabled;
  }

  update(done: number): void {
    if (!this.#enabled) return;
    const now = performance.now();
    if (now - this.#lastDraw < 100 && done < this.#total) return; // at most ten redraws a second
    this.#lastDraw = now;
    const seconds = (now - this.#start) / 1000;
    const fraction = this.#total > 0 ? done / this.#total : 1;
    const width = 30;
    const filled = Math.round(fraction * width);
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 ? (this.#total - done) / rate : 0;
    process.stderr.write(
      `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${(fraction * 100).toFixed(1).padStart(5)}% ` +
        `${formatBytes(done)}/${formatBytes(this.#total)} ${formatRate(done, seconds)} ETA ${eta.toFixed(1)}s `,
    );
  }

  finish(): void {
    if (this.#enabled) process.stderr.write("\n");
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
