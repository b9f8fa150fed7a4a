/**
 * Every Comch queue of the software device is bounded (issue 17 §5, device side; docs/FAULTS.md "Comch bounds"):
 * sim/tests/comch_flood.c runs a DPU-side server that never serves its clients and reports its RSS while
 *  - 3 clients flood it with maximum-size messages (22,000 each, 256 MiB in all; 2,000 each unless DOCA_TS_SLOW=1),
 *  - a DOCA client connects and disconnects 50,000 times (3,000 unless DOCA_TS_SLOW=1, which scripts/test.ts sets
 *    for Deno only; 20-35 s on a loaded 2-core machine; `build/sim/bin/comch_flood cycles 100000` is the 100,000
 *    figure of docs/FAULTS.md),
 *  - 600 raw peers connect and never complete the handshake (more than the 512 client slots): after the server's
 *    handshake deadline (300 ms in the test; 10 s by default) a DOCA client still connects,
 *  - a server configured with a maximum message size of 256 is sent 4,000 bytes through the API (refused at
 *    alloc_init) and by a raw peer (disconnected; the message never reaches the server's callback).
 * The figures are printed; the C program fails when the RSS grows by 8 MiB under the flood or 2 MiB over the cycles.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { FaultCounters, faultSpace, removeSpaces, repoRoot } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-comch-bounds");
after(() => {
  removeSpaces();
  counters.print();
});

const slow = process.env.DOCA_TS_SLOW === "1";
const program = join(repoRoot, "build", "sim", "bin", "comch_flood");

function run(args: string[]): string {
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const w = faultSpace(`comch-${args[0]}`);
  const env = { ...process.env, DOCA_SIM_DIR: w.sim, DOCA_SIM_LOG: "1", DOCA_SIM_STRICT: "1" } as Record<string, string>;
  delete env.DOCA_SIM_CONFIG;
  delete env.DOCA_SIM_SIDE;
  const r = spawnSync(program, args, { env, encoding: "utf8", timeout: 180_000 });
  counters.inputs++;
  assert.equal(r.signal, null, `comch_flood ${args.join(" ")} killed (${r.signal}):\n${r.stdout}\n${r.stderr}`);
  assert.equal(r.status, 0, `comch_flood ${args.join(" ")} failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, new RegExp(`^PASS comch_flood ${args[0]}$`, "m"));
  assert.doesNotMatch(r.stderr, /strict:/);
  for (const line of r.stdout.split("\n").filter((l) => l.startsWith("RSS "))) console.log(`fault-comch-bounds: ${line}`);
  return r.stdout;
}

describe("Comch on the software device: bounded under clients the DPU never serves", () => {
  test("a flood of maximum-size messages from 3 clients does not grow the server", { timeout: 300_000 }, () => {
    const out = run(["flood", slow ? "22000" : "2000"]);
    counters.faults += 3;
    assert.match(out, /^SERVER msgs=\d+ too_long=0 connects=3 disconnects=3$/m);
  });

  test("connect/disconnect cycles reclaim every connection", { timeout: 300_000 }, () => {
    const n = slow ? 50_000 : 3_000;
    const out = run(["cycles", String(n)]);
    counters.faults += n;
    assert.match(out, new RegExp(`^SERVER msgs=0 too_long=0 connects=${n} disconnects=${n}$`, "m"));
  });

  test("peers that never complete the handshake do not hold the server's client slots", { timeout: 300_000 }, () => {
    const out = run(["halfopen"]);
    counters.faults += 600;
    assert.match(out, /^ok \d+ peers connected without a handshake; [\d.]+ s later a DOCA client connected and sent$/m);
    assert.match(out, /^SERVER msgs=1 too_long=0 connects=1 disconnects=1$/m);
  });

  test("a message longer than the receiver's configured maximum never reaches it", { timeout: 300_000 }, () => {
    const out = run(["bigmsg"]);
    counters.faults += 2;
    assert.match(out, /DOCA_ERROR_INVALID_VALUE at alloc_init/);
    assert.match(out, /the peer is disconnected/);
  });
});
