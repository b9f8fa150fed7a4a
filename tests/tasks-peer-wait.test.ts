/**
 * Waiting for the peer: each side says once what it waits for (server name, DOCA_SIM_DIR), a timeout names the
 * likely causes, and a DPU busy with one host tells a second host so ("busy with another copy"), never a silent
 * wait ending in "disconnected".
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startChild } from "../tasks/common/run-pair.ts";
import { DPU_PCI, HOST_PCI, sha256File, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";
import { noRdma } from "./helpers/rdma-pair.ts";
import { testPort } from "../tools/ports.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const space = (tag: string) => (spaces.push(workspace(tag)), spaces.at(-1)!);
const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (text: string, part: string) => text.split(part).length - 1;

test("a host with no DPU says once what it waits for; the timeout names the likely causes", { timeout: 120_000 }, async () => {
  const w = space("wait-host");
  const r = await startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, "--timeout", "1", "--server-name", "nobody"], w.env, 90_000).done;
  assert.equal(r.code, 1, r.stderr);
  assert.equal(count(r.stderr, `connecting to the DPU side's Comch server "nobody"`), 1, r.stderr);
  assert.match(r.stderr, new RegExp(`DOCA_SIM_DIR=${w.env.DOCA_SIM_DIR}`));
  assert.match(r.stderr, /likely causes: the DPU side .* is not started yet .*another --server-name \(this side uses "nobody"\).*share DOCA_SIM_DIR/);
});

test("a DPU with no host says once what it waits for; the timeout names the likely causes", { timeout: 120_000 }, async () => {
  const w = space("wait-dpu");
  const r = await startChild(script, ["-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "1"], w.env, 90_000).done;
  assert.equal(r.code, 1, r.stderr);
  assert.equal(count(r.stderr, "waiting for the host on Comch server"), 1, r.stderr);
  assert.match(r.stderr, /no host connected within 1 s \(--timeout\); likely causes: the host side .* is not started yet/);
  assert.deepEqual(w.list(w.dpu), []);
});

test("a second host connecting to a busy DPU is told it is busy; the first copy completes", { timeout: 300_000 }, async () => {
  const w = space("busy");
  const expect = writePatternFile(join(w.host, "f.bin"), 8 * 1024 * 1024, 9);
  writePatternFile(join(w.host, "g.bin"), 4096, 3);
  const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "60", "--quiet"];
  const dpu = startChild(script, ["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...paced], { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 180_000);
  await dpu.waitForStderr("waiting for the host", 90_000);
  const first = startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced], w.env, 180_000);
  for (let i = 0; i < 6000 && w.list(w.dpu).length === 0; i++) await sleep(10); // the copy is under way
  // The first host is held (SIGSTOP) while the second asks: on a loaded machine the second one's start can outlast the
  // whole first copy, and it would then find no DPU at all. The DPU's --timeout 60 covers the pause.
  first.signal!("SIGSTOP");
  let second;
  try {
    second = await startChild(script, ["--side", "host", "-f", join(w.host, "g.bin"), "-p", HOST_PCI, "--timeout", "60"], w.env, 120_000).done;
  } finally {
    first.signal!("SIGCONT");
  }
  assert.equal(second.code, 1, second.stderr);
  assert.match(second.stderr, /the DPU refused the copy: the DPU side is busy with another copy \(receiving .*f\.bin\)/);
  assert.doesNotMatch(second.stderr, /disconnect/i);
  const [h, d] = await Promise.all([first.done, dpu.done]);
  assert.equal(h.code, 0, h.stderr);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(sha256File(join(w.dpu, "f.bin")), expect);
  assert.ok(!existsSync(join(w.dpu, "g.bin")));
});

// Both directions: the DPU gives up on a host that went silent mid-copy (held with SIGSTOP past the DPU's --timeout).
// Once the host goes on it reads why, in the DPU's words, not a bare "disconnected" (it said only that before).
for (const hostHasFile of [true, false]) {
  test(`a DPU that gave up on a silent host (${hostHasFile ? "host→DPU" : "DPU→host"}) says so to the host, which goes on to report it`, { timeout: 300_000 }, async () => {
    const w = space("gave-up");
    const [from, to] = hostHasFile ? [w.host, w.dpu] : [w.dpu, w.host];
    writePatternFile(join(from, "f.bin"), 8 * 1024 * 1024, 5);
    const paced = ["--chunk-size", "8192", "--slots", "1"];
    const dpu = startChild(script, ["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...paced, "--timeout", "3", "--quiet"], { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 180_000);
    await dpu.waitForStderr("waiting for the host", 90_000);
    const host = startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced, "--timeout", "60", "--quiet"], w.env, 180_000);
    for (let i = 0; i < 6000 && w.list(to).length === 0; i++) await sleep(10); // the copy is under way
    host.signal!("SIGSTOP");
    let d;
    try {
      d = await dpu.done;
    } finally {
      host.signal!("SIGCONT");
    }
    const h = await host.done;
    assert.equal(d.code, 1, d.stderr);
    assert.match(d.stderr, /gave up waiting for .* after 3 s \(--timeout\): the host side did not send it in time/);
    assert.notEqual(h.code, 0, h.stderr);
    assert.match(h.stderr, /the DPU side gave up waiting for .* after 3 s \(--timeout\): the host side did not send it in time/);
    assert.doesNotMatch(h.stderr, /disconnected/, h.stderr);
    assert.deepEqual(w.list(to).filter((n) => n !== "f.bin" || !hostHasFile), [], "no temporary file stays");
  });
}

// One wording for one situation (issue 32): every task that waits for a peer says, when none came within --timeout,
// "TASK: error: no … within N s (--timeout); likely causes: …", as dma-copy does; before, comch-server and
// comch-stream printed the FFI's "timed out after 1000 ms waiting for …" and rdma's listening sides the same.
describe("no peer within --timeout: one sentence shape in every task", () => {
  const taskPath = (name: string) => new URL(`../tasks/${name}.ts`, import.meta.url).pathname;
  const NO_PEER = /within 1 s \(--timeout\); likely causes: .*(is not started yet or has already exited)/;
  const comch: [string, string[], string][] = [
    ["comch-client", ["--timeout", "1"], "host"],
    ["comch-server", ["-r", HOST_PCI, "--timeout", "1"], "dpu"],
    ["comch-stream", ["--timeout", "1"], "host"],
    ["comch-stream", ["--side", "dpu", "-r", HOST_PCI, "--timeout", "1"], "dpu"],
  ];
  for (const [name, args, side] of comch) {
    test(`${name} ${args.join(" ")}`, { timeout: 120_000 }, async () => {
      const w = space(`np-${name}-${side}`);
      const r = await startChild(taskPath(name), args, { ...w.env, DOCA_SIM_SIDE: side }, 100_000).done;
      assert.equal(r.code, 1, r.stderr);
      const last = r.stderr.trim().split("\n").at(-1)!;
      assert.match(last, new RegExp(`^${name}: error: no .* within 1 s \\(--timeout\\); likely causes: `), r.stderr);
      assert.match(last, NO_PEER);
      assert.match(last, /share DOCA_SIM_DIR/);
      assert.doesNotMatch(r.stderr, /timed out after \d+ ms/);
    });
  }
  for (const name of ["rdma-copy", "rdma-ping"]) {
    for (const role of ["--listen", "--connect"]) {
      test(`${name} ${role} with nobody at the other end`, { timeout: 120_000, skip: noRdma }, async () => {
        const w = space(`np-${name}${role}`);
        const port = testPort();
        const mine = name === "rdma-copy"
          ? (role === "--listen" ? ["--receive", join(w.dpu, "r.bin")] : ["--send", join(w.host, "f.bin")])
          : [];
        if (name === "rdma-copy" && role === "--connect") writePatternFile(join(w.host, "f.bin"), 4096, 1);
        const r = await startChild(taskPath(name), [...mine, role, `127.0.0.1:${port}`, "--timeout", "1"], w.env, 100_000).done;
        assert.equal(r.code, 1, r.stderr);
        const last = r.stderr.trim().split("\n").at(-1)!;
        assert.match(last, new RegExp(`^${name}: error: (no peer connected to port|nobody listened at) .* within 1 s \\(--timeout\\); likely causes: `), r.stderr);
        assert.match(last, NO_PEER);
        assert.doesNotMatch(r.stderr, /timed out after \d+ ms/);
      });
    }
  }
});
