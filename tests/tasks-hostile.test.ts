/**
 * dma-copy treats the peer as hostile (issue 9 §3) and a copy is done only when the receiver has it (issue 12 §1):
 * a real dma-copy side against the scripted peers of tests/helpers/tasks (hostile-dpu.ts, lying-host.ts), plus
 * target names as long as the file system allows.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { runCopyPair, startChild } from "../tasks/common/run-pair.ts";
import { temporaryName } from "../tasks/transfer/atomic-file.ts";
import { printable } from "../ffi/engine/printable.ts";
import { DPU_PCI, HOST_PCI, MAX_BUF, sha256File, writePatternFile, workspaces } from "./helpers/tasks/workspace.ts";
import { startListeningDpu } from "./helpers/tasks/dma-copy-sides.ts";

const space = workspaces(after);
const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
const hostileDpu = new URL("./helpers/tasks/hostile-dpu.ts", import.meta.url).pathname;
const lyingHost = new URL("./helpers/tasks/lying-host.ts", import.meta.url).pathname;

/** A real host (receiving f.bin unless `hostHas`) against hostile-dpu.ts MODE. */
async function againstHostileDpu(mode: string, hostArgs: string[] = []) {
  const w = space(mode);
  const dpu = startChild(hostileDpu, [mode], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 90_000);
  await dpu.waitForStderr("hostile DPU listening", 60_000);
  const started = Date.now();
  const host = await startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...hostArgs], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
  const hostSeconds = (Date.now() - started) / 1000;
  dpu.kill();
  const d = await dpu.done;
  return { w, host, hostSeconds, dpu: JSON.parse(d.stdout.trim() || "{}") as { window?: { slotCount: number; slotSize: string } } };
}

describe("one deadline per wait, whatever the peer keeps sending", () => {
  for (const mode of ["reason-spam", "repeat"]) {
    test(`${mode}: --timeout 2 gives up, no file`, async () => {
      const { w, host, hostSeconds } = await againstHostileDpu(mode, ["--timeout", "2"]);
      assert.notEqual(host.code, 0, host.stderr);
      if (mode === "reason-spam") assert.match(host.stderr, /gave up waiting for the DPU's transfer limits after 2 s \(--timeout\)/);
      else assert.match(host.stderr, /expected EXT_PARAMS, got DIRECTION/);
      // The spam lasts 60 s and the child is killed at 60 s: ending well before proves the deadline held.
      assert.ok(hostSeconds < 45, `the host gave up after ${hostSeconds} s`);
      assert.deepEqual(w.list(w.host), []);
    });
  }
});

describe("bytes verified are bytes committed (issue 29)", () => {
  test("a DPU that rewrites a slot after announcing it: the host commits exactly what it verified, or nothing", { timeout: 400_000 }, async () => {
    // The host's window is the DPU's to write. A host that hashed the slot and wrote it out again from the window
    // could commit bytes it never checked; it must read each slot once and use only that copy. Three attempts.
    for (let attempt = 0; attempt < 3; attempt++) {
      const w = space(`rewrite-${attempt}`);
      const dpu = startChild(hostileDpu, ["rewrite"], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 120_000);
      await dpu.waitForStderr("hostile DPU listening", 60_000);
      const target = join(w.host, "f.bin");
      const host = await startChild(script, ["--side", "host", "-f", target, "-p", HOST_PCI, "--timeout", "60"], { ...w.env, DOCA_SIM_SIDE: "host" }, 90_000).done;
      const d = await dpu.done;
      const told = JSON.parse(d.stdout.trim() || "{}") as { rewrites?: number; sha256?: string; error?: string };
      assert.ok((told.rewrites ?? 0) > 0, `the DPU rewrote nothing: ${d.stdout} ${d.stderr}`);
      if (host.code === 0) {
        assert.equal(sha256File(target), told.sha256, "the committed file is not the file whose checksum was verified");
      } else {
        assert.equal(host.code, 1, host.stderr);
        assert.match(host.stderr, /SHA-256 mismatch/);
        assert.deepEqual(w.list(w.host), []);
      }
    }
  });
});

describe("peer text is printed with control characters escaped", () => {
  test("a FAILURE_REASON with escapes, CR and a forged line reaches stderr as one harmless line", async () => {
    const { host } = await againstHostileDpu("escape", ["--timeout", "20"]);
    assert.notEqual(host.code, 0);
    for (const c of ["\x1b", "\r", "\u202e"]) assert.ok(!host.stderr.includes(c), `raw ${JSON.stringify(c)} reached stderr`);
    assert.match(host.stderr, /the DPU refused the copy: \\x1b\[2J\\x1b\[31mEVIL\\x0derror: the copy succeeded\\x0a\\u202eforged/);
    // One line for the error (the host's INFO line saying what it connects to comes before it).
    assert.equal(host.stderr.trim().split("\n").filter((l) => !/^dma-copy: host side: (?!error: )/.test(l)).length, 1, host.stderr);
  });
  test("printable() escapes C0, DEL, C1 and bidi controls, keeps other text", () => {
    assert.equal(printable("a\tb\x7f\x9bc\u2028d é ✓"), "a\\x09b\\x7f\\x9bc\\u2028d é ✓");
  });
});

describe("memory is bounded by this side's limits, not the peer's announcements", () => {
  test("a DPU announcing 8 GiB in 1 GiB chunks gets a window of at most --slots × the host's max DMA buffer", async () => {
    const { host, dpu } = await againstHostileDpu("huge", ["--timeout", "5", "--slots", "4"]);
    assert.notEqual(host.code, 0);
    if (dpu.window) {
      assert.ok(BigInt(dpu.window.slotSize) <= BigInt(MAX_BUF), `slot of ${dpu.window.slotSize} bytes`);
      assert.ok(dpu.window.slotCount <= 4, `${dpu.window.slotCount} slots`);
    } else {
      // A folder without 8 GiB free refuses before exporting anything, naming the user's target.
      assert.match(host.stderr, /cannot create .*f\.bin: it needs 8589934592 bytes/);
    }
  });
});

describe("the receiver has the last word", () => {
  test("DPU → host: a host that vanishes after the DPU's status, before committing, makes the DPU fail", async () => {
    const w = space("vanish");
    writePatternFile(join(w.dpu, "f.bin"), 100_000);
    const dpu = await startListeningDpu(w, ["--timeout", "5"], 60_000);
    const host = await startChild(lyingHost, ["vanish-before-commit"], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    assert.equal(host.code, 0, host.stderr);
    assert.deepEqual(JSON.parse(host.stdout.trim()).received, ["104", "3"], "the DPU's CHECKSUM and STATUS");
    const d = await dpu.done;
    assert.notEqual(d.code, 0, `the DPU must not report success: ${d.stdout}${d.stderr}`);
    assert.match(d.stderr, /the host side (disconnected while waiting for|did not send it).*commit the file/);
  });
});

describe("a peer's reason beats the errors its stopping causes", () => {
  test("a host that revokes its export right after sending it: the DPU prints the host's reason, not an import hint", async () => {
    const w = space("revoked");
    const dpu = await startListeningDpu(w, ["--timeout", "10"], 60_000);
    const host = await startChild(lyingHost, ["revoke-after-descriptor"], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    assert.equal(host.code, 0, host.stderr);
    const d = await dpu.done;
    assert.notEqual(d.code, 0, d.stderr);
    assert.match(d.stderr, /the host side stopped: interrupted \(SIGINT\) while sending/, d.stderr);
    assert.doesNotMatch(d.stderr, /cannot be imported here/);
    assert.deepEqual(w.list(w.dpu), []);
  });
});

describe("any valid target name works", () => {
  test("temporary names fit NAME_MAX and stay distinct", () => {
    const long = "n".repeat(244);
    const t = temporaryName(`/x/${long}`, 4194304, "abcdefgh");
    assert.ok(Buffer.byteLength(t) <= 255, `${t.length} bytes`);
    assert.notEqual(temporaryName(`/x/${long}a`, 1, "r"), temporaryName(`/x/${long}b`, 1, "r"));
    assert.equal(temporaryName("/x/short.bin", 7, "r", ""), ".short.bin.doca-ts-7-r.part");
    assert.equal(temporaryName("/x/short.bin", 7, "r", "0a1b2c3d"), ".short.bin.doca-ts-7-0a1b2c3d-r.part");
    assert.ok(Buffer.byteLength(temporaryName(`/x/${"é".repeat(127)}`, 1, "r")) <= 255);
  });
  for (const direction of ["host→dpu", "dpu→host"] as const) {
    test(`${direction}: a 244-byte name`, async () => {
      const w = space("longname");
      const name = `${"L".repeat(240)}.bin`;
      const src = direction === "host→dpu" ? w.host : w.dpu;
      const dst = direction === "host→dpu" ? w.dpu : w.host;
      const expect = writePatternFile(join(src, name), 50_000);
      const { host, dpu } = await runCopyPair({
        hostArgs: ["-f", join(w.host, name), "-p", HOST_PCI, "--timeout", "20"],
        dpuArgs: ["-f", join(w.dpu, name), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "20"],
        env: w.env,
      });
      assert.equal(host.code, 0, host.stderr);
      assert.equal(dpu.code, 0, dpu.stderr);
      assert.equal(sha256File(join(dst, name)), expect);
      assert.deepEqual(w.list(dst), [name]);
    });
  }
});
