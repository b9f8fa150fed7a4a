/**
 * NVIDIA's storage reference application (DOCA 3.3, applications/storage of NVIDIA-DOCA/doca-samples), zero-copy
 * flow, built unmodified against the software device and run as its README has it: target_rdma (the storage server),
 * comch_to_rdma_zero_copy (the DPU: Comch to the host, RDMA to the target, the host's memory re-exported so the
 * target's RDMA reaches the host directly) and initiator_comch (the host), three processes, RDMA over loopback.
 * Two runs: a write of the whole storage followed by a read back that the initiator verifies
 * (read_write_data_validity_test), and a read-only run against content the target was started with
 * (read_only_data_validity_test), plus that run against the wrong content, which the initiator must reject.
 *
 * Nothing of NVIDIA's is in this repository: the programs come from a local snapshot (tools/nvidia-snapshot.ts);
 * without one every case is skipped with a line saying so. Harness pieces (tests/nvidia-samples): the doca_argp and
 * doca_log stand-ins; thread_start_delay.c, preloaded (see its header: a data race in NVIDIA's worker start that a
 * loaded two-core machine loses). The programs build against the device's own headers (sim/include).
 *
 * The GGA-offload flow (where liblz4's development headers are, as NVIDIA's meson builds it; skipped with a line
 * otherwise): NVIDIA's gga_offload_sbc_generator prepares three targets' content from a plain file (each block
 * LZ4-compressed, split in two halves, a parity half by DOCA's erasure coding), three target_rdma serve it,
 * comch_to_rdma_gga_offload relays (reads two halves per block, recovers a missing half with EC when told to, and
 * decompresses straight into the host's memory) and initiator_comch verifies every block against the plain file. Compile flags supply what DOCA's real headers bring
 * in transitively and the device's do not: <cstring>, and IB_DEVICE_NAME_MAX (libibverbs' headers; here the
 * kernel's rdma/ib_user_verbs.h).
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findSnapshot, NO_SNAPSHOT } from "../tools/nvidia-snapshot.ts";
import {
  brief,
  buildFolder,
  buildPrograms,
  flow,
  ggaAvailable,
  ggaFlow,
  generateGgaContent,
  lz4Missing,
  type Proc,
  removeBuild,
} from "../tools/nvidia-storage.ts";

const snapshot = findSnapshot();
const skip = snapshot ? false : NO_SNAPSHOT;
if (!snapshot) console.log(`# NVIDIA storage application skipped: ${skip}`);

const BLOCKS = 64;
const BLOCK_SIZE = 4096;

function assertClean(r: { host: Proc; dpu: Proc; target: Proc }): void {
  const logs = `--- target\n${brief(r.target.log)}\n--- dpu\n${brief(r.dpu.log)}\n--- host\n${brief(r.host.log)}`;
  assert.equal(r.host.code, 0, `initiator_comch exited ${r.host.code}\n${logs}`);
  assert.equal(r.dpu.code, 0, `comch_to_rdma_zero_copy exited ${r.dpu.code}\n${logs}`);
  assert.equal(r.target.code, 0, `target_rdma exited ${r.target.code}\n${logs}`);
  assert.match(r.host.log, new RegExp(`Operation count: ${BLOCKS}\\b`), logs);
  assert.match(r.host.log, /Storage shutdown/, logs);
  assert.doesNotMatch(`${r.host.log}${r.dpu.log}${knownTargetLines(r.target.log)}`, /^\[ERR\]|EXCEPTION/m, logs);
}

/**
 * target_rdma's worker teardown logs "Failed to destroy ..." when the destroy SUCCEEDS (its checks read
 * `if (ret == DOCA_SUCCESS) DOCA_LOG_ERR(...)`, NVIDIA's DOCA 3.3 target_rdma.cpp): those four lines are its
 * successes, not errors, and are dropped before looking for errors.
 */
function knownTargetLines(log: string): string {
  const inverted = /^\[ERR\]\[TARGET_RDMA\] Failed to destroy (rdma control context: DOCA_SUCCESS|rdma data context: DOCA_SUCCESS|progress engine|buffer inventory)$/;
  return log.split("\n").filter((l) => !inverted.test(l)).join("\n");
}

// Built when the file loads, not in a hook: compiling the programs takes longer than some runners allow a hook
if (snapshot) buildPrograms(snapshot);
const ggaSkip = !snapshot ? skip : ggaAvailable() ? false : (lz4Missing() ?? "the GGA-offload programs were not built");
if (snapshot && ggaSkip) console.log(`# NVIDIA storage GGA-offload flow skipped: ${ggaSkip}`);

describe("NVIDIA's storage application (zero copy), unmodified, on the software device", { skip }, () => {
  // the build is removed after the last suite that runs (the GGA one, unless it is skipped)
  after(() => {
    if (ggaSkip) removeBuild();
  });

  test("a write of the whole storage, then a read back the initiator verifies", { timeout: 150_000 }, async () => {
    // one operation per block: each writes its block from the host's memory, clears it, reads it back and compares
    const r = await flow("read_write_data_validity_test", ["--block-count", String(BLOCKS), "--block-size", String(BLOCK_SIZE)], [
      "--run-limit-operation-count", String(BLOCKS),
    ]);
    assertClean(r);
  });

  test("a read-only run against the content the target was started with (and the wrong content is caught)", { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(buildFolder(), "content-"));
    const content = join(dir, "content.bin"), other = join(dir, "other.bin");
    const bytes = new Uint8Array(BLOCKS * BLOCK_SIZE);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + (i >> 12)) & 0xff;
    writeFileSync(content, bytes);
    writeFileSync(other, bytes.map((b, i) => i === 5 * BLOCK_SIZE + 17 ? b ^ 1 : b));
    const target = ["--binary-content", content, "--block-count", String(BLOCKS), "--block-size", String(BLOCK_SIZE)];
    const limit = ["--run-limit-operation-count", String(BLOCKS)];
    assertClean(await flow("read_only_data_validity_test", target, [...limit, "--storage-plain-content", content]));
    // one byte differs from what the target holds: the initiator's verification must say so
    const wrong = await flow("read_only_data_validity_test", target, [...limit, "--storage-plain-content", other]);
    assert.notEqual(wrong.host.code, 0, brief(wrong.host.log));
    assert.match(wrong.host.log, /does not match expected value/);
    assert.deepEqual(readdirSync(dir).sort(), ["content.bin", "other.bin"]);
  });

  // doca-ts's relay (tasks/storage-relay.ts) in the place of NVIDIA's comch_to_rdma_zero_copy
  test("doca-ts's storage-relay between NVIDIA's initiator and target: the whole storage written and read back", { timeout: 150_000 }, async () => {
    const r = await flow("read_write_data_validity_test", ["--block-count", String(BLOCKS), "--block-size", String(BLOCK_SIZE)], [
      "--run-limit-operation-count", String(BLOCKS),
    ], "doca-ts");
    assertClean(r);
    assert.match(r.dpu.log, new RegExp(`storage-relay: ${2 * BLOCKS} requests and ${2 * BLOCKS} answers relayed`));
  });

  test("doca-ts's storage-relay: a read-only run against the target's content, and wrong content caught", { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(buildFolder(), "relay-content-"));
    const content = join(dir, "content.bin"), other = join(dir, "other.bin");
    const bytes = new Uint8Array(BLOCKS * BLOCK_SIZE).map((_, i) => (i * 7 + 3) & 0xff);
    writeFileSync(content, bytes);
    writeFileSync(other, bytes.map((b, i) => i === 9 * BLOCK_SIZE ? b ^ 0x80 : b));
    const target = ["--binary-content", content, "--block-count", String(BLOCKS), "--block-size", String(BLOCK_SIZE)];
    const limit = ["--run-limit-operation-count", String(BLOCKS)];
    assertClean(await flow("read_only_data_validity_test", target, [...limit, "--storage-plain-content", content], "doca-ts"));
    const wrong = await flow("read_only_data_validity_test", target, [...limit, "--storage-plain-content", other], "doca-ts");
    assert.notEqual(wrong.host.code, 0, brief(wrong.host.log));
    assert.match(wrong.host.log, /does not match expected value/);
  });
});

/** Compressible text (NVIDIA's generator needs each compressed block, with its header, to fit two half blocks) */
function plainText(bytes: number, seed: number): Uint8Array {
  const words = ["block", "parity", "storage", "relay", "host", "target", "lz4", "erasure", "dpu", "chunk", "read"];
  let x = seed;
  let text = "";
  while (text.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    text += words[(x >>> 8) % words.length] + ((x >>> 4) % 9 === 0 ? ".\n" : " ");
  }
  return new TextEncoder().encode(text.slice(0, bytes));
}

function assertGgaClean(r: { host: Proc; dpu: Proc; targets: Proc[] }): void {
  const logs = `${r.targets.map((t, i) => `--- target ${i + 1}\n${brief(t.log)}`).join("\n")}\n--- dpu\n${brief(r.dpu.log)}\n--- host\n${brief(r.host.log)}`;
  assert.equal(r.host.code, 0, `initiator_comch exited ${r.host.code}\n${logs}`);
  assert.equal(r.dpu.code, 0, `comch_to_rdma_gga_offload exited ${r.dpu.code}\n${logs}`);
  for (const t of r.targets) assert.equal(t.code, 0, `target_rdma exited ${t.code}\n${logs}`);
  assert.match(r.host.log, new RegExp(`Operation count: ${BLOCKS}\\b`), logs);
  assert.match(r.host.log, /Storage shutdown/, logs);
  const targetLogs = r.targets.map((t) => knownTargetLines(t.log)).join("\n");
  assert.doesNotMatch(`${r.host.log}${r.dpu.log}${targetLogs}`, /^\[ERR\]|EXCEPTION/m, logs);
}

/** The relay's own count of recovered blocks (its per-core stats) */
const recoveries = (dpuLog: string) => Number(/Recovery count: (\d+)/.exec(dpuLog)?.[1] ?? NaN);

describe("NVIDIA's storage application (GGA offload: LZ4 and erasure coding on the DPU), unmodified, on the software device", { skip: ggaSkip }, () => {
  after(() => removeBuild());
  let plain = "", other = "", content: ReturnType<typeof generateGgaContent>;

  test("the generator prepares the targets' content (LZ4 blocks, halves and EC parity)", { timeout: 150_000 }, () => {
    const dir = mkdtempSync(join(buildFolder(), "gga-content-"));
    plain = join(dir, "plain.txt");
    other = join(dir, "other.txt");
    const bytes = plainText(BLOCKS * BLOCK_SIZE, 31);
    writeFileSync(plain, bytes);
    writeFileSync(other, bytes.map((b, i) => i === 7 * BLOCK_SIZE + 100 ? b ^ 0x20 : b));
    content = generateGgaContent(plain, dir, BLOCK_SIZE);
    assert.deepEqual(readdirSync(dir).sort(), ["data_1.sbc", "data_2.sbc", "data_p.sbc", "other.txt", "plain.txt"]);
  });

  test("a read-only run: every block decompressed into the host's memory matches the plain file (and wrong content is caught)", { timeout: 300_000 }, async () => {
    assert.ok(content, "no content: the generator's test failed");
    const limit = ["--run-limit-operation-count", String(BLOCKS)];
    const r = await ggaFlow("read_only_data_validity_test", content, [...limit, "--storage-plain-content", plain]);
    assertGgaClean(r);
    assert.equal(recoveries(r.dpu.log), 0);
    const wrong = await ggaFlow("read_only_data_validity_test", content, [...limit, "--storage-plain-content", other]);
    assert.notEqual(wrong.host.code, 0, brief(wrong.host.log));
    assert.match(wrong.host.log, /does not match expected value/);
  });

  test("a read-only run with every third read recovered by erasure coding (data_1 and data_2 missing in turn)", { timeout: 150_000 }, async () => {
    assert.ok(content, "no content: the generator's test failed");
    const r = await ggaFlow("read_only_data_validity_test", content, [
      "--run-limit-operation-count", String(BLOCKS), "--storage-plain-content", plain,
    ], ["--trigger-recovery-read-every-n", "3"]);
    assertGgaClean(r);
    assert.equal(recoveries(r.dpu.log), Math.floor(BLOCKS / 3), brief(r.dpu.log));
  });

  test("a write of the whole storage (compressed, parity made by EC create), then a read back with recoveries, verified", { timeout: 150_000 }, async () => {
    assert.ok(content, "no content: the generator's test failed");
    const r = await ggaFlow("read_write_data_validity_test", content, ["--run-limit-operation-count", String(BLOCKS)], [
      "--trigger-recovery-read-every-n", "4",
    ]);
    assertGgaClean(r);
    assert.ok(recoveries(r.dpu.log) > 0, brief(r.dpu.log));
  });
});
