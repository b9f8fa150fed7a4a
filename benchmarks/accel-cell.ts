import process from "node:process";

/**
 * The clock of one accelerator cell on the TypeScript side (accel-workload.ts, accel-ea.ts), the same rule as the C
 * drivers' cell_clock (driver-common.h): the cell first runs its work untimed for a warm-up (the JIT compiles the
 * task path, lazy set-up happens, first page faults), then measures SECONDS. Without it a short cell timed a
 * runtime's cold start against C's warm loop (the first 64 KiB cell of a quick run came out 0.70× one run, 1.1×
 * the next).
 */

/** Warm-up of a cell of `seconds`: half of a short cell, 0.25 s of a longer one (cell_warmup in driver-common.h). */
export function cellWarmup(seconds: number): number {
  return seconds < 0.5 ? seconds / 2 : 0.25;
}

export class CellClock {
  #ops = 0;
  #warmEnd: number;
  #deadline: number;
  #start: number;
  #opsAtStart = 0;
  #timing = false;
  #cpuStart = process.cpuUsage();

  constructor(readonly seconds: number) {
    this.#warmEnd = performance.now() + cellWarmup(seconds) * 1000;
    this.#deadline = this.#warmEnd + seconds * 1000; // moved when the measured part starts
    this.#start = this.#warmEnd;
  }

  /**
   * After `n` more finished operations: whether the cell still runs (warm-up or measured part). The measured part
   * starts at the first tick after the warm-up and lasts `seconds` from there, so it always counts some.
   */
  tick(n = 1): boolean {
    this.#ops += n;
    const t = performance.now();
    if (!this.#timing && t >= this.#warmEnd) {
      this.#timing = true;
      this.#start = t;
      this.#deadline = t + this.seconds * 1000;
      this.#cpuStart = process.cpuUsage();
      this.#opsAtStart = this.#ops;
    }
    return t < this.#deadline;
  }

  /**
   * The measured part: operations, seconds (from the end of the warm-up to now) and the CPU seconds the process
   * used meanwhile, all its threads (what the rates per CPU second of a loaded machine divide by).
   */
  result(): { ops: number; seconds: number; cpu: number } {
    const cpu = process.cpuUsage(this.#cpuStart);
    return {
      ops: this.#timing ? this.#ops - this.#opsAtStart : this.#ops,
      seconds: (performance.now() - this.#start) / 1000,
      cpu: (cpu.user + cpu.system) / 1e6,
    };
  }
}
