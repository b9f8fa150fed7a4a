/**
 * The software device's memory calls beyond the basics, from its own C test programs: thread safety, buffer reuse
 * and dma-buf ranges (sim/tests/memory_api.c), and memory chains, three processes as NVIDIA's storage application
 * runs them: a host's PCI export imported on a DPU, re-exported for RDMA, written and read by a remote RDMA peer,
 * with permissions intersected and every link's revocation a barrier (sim/tests/memory_chain.c).
 * Build first: `deno task sim:build`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { runSimTestProgram } from "./helpers/sim-program.ts";

/** Without the runner's other DOCA_SIM_ settings: each program sets up its own processes' device. */
const runProgram = (name: string) =>
  runSimTestProgram(name, Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("DOCA_SIM_"))));

test("memory_api: thread safety, buffer reuse by address and by data, dma-buf ranges", { timeout: 150_000 }, () => {
  const out = runProgram("memory_api");
  for (const line of ["thread safety ok", "reuse ok", "dma-buf ok", "ok"]) {
    assert.match(out, new RegExp(`^memory_api: ${line}$`, "m"));
  }
  assert.match(out, /^memory_api: udmabuf (ok|absent)$/m);
});

test("memory_chain: host memory re-exported by the DPU for RDMA, permissions, revocation by each link", { timeout: 150_000 }, () => {
  const out = runProgram("memory_chain");
  for (const line of ["write and read through the chain ok", "revocation by host and DPU ok", "permissions intersect ok", "barrier ok", "host gone ok", "ok"]) {
    assert.match(out, new RegExp(`^memory_chain: ${line}$`, "m"));
  }
});
