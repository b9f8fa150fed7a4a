/**
 * The suite runner's flags (scripts/test.ts): a bad one ends the run the way every task ends one, one line naming
 * it and exit 2. `npm test -- --bogus` printed Deno's uncaught TypeError with a stack trace and exited 1.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";

const deno = join(repoRoot, "node_modules", "deno", "deno");

for (const [args, named] of [[["--bogus"], /--bogus/], [["--timeout", "-3"], /--timeout/], [["--jobs"], /--jobs/]] as const) {
  test(`suite: test.ts ${args.join(" ")} is one line naming the flag, exit 2`, { timeout: 60_000 }, () => {
    const r = spawnSync(deno, ["run", "--allow-all", join(repoRoot, "scripts", "test.ts"), ...args], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 50_000,
    });
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^test: .* \(see --help\)$/);
    assert.match(lines[0], named);
  });
}
