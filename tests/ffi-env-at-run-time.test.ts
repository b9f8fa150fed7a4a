/**
 * Configuration a program sets in process.env at run time reaches the software device the same way on Deno, Bun and
 * Node (issue 32 §2): on Bun, `process.env.DOCA_SIM_DIR = ...` never reached C's getenv, so a Comch server listened
 * in the default folder and both sides timed out. The child (helpers/env-at-run-time.ts) sets DOCA_SIM_SIDE and
 * DOCA_SIM_DIR itself; it starts with neither.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { repoRoot, runtimeCommand } from "./helpers/spawn-runtime.ts";

const dir = mkdtempSync(join(tmpdir(), "doca-ts-env-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("DOCA_SIM_SIDE and DOCA_SIM_DIR set by the program reach the software device", { timeout: 60_000 }, () => {
  const env = { ...process.env };
  delete env.DOCA_SIM_SIDE;
  delete env.DOCA_SIM_DIR;
  const cmd = runtimeCommand(fileURLToPath(new URL("./helpers/env-at-run-time.ts", import.meta.url)), [dir, "env-at-run-time"]);
  const r = spawnSync(cmd.command, cmd.args, { cwd: repoRoot, env, encoding: "utf8", timeout: 50_000 });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim()) as { devices: string[]; files: string[] };
  assert.deepEqual(got.devices, ["0000:03:00.1"], "the DPU side, as process.env said");
  assert.ok(got.files.length > 0, `the Comch server's socket is in the folder process.env named: ${JSON.stringify(got.files)}`);
});
