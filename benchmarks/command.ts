/**
 * How every bench command starts and ends, as the tasks do: a bad flag is one line and exit 2 (UsageError), never
 * a stack trace; a stop (Ctrl-C, SIGTERM, SIGHUP, a closed output) ends the run with one line and the stop's status
 * and removes the run's temporary folders (a stopped bench used to leave /tmp/doca-bench-* and build/bench/e2e-*
 * behind); a --json FILE whose folder cannot take it is refused before the run, not after it.
 */
import { accessSync, constants, mkdtempSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { UsageError } from "../tasks/common/cli.ts";
import { installStopHandlers, onForcedExit } from "../tasks/common/interrupt.ts";

/**
 * Runs `main` as the command `name` ("bench:rdma"): stops handled as above from the start, a UsageError printed
 * as `name: message` (and `usage` after a blank line, when given) with exit 2. Other errors propagate (a failed run
 * says what failed).
 */
export async function runBenchCommand(name: string, main: () => Promise<unknown>, usage?: string): Promise<void> {
  installStopHandlers();
  try {
    await main();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(usage === undefined ? `${name}: ${e.message}` : `${name}: ${e.message}\n\n${usage}`);
    process.exit(2);
  }
}

/** A fresh folder `prefix…` in `parent`, removed if the run is stopped (the caller removes it when the run ends). */
export function benchTempDir(parent: string, prefix: string): string {
  const path = mkdtempSync(join(parent, prefix));
  onForcedExit(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

/** Refuses (UsageError) an output file `flag FILE` whose folder does not exist or cannot be written. */
export function checkOutputFile(path: string | undefined, flag: string): void {
  if (path === undefined) return;
  const folder = dirname(resolve(path));
  try {
    if (!statSync(folder).isDirectory()) throw new Error("not a folder");
    accessSync(folder, constants.W_OK);
  } catch {
    throw new UsageError(`${flag}: cannot write ${path} (its folder ${folder} does not exist or is not writable)`);
  }
}
