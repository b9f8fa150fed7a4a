/**
 * The test runner (scripts/test.ts), stopped as a person stops `npm test` (Ctrl-C): it says so, exits 130, and
 * leaves nothing behind: not the processes its tests started (even in a session of their own, which the runner's
 * process group does not reach), not their temporary files (scripts/test-run-scope.ts). The fixture test it runs,
 * tests/helpers/runner/leaves-a-child.test.ts, starts such a child and writes such a file.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { currentRuntime } from "../ffi/load/runtime.ts";

const deno = join(repoRoot, "node_modules", "deno", "deno");

/** Running, not a zombie. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return false;
  }
}

const skip = !existsSync("/proc/self/environ") ? "needs /proc (Linux)" : currentRuntime() !== "deno" ? "runs once, under Deno (it starts the runner itself)" : false;

describe("npm test stopped with Ctrl-C", { skip }, () => {
  test("exit 130, one line, no process or temporary file of its tests left", { timeout: 240_000 }, async () => {
    const scratch = mkdtempSync(join(tmpdir(), "doca-ts-runner-"));
    const report = join(scratch, "fixture.txt");
    const said = () => (existsSync(report) ? readFileSync(report, "utf8") : "");
    const runner = spawn(deno, ["run", "--allow-all", join(repoRoot, "scripts", "test.ts"), "--runtime", "deno", "runner/leaves-a-child"], {
      cwd: repoRoot,
      // TMPDIR: every folder the runner makes (its run's folder, the runtime's report folder) must go with the stop
      env: { ...process.env, DOCA_TS_RUNNER_FIXTURE: report, TMPDIR: scratch },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "", stderr = "";
    runner.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    runner.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => runner.on("close", (code) => resolve(code)));
    try {
      let started: RegExpExecArray | null = null;
      for (let i = 0; i < 1800 && !(started = /fixture: child (\d+) folder (\S+)/.exec(said())); i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(started, `the fixture never started:\n${stdout}\n${stderr}`);
      const child = Number(started[1]);
      const folder = started[2];
      assert.ok(running(child) && existsSync(folder), "the fixture's child runs and its file exists before the stop");
      process.kill(runner.pid!, "SIGINT"); // not runner.kill(): Deno would then report the signal, not the exit status
      assert.equal(await exited, 130, stderr);
      assert.match(stderr, /test: interrupted \(SIGINT\): stopped the runner and \d+ process\(es\) its tests had started; removed the run's temporary folder/);
      for (let i = 0; i < 50 && running(child); i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(running(child), false, `the fixture's child ${child} (a session of its own) was stopped`);
      assert.equal(existsSync(folder), false, `the fixture's temporary folder ${folder} was removed`);
      assert.deepEqual(readdirSync(scratch), ["fixture.txt"], "nothing the runner made is left in its TMPDIR");
    } finally {
      runner.kill("SIGKILL");
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
