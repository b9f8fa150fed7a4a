/**
 * Runs one of the software device's own C test programs (build/sim/bin/NAME, from `deno task sim:build`) in a fresh
 * DOCA_SIM_DIR that is removed afterwards, and asserts that it exits 0.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "./spawn-runtime.ts";

/** The program's stdout. `env`: the environment it runs in (default: this process's), DOCA_SIM_DIR set over it. */
export function runSimTestProgram(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const program = join(repoRoot, "build", "sim", "bin", name);
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const dir = mkdtempSync(join(tmpdir(), `doca-sim-${name}-`));
  try {
    const run = spawnSync(program, [], {
      // The test programs leave their objects to exit (strict mode would list them as leaks, which is not their point)
      env: { ...env, DOCA_SIM_DIR: dir, DOCA_SIM_STRICT: "0" },
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(run.status, 0, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
