/**
 * Progress of a long run on stderr's status line: only on a terminal, by default only after the first second, at
 * most five redraws a second (a short run prints nothing; a pipe or --json never gets control characters).
 */
import process from "node:process";
import { clearStatusLine, drawStatusLine, endStatusLine } from "../common/status-line.ts";
import { formatBytes } from "../common/units.ts";

/** The one progress format of the accelerator tasks: "encrypt: 1.03 GiB of 1.40 GiB (73%)". */
export function progressText(task: string, done: number, total: number): string {
  const pct = total > 0 ? Math.floor((100 * done) / total) : 100;
  return `${task}: ${formatBytes(done)} of ${formatBytes(total)} (${pct}%)`;
}

export class Progress {
  readonly #start = performance.now();
  #last = 0;
  readonly #label: string | undefined;
  readonly #delayMs: number;

  /** `label`: the task's name; undefined: silent (--json). `delayMs`: how long a run stays silent at first. */
  constructor(label: string | undefined, { delayMs = 1000 }: { delayMs?: number } = {}) {
    this.#label = process.stderr.isTTY ? label : undefined;
    this.#delayMs = delayMs;
  }

  update(done: number, total: number): void {
    if (this.#label === undefined) return;
    const now = performance.now();
    if (now - this.#start < this.#delayMs || now - this.#last < 200) return;
    this.#last = now;
    drawStatusLine(progressText(this.#label, done, total));
  }

  end(): void {
    endStatusLine();
  }
}

/**
 * Runs `work` with a progress line (drawn from the start) fed by its onProgress: left in place when the work ends,
 * erased when it fails, so that the error message starts on a clean line. `label` undefined: silent (--json).
 */
export async function withProgress<T>(label: string | undefined, work: (onProgress: (done: number, total: number) => void) => Promise<T>): Promise<T> {
  const progress = new Progress(label, { delayMs: 0 });
  let result: T;
  try {
    result = await work((done, total) => progress.update(done, total));
  } catch (e) {
    clearStatusLine();
    throw e;
  }
  progress.end();
  return result;
}
