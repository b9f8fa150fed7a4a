/**
 * A fixture for tests/suite-runner.test.ts, not a test of its own (skipped unless DOCA_TS_RUNNER_FIXTURE names a
 * file): starts a child in a session of its own (out of reach of its runner's process group) and writes a file
 * into the temporary folder, says so in that file (runners keep a test's console output to themselves), then waits
 * to be stopped.
 */
import { test } from "node:test";
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

test("leaves a child and a file behind when stopped", { skip: !process.env.DOCA_TS_RUNNER_FIXTURE, timeout: 300_000 }, async () => {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  const folder = mkdtempSync(join(tmpdir(), "fixture-"));
  writeFileSync(join(folder, "left.txt"), "a file nobody removes\n");
  appendFileSync(process.env.DOCA_TS_RUNNER_FIXTURE!, `fixture: child ${child.pid} folder ${folder}\n`);
  await new Promise((resolve) => setTimeout(resolve, 240_000));
});
