/**
 * Progress of a long run on stderr's status line: only on a terminal, only after the first second, at most five
 * redraws a second (a short run prints nothing; a pipe or --json never gets control characters).
 */
import process from "node:process";
import { clearStatusLine, drawStatusLine, endStatusLine } from "../common/status-line.ts";
import { formatBytes } from "../common/units.ts";

export class Progress {
  readonly #start = performance.now();
  #last = 0;
  readonly #label: string | undefined;

  /** `label` undefined: silent (--json). */
  constructor(label: string | undefined) {
    this.#label = process.stderr.isTTY ? label : undefined;
  }

  update(done: number, total: number): void {
    if (this.#label === undefined) return;
    const now = performance.now();
    if (now - this.#start < 1000 || now - this.#last < 200) return;
    this.#last = now;
    const pct = total > 0 ? ` (${Math.floor((100 * done) / total)} %)` : "";
    drawStatusLine(`${this.#label} ${formatBytes(done)} of ${formatBytes(total)}${pct}`);
  }

  end(): void {
    endStatusLine();
  }
}

/**
 * Runs `work` with a status line "LABEL: DONE of TOTAL" (and the percentage with `percent`) drawn at once and redrawn
 * at most five times a second, on a terminal and unless `quiet` (--json); cleared when the work fails, ended when it
 * succeeds. What ec-encode, ec-recover, encrypt and decrypt share.
 */
export async function withStatusLine<T>(
  label: string,
  opts: { quiet: boolean; percent?: boolean },
  work: (onProgress: (done: number, total: number) => void) => Promise<T>,
): Promise<T> {
  const show = !opts.quiet && process.stderr.isTTY === true;
  let last = 0;
  const onProgress = (done: number, total: number) => {
    const now = performance.now();
    if (!show || now - last < 200) return;
    last = now;
    const pct = opts.percent ? ` (${total ? Math.floor((done / total) * 100) : 100}%)` : "";
    drawStatusLine(`${label}: ${formatBytes(done)} of ${formatBytes(total)}${pct}`);
  };
  let result: T;
  try {
    result = await work(onProgress);
  } catch (e) {
    clearStatusLine();
    throw e;
  }
  endStatusLine();
  return result;
}
