/**
 * What one `npm test` run leaves behind, found and removed however it ends (finished, failed, Ctrl-C, SIGTERM,
 * SIGHUP, a runner killed for its time budget). A killed runner runs no `after` hook and a test's children outlive
 * it: a process started by a test may sit in a process group, or a session, of its own (nothing in the test says
 * so), and a test's temporary folder stays. So every runner gets
 *   - a marker in its environment (DOCA_TS_TEST_RUN), which every process it starts inherits unless a test replaces
 *     the whole environment: sweep() stops every process that still carries it (Linux: /proc/PID/environ);
 *   - its own temporary folder as TMPDIR (os.tmpdir() and mkdtemp read it; so do cc and the runtimes): sweep()
 *     removes it, with whatever the tests left in it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

export const RUN_MARKER_VARIABLE = "DOCA_TS_TEST_RUN";

export interface RunScope {
  /** Environment for every runner: the marker and the private TMPDIR. */
  readonly env: Record<string, string>;
  /** Stops every process of this run still alive (but this one) and removes the temporary folder; returns how many. */
  sweep(): number;
}

export function openRunScope(): RunScope {
  // A short name: Unix socket paths (108 bytes) of the software device are built below it.
  const folder = mkdtempSync(join(tmpdir(), "dts-"));
  const marker = `${process.pid}-${folder.slice(-6)}`;
  const needle = `${RUN_MARKER_VARIABLE}=${marker}\0`;
  return {
    env: { [RUN_MARKER_VARIABLE]: marker, TMPDIR: folder },
    sweep() {
      let stopped = 0;
      for (const pid of processesCarrying(needle)) {
        try {
          process.kill(pid, "SIGKILL");
          stopped++;
        } catch { /* gone meanwhile */ }
      }
      rmSync(folder, { recursive: true, force: true });
      return stopped;
    },
  };
}

/** Pids (not ours) whose environment holds `needle` ("NAME=VALUE\0"); none where /proc is missing. */
function processesCarrying(needle: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // A process exec'd with an environment of its own keeps the variable at the start or after a NUL.
      const environ = "\0" + readFileSync(`/proc/${entry}/environ`, "latin1");
      if (!environ.includes("\0" + needle)) continue;
      // A zombie (killed with its group a moment ago, not yet reaped) is not running: nothing to stop.
      const state = /\) (\S)/.exec(readFileSync(`/proc/${entry}/stat`, "latin1"))?.[1];
      if (state !== "Z") pids.push(Number(entry));
    } catch { /* gone, or not ours to read */ }
  }
  return pids;
}
