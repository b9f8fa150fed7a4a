/**
 * The software device's DOCA RDMA (libdoca_rdma over TCP), from its own C test programs: two processes connect by
 * exported details and by RDMA CM, and every task kind moves real bytes between them (sim/tests/rdma_pair.c); how
 * connections end, against our own contexts and raw TCP peers (sim/tests/rdma_close.c).
 * Build first: `deno task sim:build`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runSimTestProgram } from "./helpers/sim-program.ts";


test("rdma_pair: write, read, send, immediates, atomics, sync events, refusals and peer loss between two processes", () => {
  const out = runSimTestProgram("rdma_pair");
  for (const line of ["exported details ok", "rdma cm ok", "rdma cm churn ok", "ok"]) {
    assert.match(out, new RegExp(`^rdma_pair: ${line}$`, "m"));
  }
});

test("rdma_close: a vanished requester, a prompt disconnect, one peer socket per export, a connect after the close, a stalled burst", () => {
  const out = runSimTestProgram("rdma_close");
  for (const line of ["vanished requester ok", "prompt disconnect ok", "one peer socket ok", "connect after close ok", "stalled burst ok", "ok"]) {
    assert.match(out, new RegExp(`^rdma_close: ${line}$`, "m"));
  }
});
