/**
 * Progress of a long run on stderr's status line: only on a terminal, only after the first second, at most five
 * redraws a second (a short run prints nothing; a pipe or --json never gets control characters).
 */
import process from "node:process";
import { drawStatusLine, endStatusLine } from "../common/status-line.ts";
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

  /** `label`: the task's name; undefined: silent (--json). */
  constructor(label: string | undefined) {
    this.#label = process.stderr.isTTY ? label : undefined;
  }

  update(done: number, total: number): void {
    if (this.#label === undefined) return;
    const now = performance.now();
    if (now - this.#start < 1000 || now - this.#last < 200) return;
    this.#last = now;
    drawStatusLine(progressText(this.#label, done, total));
  }

  end(): void {
    endStatusLine();
  }
}
