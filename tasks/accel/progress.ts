/**
 * Progress of a long run on stderr's status line: only on a terminal, only after the first second, at most five
 * redraws a second (a short run prints nothing; a pipe or --json never gets control characters).
 */
import process from "node:process";
import { drawStatusLine, endStatusLine } from "../common/status-line.ts";
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
