/**
 * Runs one of the benchmark commands under this Deno (--allow-all) with `--json FILE` added and returns its rows and
 * the table it printed;
 * a non-zero exit fails the calling test with the command's stderr. For tests of the benchmarks' plumbing, never
 * of their figures.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../../tasks/common/run-pair.ts";
import type { Row } from "../../benchmarks/rows.ts";

export function benchRows(script: string, args: string[], timeoutMs: number): { rows: Row[]; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), "doca-bench-rows-"));
  try {
    const file = join(dir, "rows.json");
    const r = spawnSync(process.execPath, ["run", "--allow-all", join(repoRoot, ...script.split("/")), ...args, "--json", file], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: timeoutMs,
    });
    assert.equal(r.status, 0, r.stderr);
    return { rows: JSON.parse(readFileSync(file, "utf8")) as Row[], stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
