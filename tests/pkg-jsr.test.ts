/**
 * The package as JSR would take it (`deno publish --dry-run`, offline): deno.json exports the library and the tasks
 * (`.` and `./tasks`), and nothing in the published files is refused (JSR bans triple-slash lib directives and slow
 * types). Run by the Deno that npm installed, from every runtime (the check is the same).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "./helpers/pkg/scratch.ts";

test("deno.json exports the library and the tasks, and deno publish --dry-run accepts the package", { timeout: 240_000 }, () => {
  const config = JSON.parse(readFileSync(join(repoRoot, "deno.json"), "utf8")) as { exports: Record<string, string> };
  assert.equal(config.exports["."], "./mod.ts");
  assert.equal(config.exports["./tasks"], "./tasks/mod.ts");
  const deno = join(repoRoot, "node_modules", "deno", "bin.cjs");
  const run = spawnSync("node", [deno, "publish", "--dry-run", "--allow-dirty"], {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: 230_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.match(`${run.stdout}${run.stderr}`, /Dry run complete/);
});
