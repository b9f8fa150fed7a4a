/**
 * Revocation is a barrier, through the TypeScript API (issue 17 §1; docs/FAULTS.md "Memory is bound to pages"): the
 * usual `map.close(); reuse(memory)` is safe. This test is the host; tests/helpers/dpu-side.ts, under the same
 * runtime, streams 1 MiB DMA writes (8 in flight) into the host's export. The host closes its Mmap mid-stream,
 * zeroes the memory at once, tells the DPU, and watches: no byte may change after close() returned, and every write
 * the DPU submitted after it heard of the close must fail with a DocaError. Twenty rounds; against the device before
 * the barrier (DOCA_LIB_DIR pointing at its build) a write landed after close() in round 4, 14 or 18 of Deno and Bun
 * runs: a race, so this is a guard; sim/tests/pages_bound.c destroy_race is the C proof.
 */
import { simDir } from "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { setTimeout as sleep } from "node:timers/promises";
import { Access, Device, Mmap, NativeMemory } from "../mod.ts";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { DPU_PCI, FaultCounters, HOST_PCI } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-pages-api");
after(() => counters.print());

const LENGTH = 1024 * 1024;

async function ask(peer: RuntimeChild, message: Record<string, unknown>): Promise<Record<string, unknown>> {
  counters.inputs++;
  peer.send(message);
  const r = await peer.receive(30_000);
  assert.equal(r.error, undefined, `${String(message.op)}: ${JSON.stringify(r)}`);
  return r;
}

describe("Mmap.close() of an export is a barrier for the importer's DMA", () => {
  test("no byte changes after close() returns, and later writes fail", { timeout: 120_000 }, async () => {
    await using peer = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), {
      env: { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: simDir },
    });
    using dev = Device.open(HOST_PCI);
    using mem = NativeMemory.alloc(LENGTH);
    await ask(peer, { op: "open", pci: DPU_PCI });
    for (let round = 0; round < 20; round++) {
      mem.bytes.fill(0);
      const map = Mmap.create({ memory: mem, permissions: Access.PCI_READ_WRITE, devices: [dev] });
      await ask(peer, { op: "import", descriptor: Buffer.from(map.exportPci(dev)).toString("base64") });
      await ask(peer, { op: "stream", length: LENGTH, depth: 8 });
      assert.equal(mem.bytes[0], 0xee, "the stream writes into the export");
      map.close(); // revokes the export: from here on the memory is the host's alone
      mem.bytes.fill(0);
      await ask(peer, { op: "revoked" });
      // A window in which a late write would show; the barrier makes any wait pass, no wait makes it fail
      for (let i = 0; i < 10; i++) {
        await sleep(2);
        assert.ok(mem.bytes.every((b) => b === 0), `round ${round}: a DMA write landed after Mmap.close() returned`);
      }
      const counts = await ask(peer, { op: "streamStop" });
      counters.faults++;
      assert.equal(counts.okAfter, 0, `round ${round}: a write submitted after the close succeeded`);
      assert.ok(Number(counts.failedAfter) > 0, `round ${round}: no write was tried after the close`);
      await ask(peer, { op: "dropImport" });
    }
  });
});
