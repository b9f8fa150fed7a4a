/**
 * Progress reporting: a redrawn bar with throughput and ETA on stderr when stderr is a TTY, nothing while running
 * otherwise (the caller prints a one-line summary at the end). The rate counts from the first byte moved, not from
 * the start (waiting for the peer is not transfer time); any other message clears the bar first
 * (tasks/common/status-line.ts).
 */
import { readFileSync } from "node:fs";
import { clearInterval, setInterval } from "node:timers";
import process from "node:process";
import { formatBytes, formatRate } from "../common/units.ts";
import { drawStatusLine, endStatusLine } from "../common/status-line.ts";

export { formatBytes, formatRate };

export class ProgressBar {
  readonly #total: number;
  readonly #enabled: boolean;
  readonly #write: ((text: string) => void) | undefined;
  readonly #now: () => number;
  /** When and at what count the first byte moved: the rate leaves out the time spent waiting for the peer. */
  #first: { at: number; done: number } | undefined;
  #lastDraw = -Infinity;

  constructor(total: number, enabled = process.stderr.isTTY === true, write?: (text: string) => void, now = () => performance.now()) {
    this.#total = total;
    this.#enabled = enabled;
    this.#write = write;
    this.#now = now;
  }

  update(done: number): void {
    if (!this.#enabled) return;
    const now = this.#now();
    if (done > 0 && this.#first === undefined) this.#first = { at: now, done };
    if (now - this.#lastDraw < 100 && done < this.#total) return; // at most ten redraws a second
    this.#lastDraw = now;
    drawStatusLine(this.line(done, now), this.#write);
  }

  /** The bar's text at `done` bytes and time `now` (no carriage return, no escape sequences). */
  line(done: number, now = this.#now()): string {
    const fraction = this.#total > 0 ? Math.min(1, done / this.#total) : 1;
    const width = 30;
    const filled = Math.round(fraction * width);
    const seconds = this.#first ? (now - this.#first.at) / 1000 : 0;
    const moved = done - (this.#first?.done ?? 0);
    const rate = seconds > 0 ? moved / seconds : 0;
    const eta = done >= this.#total ? "done" : rate > 0 ? `ETA ${((this.#total - done) / rate).toFixed(1)} s` : "ETA -";
    return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${(fraction * 100).toFixed(1).padStart(5)}% ` +
      `${formatBytes(done)}/${formatBytes(this.#total)} ${rate > 0 ? formatRate(moved, seconds) : "-"} ${eta}`;
  }

  finish(): void {
    if (this.#enabled) endStatusLine();
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
