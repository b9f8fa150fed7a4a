/**
 * Messages that must point at the right fix: pack:offline without a cross compiler names the cross-compiler
 * packages (not the native gcc), and pack-offline prints that hint.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compilerMissingHint } from "../scripts/cross-compiler.ts";

test("a missing cross compiler suggests the cross-compiler packages, a missing native one gcc", () => {
  const cross = compilerMissingHint("aarch64", "x86_64", "aarch64-linux-gnu-gcc");
  assert.match(cross, /apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross/);
  assert.doesNotMatch(cross, /install gcc libc6-dev/);
  assert.match(compilerMissingHint("x86_64", "aarch64", "x86_64-linux-gnu-gcc"), /gcc-x86-64-linux-gnu libc6-dev-amd64-cross/);
  assert.match(compilerMissingHint("x86_64", "x86_64", "cc"), /apt-get install gcc libc6-dev/);
});

test("pack-offline prints the hint when the builder found no compiler", () => {
  const src = readFileSync(new URL("../scripts/pack-offline.ts", import.meta.url), "utf8");
  assert.match(src, /e\.noCompiler \? compilerMissingHint\(arch, hostArch, cc\)/);
});

// One run of dma-copy speaks with one prefix: its INFO line, its error line ("dma-copy: host side: …"), never
// "[dma-copy host] INFO:" beside "dma-copy: error:", nor "dma-copy host:" beside "dma-copy:" (one prefix rule, issue 32).
test("every stderr line of a dma-copy side starts with that side's name", { timeout: 120_000 }, async () => {
  const { startChild } = await import("../tasks/common/run-pair.ts");
  const { workspace, HOST_PCI } = await import("./helpers/tasks/workspace.ts");
  const { join } = await import("node:path");
  const { writeFileSync } = await import("node:fs");
  const w = workspace("messages-prefix");
  try {
    writeFileSync(join(w.host, "f.bin"), "x");
    const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
    // no DPU listens: the host says what it waits for (INFO), then gives up (error)
    const r = await startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, "--timeout", "1"], { ...w.env, DOCA_SIM_SIDE: "host" }, 100_000).done;
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.ok(lines.length >= 2, `an INFO line and an error line:\n${r.stderr}`);
    for (const line of lines) assert.match(line, /^dma-copy: host side: /);
    assert.match(lines.at(-1)!, /^dma-copy: host side: error: /);
  } finally {
    w.remove();
  }
});
