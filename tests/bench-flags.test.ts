/**
 * Every benchmark task of deno.json refuses a flag it does not know the way the tasks do: a line naming it and exit
 * 2, before it builds or measures anything. bench:accel-ea and bench:storage ended in an uncaught error with a stack
 * trace (exit 1).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";

const deno = join(repoRoot, "node_modules", "deno", "deno");
const tasks = (JSON.parse(readFileSync(join(repoRoot, "deno.json"), "utf8")) as { tasks: Record<string, { command: string }> }).tasks;
const benches = Object.entries(tasks).filter(([name]) => name === "bench" || name.startsWith("bench:"));

test("every bench task is in the list this test walks", { timeout: 10_000 }, () => {
  assert.ok(benches.length >= 6, benches.map(([name]) => name).join(", "));
});

for (const [name, task] of benches) {
  test(`${name} --bogus: one line naming the flag, exit 2, no stack trace`, { timeout: 90_000 }, () => {
    const script = /\s(\S+\.ts)$/.exec(task.command)?.[1];
    assert.ok(script, `${name}: a command ending in its script (${task.command})`);
    const r = spawnSync(deno, ["run", "--allow-all", join(repoRoot, script), "--bogus"], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 80_000,
    });
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    assert.match(r.stderr.split("\n")[0], new RegExp(`^${name.replace(/[:]/g, "\\$&")}: .*--bogus`), r.stderr);
    assert.doesNotMatch(r.stderr, /^\s+at /m, `${name} printed a stack trace:\n${r.stderr}`);
  });
}
