/**
 * The software device's DOCA RDMA (libdoca_rdma over TCP), from its own C test program: two processes connect by
 * exported details and by RDMA CM, and every task kind moves real bytes between them (sim/tests/rdma_pair.c).
 * Build first: `deno task sim:build`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const program = join(root, "build", "sim", "bin", "rdma_pair");

test("rdma_pair: write, read, send, immediates, atomics, sync events, refusals, peer loss, a vanished requester, a prompt disconnect", () => {
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const dir = mkdtempSync(join(tmpdir(), "doca-sim-rdma-"));
  try {
    const run = spawnSync(program, [], {
      // The test program leaves its objects to exit (strict mode would list them as leaks, which is not its point)
      env: { ...process.env, DOCA_SIM_DIR: dir, DOCA_SIM_STRICT: "0" },
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(run.status, 0, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^rdma_pair: exported details ok$/m);
    assert.match(run.stdout, /^rdma_pair: rdma cm ok$/m);
    assert.match(run.stdout, /^rdma_pair: rdma cm churn ok$/m);
    assert.match(run.stdout, /^rdma_pair: vanished requester ok$/m);
    assert.match(run.stdout, /^rdma_pair: prompt disconnect ok$/m);
    assert.match(run.stdout, /^rdma_pair: ok$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
