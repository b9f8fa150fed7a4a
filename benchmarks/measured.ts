/**
 * One process of the end-to-end rows, run under the C driver's wait4() wrapper: its exit, wall time, peak RSS and
 * CPU time.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";

export interface Measured {
  status: number;
  seconds: number;
  maxrssKiB: number;
  /** User + system CPU seconds of the process and of the children it reaped. */
  cpuSeconds: number;
  stdout: string;
  stderr: string;
}

/** Longest any one process of the end-to-end rows may run (a 1 GiB copy on a loaded machine takes well under it). */
const DEADLINE_MS = 600_000;

/**
 * Runs argv under `driver rusage` (env.BENCH_WORK holds its report); resolves with its exit, time and peak RSS.
 * onStderr sees the stderr so far at every piece (e.g. to notice "listening"). Killed after DEADLINE_MS.
 */
export function measured(driver: string, argv: string[], env: Record<string, string>, onStderr?: (text: string) => void): Promise<Measured> {
  const out = join(env.BENCH_WORK, `rusage-${process.hrtime.bigint()}.json`);
  const child = spawn(driver, ["rusage", out, ...argv], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    onStderr?.(stderr);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS);
  return new Promise<Measured>((resolve, reject) => {
    child.on("close", () => {
      clearTimeout(timer);
      try {
        resolve({ ...JSON.parse(readFileSync(out, "utf8")), stdout, stderr });
      } catch {
        reject(new Error(`${argv.join(" ")} did not finish:\n${stderr}`));
      }
    });
  });
}
