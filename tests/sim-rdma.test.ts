/**
 * The software device's DOCA RDMA (libdoca_rdma over TCP), from its own C test programs: two processes connect by
 * exported details and by RDMA CM, and every task kind moves real bytes between them (sim/tests/rdma_pair.c); how
 * connections end, against our own contexts and raw TCP peers (sim/tests/rdma_close.c).
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

function runProgram(name: string) {
  const program = join(root, "build", "sim", "bin", name);
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const dir = mkdtempSync(join(tmpdir(), "doca-sim-rdma-"));
  try {
    const run = spawnSync(program, [], {
      // The test programs leave their objects to exit (strict mode would list them as leaks, which is not their point)
      env: { ...process.env, DOCA_SIM_DIR: dir, DOCA_SIM_STRICT: "0" },
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(run.status, 0, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("rdma_pair: write, read, send, immediates, atomics, sync events, refusals and peer loss between two processes", () => {
  const out = runProgram("rdma_pair");
  for (const line of ["exported details ok", "rdma cm ok", "rdma cm churn ok", "ok"]) {
    assert.match(out, new RegExp(`^rdma_pair: ${line}$`, "m"));
  }
});

test("rdma_close: a vanished requester, a prompt disconnect, one peer socket per export, a connect after the close, a stalled burst", () => {
  const out = runProgram("rdma_close");
  for (const line of ["vanished requester ok", "prompt disconnect ok", "one peer socket ok", "connect after close ok", "stalled burst ok", "ok"]) {
    assert.match(out, new RegExp(`^rdma_close: ${line}$`, "m"));
  }
});
