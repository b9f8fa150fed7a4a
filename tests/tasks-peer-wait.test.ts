/**
 * Waiting for the peer: each side says once what it waits for (server name, DOCA_SIM_DIR), a timeout names the
 * likely causes, and a DPU busy with one host tells a second host so ("busy with another copy"), never a silent
 * wait ending in "disconnected".
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startChild } from "../tasks/common/run-pair.ts";
import { DPU_PCI, HOST_PCI, sha256File, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const space = (tag: string) => (spaces.push(workspace(tag)), spaces.at(-1)!);
const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (text: string, part: string) => text.split(part).length - 1;

test("a host with no DPU says once what it waits for; the timeout names the likely causes", async () => {
  const w = space("wait-host");
  const r = await startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, "--timeout", "1", "--server-name", "nobody"], w.env, 90_000).done;
  assert.equal(r.code, 1, r.stderr);
  assert.equal(count(r.stderr, `connecting to the DPU side's Comch server "nobody"`), 1, r.stderr);
  assert.match(r.stderr, new RegExp(`DOCA_SIM_DIR=${w.env.DOCA_SIM_DIR}`));
  assert.match(r.stderr, /likely causes: the DPU side .* is not started yet .*another --server-name \(this side uses "nobody"\).*share DOCA_SIM_DIR/);
});

test("a DPU with no host says once what it waits for; the timeout names the likely causes", async () => {
  const w = space("wait-dpu");
  const r = await startChild(script, ["-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "1"], w.env, 90_000).done;
  assert.equal(r.code, 1, r.stderr);
  assert.equal(count(r.stderr, "waiting for the host on Comch server"), 1, r.stderr);
  assert.match(r.stderr, /no host connected within 1 s \(--timeout\); likely causes: the host side .* is not started yet/);
  assert.deepEqual(w.list(w.dpu), []);
});

test("a second host connecting to a busy DPU is told it is busy; the first copy completes", async () => {
  const w = space("busy");
  const expect = writePatternFile(join(w.host, "f.bin"), 8 * 1024 * 1024, 9);
  writePatternFile(join(w.host, "g.bin"), 4096, 3);
  const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "60", "--quiet"];
  const dpu = startChild(script, ["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...paced], { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 180_000);
  await dpu.waitForStderr("waiting for the host", 90_000);
  const first = startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced], w.env, 180_000);
  for (let i = 0; i < 6000 && w.list(w.dpu).length === 0; i++) await sleep(10); // the copy is under way
  const second = await startChild(script, ["--side", "host", "-f", join(w.host, "g.bin"), "-p", HOST_PCI, "--timeout", "60"], w.env, 120_000).done;
  assert.equal(second.code, 1, second.stderr);
  assert.match(second.stderr, /the DPU refused the copy: the DPU side is busy with another copy \(receiving .*f\.bin\)/);
  assert.doesNotMatch(second.stderr, /disconnect/i);
  const [h, d] = await Promise.all([first.done, dpu.done]);
  assert.equal(h.code, 0, h.stderr);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(sha256File(join(w.dpu, "f.bin")), expect);
  assert.ok(!existsSync(join(w.dpu, "g.bin")));
});
