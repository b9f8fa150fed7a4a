/**
 * The one progress line of every task that moves bytes (dma-copy, rdma-copy, compress, decompress, sha, encrypt,
 * decrypt, ec-encode, ec-recover): "TASK: 62.0 MiB of 191 MiB (32%), 112 MiB/s, ETA 1.2 s", the task's name (and
 * side) first like every line a task prints, then done of total, the percentage, and the rate and time left once
 * bytes have moved. Drawn on stderr's status line only on a terminal, at most five times a second; the rate counts
 * from the first byte moved (waiting for a peer is not transfer time). One end rule for all: the line is erased when
 * the work ends, well or not, so the summary or the error that follows stands alone (a live line that is not a byte
 * count, tasks/common/live-line.ts, ends the same way).
 */
import process from "node:process";
import { clearStatusLine, drawStatusLine } from "./status-line.ts";
import { formatBytes, formatRate } from "./units.ts";

/** "encrypt: 1.03 GiB of 1.40 GiB (73%)", then ", 112 MiB/s, ETA 1.2 s" once `moved` bytes took `seconds`. */
export function progressText(label: string, done: number, total: number, rate?: { moved: number; seconds: number }): string {
  const pct = total > 0 ? Math.min(100, Math.floor((100 * done) / total)) : 100;
  let text = `${label}: ${formatBytes(done)} of ${formatBytes(total)} (${pct}%)`;
  if (rate && rate.seconds > 0 && rate.moved > 0) {
    text += `, ${formatRate(rate.moved, rate.seconds)}`;
    if (done < total) text += `, ETA ${((total - done) / (rate.moved / rate.seconds)).toFixed(1)} s`;
  }
  return text;
}

export interface ProgressOptions {
  /** Draw at all (default: stderr is a terminal). */
  enabled?: boolean;
  /** How long a run stays silent at first (a short run prints nothing), ms. */
  delayMs?: number;
  /** Where the line goes (tests); default stderr. */
  write?: (text: string) => void;
  /** The clock, ms (tests). */
  now?: () => number;
}

export class Progress {
  readonly #label: string | undefined;
  readonly #enabled: boolean;
  readonly #delayMs: number;
  readonly #write: ((text: string) => void) | undefined;
  readonly #now: () => number;
  readonly #start: number;
  /** When and at what count the first byte moved: the rate leaves out the time spent waiting for the peer. */
  #first: { at: number; done: number } | undefined;
  #lastDraw = -Infinity;

  /** `label`: the task's name as its lines begin ("compress", "dma-copy: host side"); undefined: silent (--json). */
  constructor(label: string | undefined, { enabled = process.stderr.isTTY === true, delayMs = 0, write, now = () => performance.now() }: ProgressOptions = {}) {
    this.#label = label;
    this.#enabled = enabled && label !== undefined;
    this.#delayMs = delayMs;
    this.#write = write;
    this.#now = now;
    this.#start = now();
  }

  update(done: number, total: number): void {
    if (!this.#enabled) return;
    const now = this.#now();
    if (done > 0 && this.#first === undefined) this.#first = { at: now, done };
    if (now - this.#start < this.#delayMs) return;
    if (now - this.#lastDraw < 200 && done < total) return; // at most five redraws a second, and always the last one
    this.#lastDraw = now;
    drawStatusLine(this.line(done, total, now), this.#write);
  }

  /** The line's text at `done` of `total` bytes and time `now` (no carriage return, no escape sequences). */
  line(done: number, total: number, now = this.#now()): string {
    const rate = this.#first ? { moved: done - this.#first.done, seconds: (now - this.#first.at) / 1000 } : undefined;
    return progressText(this.#label ?? "", done, total, rate);
  }

  /** Erases the line (the one end rule, whether the work ended well or not); nothing when no line is shown. */
  end(): void {
    clearStatusLine();
  }
}
