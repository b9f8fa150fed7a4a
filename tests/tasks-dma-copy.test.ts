/**
 * dma-copy end to end on the software device: the host and DPU sides run as two child processes of this test's
 * runtime, with a private DOCA_SIM_DIR per copy. Sizes around the DMA buffer limit in both directions, NVIDIA's
 * classic sequence, and failures (refusals, a peer that dies, a bad target) that must end with a clear message, a
 * non-zero exit and no file (or temporary file) left behind.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { type ChildResult, runCopyPair, startChild } from "../tasks/common/run-pair.ts";
import type { Summary } from "../tasks/dma-copy/session.ts";
import { defaultTimeout, DPU_PCI, HOST_PCI, MAX_BUF, sha256File, type Workspace, workspaces, writePatternFile } from "./helpers/tasks/workspace.ts";
import { startHost, startListeningDpu } from "./helpers/tasks/dma-copy-sides.ts";

const MiB = 1024 * 1024;
const space = workspaces(after);

const hostArgs = (file: string, extra: string[] = []) => ["-f", file, "-p", HOST_PCI, "--json-output", ...defaultTimeout(extra), ...extra];
const dpuArgs = (file: string, extra: string[] = []) => ["-f", file, "-p", DPU_PCI, "-r", HOST_PCI, "--json-output", ...defaultTimeout(extra), ...extra];

function summary(r: ChildResult, who: string): Summary {
  assert.equal(r.code, 0, `${who} exited ${r.code ?? r.signal}; stderr:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Summary;
}

async function copy(size: number, direction: "host→dpu" | "dpu→host", extra: string[] = [], dpuExtra: string[] = extra) {
  const w = space("copy");
  const src = direction === "host→dpu" ? join(w.host, "data.bin") : join(w.dpu, "data.bin");
  const dst = direction === "host→dpu" ? join(w.dpu, "data.bin") : join(w.host, "data.bin");
  const expect = writePatternFile(src, size, size + 7);
  const { host, dpu } = await runCopyPair({
    hostArgs: hostArgs(join(w.host, "data.bin"), extra),
    dpuArgs: dpuArgs(join(w.dpu, "data.bin"), dpuExtra),
    env: w.env,
    timeoutMs: 120_000,
  });
  const h = summary(host, "host");
  const d = summary(dpu, "DPU");
  assert.equal(sha256File(dst), expect, "received file differs from the original");
  assert.deepEqual(w.list(w.host), ["data.bin"], "host folder has exactly the file (no temporary left)");
  assert.deepEqual(w.list(w.dpu), ["data.bin"], "DPU folder has exactly the file (no temporary left)");
  assert.equal(h.bytes, size);
  assert.equal(d.bytes, size);
  assert.equal(h.role, direction === "host→dpu" ? "send" : "receive");
  assert.equal(d.role, direction === "host→dpu" ? "receive" : "send");
  return { h, d, expect };
}

describe("dma-copy between two doca-ts processes (extended protocol)", () => {
  for (const direction of ["host→dpu", "dpu→host"] as const) {
    for (const [label, size, chunks] of [
      ["0 B", 0, 0],
      ["1 B", 1, 1],
      ["4 KiB", 4096, 1],
      ["exactly one DMA buffer", MAX_BUF, 1],
      ["one buffer + 1 byte", MAX_BUF + 1, 2],
    ] as const) {
      test(`${direction} ${label}`, async () => {
        const { h, d, expect } = await copy(size, direction);
        assert.equal(h.mode, "extended");
        assert.equal(h.chunks, chunks);
        assert.equal(d.chunks, chunks);
        assert.equal(h.sha256, expect, "host's verified SHA-256 is the original's");
        assert.equal(d.sha256, expect, "DPU's verified SHA-256 is the original's");
      });
    }
    test(`${direction} 64 MiB, several chunks in flight, bounded memory`, async () => {
      const { h, d } = await copy(64 * MiB, direction, ["--stats"]);
      assert.equal(h.chunks, 32);
      assert.ok(h.slots > 1, "several DMA tasks in flight");
      // Neither side may hold the file: peak RSS well under 64 MiB above a runtime's baseline.
      for (const s of [h, d]) assert.ok((s.peakRssBytes ?? 0) < 64 * MiB + 200 * MiB, `peak RSS ${s.peakRssBytes}`);
    });
  }

  test("1 GiB both ways (DOCA_TS_SLOW=1)", { skip: process.env.DOCA_TS_SLOW !== "1" }, async () => {
    for (const direction of ["host→dpu", "dpu→host"] as const) {
      const { h, d } = await copy(1024 * MiB, direction, ["--stats", "--timeout", "60"]);
      process.stderr.write(
        `1 GiB ${direction}: ${(h.bytes / Math.max(h.seconds, d.seconds) / MiB).toFixed(0)} MiB/s, ` +
          `peak RSS host ${((h.peakRssBytes ?? 0) / MiB).toFixed(0)} MiB, DPU ${((d.peakRssBytes ?? 0) / MiB).toFixed(0)} MiB\n`,
      );
      for (const s of [h, d]) assert.ok((s.peakRssBytes ?? 0) < 400 * MiB, `peak RSS ${s.peakRssBytes} must not grow with the file`);
    }
  });

  test("a small chunk size and few slots still copy every byte in order", async () => {
    const { h } = await copy(300_001, "dpu→host", ["--chunk-size", "4096", "--slots", "3"]);
    assert.equal(h.chunks, 74);
    assert.equal(h.slots, 3);
  });
});

describe("NVIDIA's classic single-buffer sequence", () => {
  // --classic makes a doca-ts side behave like NVIDIA's application: no marker, one buffer, no extension messages.
  for (const [who, hostExtra, dpuExtra] of [
    ["both sides classic", ["--classic"], ["--classic"]],
    ["NVIDIA-like host, doca-ts DPU", ["--classic"], []],
    ["doca-ts host, NVIDIA-like DPU", [], ["--classic"]],
  ] as const) {
    test(`${who}: both directions in one buffer`, async () => {
      for (const direction of ["host→dpu", "dpu→host"] as const) {
        const { h, d } = await copy(100_000, direction, [...hostExtra], [...dpuExtra]);
        assert.equal(h.mode, "classic");
        assert.equal(d.mode, "classic");
        assert.equal(h.chunks, 1);
      }
    });
  }

  for (const [who, hostExtra, dpuExtra] of [
    ["NVIDIA-like host → doca-ts DPU", ["--classic"], []],
    ["doca-ts host → NVIDIA-like DPU", [], ["--classic"]],
  ] as const) {
    test(`${who}: a file larger than one buffer is refused with the limit named, nothing written`, async () => {
      const w = space("refuse");
      writePatternFile(join(w.host, "big.bin"), MAX_BUF + 1);
      const { host, dpu } = await runCopyPair({
        hostArgs: hostArgs(join(w.host, "big.bin"), [...hostExtra]),
        dpuArgs: dpuArgs(join(w.dpu, "big.bin"), [...dpuExtra]),
        env: w.env,
      });
      assert.notEqual(dpu.code, 0);
      assert.notEqual(host.code, 0);
      assert.match(dpu.stderr, new RegExp(`supports at most ${MAX_BUF} bytes`));
      assert.match(host.stderr, /refused/);
      assert.deepEqual(w.list(w.dpu), []);
    });
  }
});

describe("failures end with a message, a non-zero exit and no partial file", () => {
  test("file on both sides", async () => {
    const w = space("both");
    writePatternFile(join(w.host, "f.bin"), 10);
    writePatternFile(join(w.dpu, "f.bin"), 10);
    const { host, dpu } = await runCopyPair({ hostArgs: hostArgs(join(w.host, "f.bin")), dpuArgs: dpuArgs(join(w.dpu, "f.bin")), env: w.env });
    assert.notEqual(host.code, 0);
    assert.notEqual(dpu.code, 0);
    assert.match(dpu.stderr, /exists on both the host and the DPU/);
    assert.match(host.stderr, /exists on both the host and the DPU/, "the host hears the DPU's reason");
  });

  test("file on neither side", async () => {
    const w = space("neither");
    const { host, dpu } = await runCopyPair({ hostArgs: hostArgs(join(w.host, "f.bin")), dpuArgs: dpuArgs(join(w.dpu, "f.bin")), env: w.env });
    assert.notEqual(host.code, 0);
    assert.match(dpu.stderr, /exists on neither/);
    assert.deepEqual([...w.list(w.host), ...w.list(w.dpu)], []);
  });

  test("the DPU cannot create its target: the host is told why", async () => {
    const w = space("badpath");
    writePatternFile(join(w.host, "f.bin"), 5000);
    const { host, dpu } = await runCopyPair({
      hostArgs: hostArgs(join(w.host, "f.bin")),
      dpuArgs: dpuArgs(join(w.dpu, "no-such-dir", "f.bin")),
      env: w.env,
    });
    assert.notEqual(dpu.code, 0);
    assert.notEqual(host.code, 0);
    assert.match(dpu.stderr, /no-such-dir/);
    assert.match(host.stderr, /the DPU refused the copy: .*no-such-dir/);
    assert.deepEqual(w.list(w.host), ["f.bin"], "the host's file untouched");
  });

  test("the DPU dies in the middle of DPU → host: no file on the host", { timeout: 120_000 }, async () => {
    const w = space("kill");
    writePatternFile(join(w.dpu, "f.bin"), 256 * MiB);
    const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
    const dpu = startChild(script, ["--side", "dpu", ...dpuArgs(join(w.dpu, "f.bin"), ["--chunk-size", "65536", "--slots", "2"])], { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, 60_000);
    await dpu.waitForStderr("waiting for the host", 30_000);
    const host = startChild(script, ["--side", "host", ...hostArgs(join(w.host, "f.bin"), ["--timeout", "5"])], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000);
    // Kill the DPU once the host's temporary file exists (the copy is under way).
    for (let i = 0; i < 600 && w.list(w.host).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    dpu.kill();
    const h = await host.done;
    await dpu.done;
    assert.notEqual(h.code, 0, "host must fail");
    assert.match(h.stderr, /error: /);
    assert.equal(existsSync(join(w.host, "f.bin")), false, "no file under the target name");
    assert.deepEqual(w.list(w.host), [], "temporary file removed");
  });

  test("no DPU at all: the host gives up after --timeout", { timeout: 60_000 }, async () => {
    const w = space("nopeer");
    writePatternFile(join(w.host, "f.bin"), 10);
    const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
    const t0 = Date.now();
    const r = await startChild(script, ["--side", "host", ...hostArgs(join(w.host, "f.bin"), ["--timeout", "2"])], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /error: /);
    assert.ok(Date.now() - t0 < 30_000, "bounded by the timeout");
  });
});

describe("a doca-ts DPU against NVIDIA's exact host bytes (tests/helpers/tasks/nvidia-host.ts)", () => {
  const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
  const nvidiaHost = new URL("./helpers/tasks/nvidia-host.ts", import.meta.url).pathname;

  async function withDpu(w: Workspace, dpuFile: string, hostArgs: string[]) {
    const dpu = startChild(script, ["--side", "dpu", ...dpuArgs(dpuFile)], { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, 60_000);
    await dpu.waitForStderr("waiting for the host", 30_000);
    const host = await startChild(nvidiaHost, hostArgs, { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    assert.equal(host.code, 0, host.stderr);
    return { host: JSON.parse(host.stdout.trim()) as Record<string, string>, dpu: await dpu.done };
  }

  test("host sends: unmarked direction answer, one DMA, success status", async () => {
    const w = space("nv-send");
    const expect = writePatternFile(join(w.host, "f.bin"), 100_000);
    const { host, dpu } = await withDpu(w, join(w.dpu, "f.bin"), ["send", join(w.host, "f.bin")]);
    assert.equal(dpu.code, 0, dpu.stderr);
    assert.equal(host.answer, "01000000" + "01000000" + "0000000000000000", "DIRECTION, file_in_host=1, zero padding");
    assert.equal(host.status, "03000000" + "01000000");
    assert.equal(sha256File(join(w.dpu, "f.bin")), expect);
  });

  test("DPU sends: its size in the answer, big-endian", async () => {
    const w = space("nv-recv");
    const expect = writePatternFile(join(w.dpu, "f.bin"), 5000);
    const { host, dpu } = await withDpu(w, join(w.dpu, "f.bin"), ["recv", join(w.host, "f.bin")]);
    assert.equal(dpu.code, 0, dpu.stderr);
    assert.equal(host.answer, "01000000" + "00000000" + "0000000000001388");
    assert.equal(host.status, "0300000001000000");
    assert.equal(sha256File(join(w.host, "f.bin")), expect);
  });

  test("more than one buffer: failure status only (no extension message), DPU names the limit", async () => {
    const w = space("nv-big");
    writePatternFile(join(w.host, "f.bin"), MAX_BUF + 1);
    const { host, dpu } = await withDpu(w, join(w.dpu, "f.bin"), ["send", join(w.host, "f.bin")]);
    assert.equal(host.answer, "0300000000000000");
    assert.notEqual(dpu.code, 0);
    assert.match(dpu.stderr, /NVIDIA's doca_dma_copy.* supports at most 2097152 bytes/);
    assert.deepEqual(w.list(w.dpu), []);
  });

  test("a 15-byte direction message is answered with a failure status", async () => {
    const w = space("nv-bad");
    const { host, dpu } = await withDpu(w, join(w.dpu, "f.bin"), ["garbage", "01000000010000000000000000000a"]);
    assert.equal(host.answer, "0300000000000000");
    assert.notEqual(dpu.code, 0);
    assert.match(dpu.stderr, /DIRECTION message must be 16 bytes, got 15/);
  });
});

describe("the DPU verifies what a doca-ts host announces (tests/helpers/tasks/lying-host.ts)", () => {
  const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
  const lyingHost = new URL("./helpers/tasks/lying-host.ts", import.meta.url).pathname;

  async function lie(mode: "bad-checksum" | "bad-offset") {
    const w = space(mode);
    writePatternFile(join(w.host, "f.bin"), 3 * MAX_BUF + 5);
    const dpu = startChild(script, ["--side", "dpu", ...dpuArgs(join(w.dpu, "f.bin"))], { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, 60_000);
    await dpu.waitForStderr("waiting for the host", 30_000);
    const host = await startChild(lyingHost, [mode, join(w.host, "f.bin")], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    assert.equal(host.code, 0, host.stderr);
    return { w, host: JSON.parse(host.stdout.trim()) as { received: string[]; status?: boolean; reason?: string; error?: string }, dpu: await dpu.done };
  }

  test("a wrong SHA-256: failure status with the reason, no file", async () => {
    const { w, host, dpu } = await lie("bad-checksum");
    assert.equal(host.error, undefined);
    assert.deepEqual(host.received, ["104", "105", "3"], "the DPU's CHECKSUM, FAILURE_REASON, then STATUS");
    assert.equal(host.status, false);
    assert.match(host.reason ?? "", /SHA-256 mismatch/);
    assert.notEqual(dpu.code, 0);
    assert.match(dpu.stderr, /SHA-256 mismatch/);
    assert.deepEqual(w.list(w.dpu), [], "nothing under the target name, no temporary file");
  });

  test("a chunk at the wrong offset: protocol error, no file", async () => {
    const { w, host, dpu } = await lie("bad-offset");
    assert.equal(host.status, false);
    assert.match(host.reason ?? "", /out of order or out of range/);
    assert.notEqual(dpu.code, 0);
    assert.deepEqual(w.list(w.dpu), []);
  });
});

describe("a stop at any moment reaches the peer as its reason (issue 29)", () => {
  // As rdma-copy's test (tests/tasks-rdma-copy.test.ts): SIGINT or SIGTERM at seeded random moments of paced copies
  // (8 KiB chunks, two slots: chunk messages and DMA tasks always in flight), to the sender or the receiver, in both
  // directions; the other side must print the stopped side's reason every time.
  test("SIGINT or SIGTERM to either side, 8 random moments: the other side prints why", { timeout: 900_000 }, async () => {
    const seed = Number(process.env.DOCA_TS_STOP_SEED ?? Date.now() % 100_000);
    let state = seed;
    const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
    const paced = ["--chunk-size", "8192", "--slots", "2", "--timeout", "30", "--quiet"];
    let landed = 0;
    for (let round = 0; round < 8; round++) {
      const fromHost = round % 4 < 2;
      const stopSender = round % 2 === 0;
      const signal = round % 8 < 4 ? "SIGTERM" : "SIGINT";
      const stopHost = fromHost === stopSender;
      const delayMs = Math.floor(random() * 400);
      const what = `round ${round} (seed ${seed}): ${signal} to the ${stopSender ? "sender" : "receiver"} (${stopHost ? "host" : "DPU"}) ` +
        `${delayMs} ms into a ${fromHost ? "host → DPU" : "DPU → host"} copy`;
      const w = space("stop");
      // 64 MiB in 8 KiB chunks: over a second of copying even on a quiet machine, so most of the random moments (up
      // to 400 ms in) land while chunks move (16 MiB finished first in 5 of 8 rounds there)
      writePatternFile(join(fromHost ? w.host : w.dpu, "f.bin"), 64 * MiB, round + 1);
      const dpu = await startListeningDpu(w, paced, 120_000);
      const host = startHost(w, paced, 120_000);
      const receiverDir = fromHost ? w.dpu : w.host;
      for (let i = 0; i < 3000 && w.list(receiverDir).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, delayMs));
      (stopHost ? host : dpu).signal!(signal);
      const [h, d] = await Promise.all([host.done, dpu.done]);
      const [mine, theirs] = stopHost ? [h, d] : [d, h];
      if (theirs.code === 0) continue; // the copy was complete for the other side before the stop: no moment tested
      landed++;
      const context = `${what}\nstopped (${mine.code ?? mine.signal}): ${mine.stderr}\nother (${theirs.code}): ${theirs.stderr}`;
      assert.equal(mine.code, signal === "SIGTERM" ? 143 : 130, context);
      assert.match(mine.stderr, new RegExp(`interrupted \\(${signal}\\)`), context);
      assert.equal(theirs.code, 1, context);
      assert.match(theirs.stderr, new RegExp(`the ${stopHost ? "host" : "DPU"} side stopped: interrupted \\(${signal}\\)`), context);
      assert.deepEqual(w.list(receiverDir), [], `${context}: no file and no temporary file on the receiver`);
    }
    assert.ok(landed >= 4, `only ${landed} of 8 stops landed before the copy finished`);
  });
});
