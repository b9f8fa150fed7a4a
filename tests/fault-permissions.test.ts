/**
 * The permission model at the API level, across two processes (this test is the host; tests/helpers/dpu-side.ts
 * is the DPU): a PCI_READ_ONLY export cannot be written, a revoked export fails the next task, and an export cannot
 * be imported through a device that has no representor of the exporting function (DOCA_SIM_CONFIG with two DPU
 * devices). Every refusal is a DocaError naming DOCA_ERROR_NOT_PERMITTED, the host's bytes are untouched, and
 * DOCA_SIM_TRACE shows no allowed access outside the exported range.
 */
import { simDir } from "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Access, Device, liveObjects, Mmap, NativeMemory } from "../mod.ts";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { assertTraceInside, DPU_PCI, FaultCounters, HOST_PCI, readTrace } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-permissions");
const scratch = mkdtempSync(join(tmpdir(), "doca-ts-fault-perm-"));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
  counters.print();
});

const live0 = liveObjects() ?? 0; // bun test runs every file in one process: compare with this file's start

const OTHER_DPU_PCI = "0000:03:00.0";
const config = join(scratch, "two-dpu-devices.json");
writeFileSync(
  config,
  JSON.stringify({
    host: { devices: [{ pci: HOST_PCI }] },
    dpu: {
      devices: [
        { pci: DPU_PCI, ibdev: "mlx5_1", representors: [{ pci: HOST_PCI, vuid: "MT0000SIM0001PF1", filter: "net" }] },
        {
          pci: OTHER_DPU_PCI,
          ibdev: "mlx5_2",
          representors: [{ pci: "0000:b2:00.0", vuid: "MT0000SIM0002PF0", filter: "net" }],
        },
      ],
    },
  }),
);

function dpu(trace: string): RuntimeChild {
  return spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), {
    env: { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: simDir, DOCA_SIM_CONFIG: config, DOCA_SIM_TRACE: trace },
  });
}

/** Sends a request; returns the reply (errors included) instead of throwing. */
async function ask(peer: RuntimeChild, message: Record<string, unknown>): Promise<Record<string, unknown>> {
  counters.inputs++;
  peer.send(message);
  return await peer.receive(15_000);
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** A fault the DPU side's reply must report: an error matching `error`, from DOCA_ERROR_NOT_PERMITTED. */
function assertNotPermitted(reply: Record<string, unknown>, error: RegExp, message: string): void {
  counters.faults++;
  assert.match(String(reply.error), error, message);
  assert.equal(reply.docaName, "DOCA_ERROR_NOT_PERMITTED");
}

/**
 * The two ends of one test: a DPU process whose accesses are traced to `name`.trace, and this (host) side's device;
 * closed at the test's end, the device first.
 */
function hostAndPeer(name: string) {
  const trace = join(scratch, `${name}.trace`);
  const peer = dpu(trace);
  const dev = Device.open(HOST_PCI);
  return {
    trace, peer, dev,
    async [Symbol.asyncDispose]() {
      dev.close();
      await peer.close();
    },
  };
}

/** A test (60 s at most) of `title` whose body runs between the two ends of hostAndPeer(`name`). */
function testEnds(title: string, name: string, body: (ends: ReturnType<typeof hostAndPeer>) => Promise<void>): void {
  test(title, { timeout: 60_000 }, async () => {
    await using ends = hostAndPeer(name);
    await body(ends);
  });
}

describe("permissions of exported memory, enforced on every DMA task", () => {
  testEnds("a PCI_READ_ONLY export can be read but not written", "ro", async ({ trace, peer, dev }) => {
    using mem = NativeMemory.alloc(8192);
    mem.bytes.fill(0x3c);
    using map = Mmap.create({ memory: mem, permissions: Access.PCI_READ_ONLY, devices: [dev] });
    assert.ok((await ask(peer, { op: "open", pci: DPU_PCI })).ok);
    assert.ok((await ask(peer, { op: "import", descriptor: b64(map.exportPci(dev)) })).ok);
    const read = await ask(peer, { op: "read", offset: 0, length: 8192 });
    assert.equal(read.error, undefined, String(read.error));
    assert.ok(Buffer.from(String(read.data), "base64").every((b) => b === 0x3c), "the read returns the exported bytes");
    counters.copies++;
    for (const [offset, length] of [[0, 16], [4096, 4096], [8191, 1]]) {
      const write = await ask(peer, { op: "write", offset, data: b64(new Uint8Array(length).fill(0xff)) });
      assertNotPermitted(write, /DocaError/, `a write into a read-only export must fail with a DocaError: ${JSON.stringify(write)}`);
    }
    assert.ok(mem.bytes.every((b) => b === 0x3c), "no byte of the read-only export changed");
    await ask(peer, { op: "dropImport" });
    const lines = readTrace(trace);
    assertTraceInside(lines, [map.range]);
    assert.ok(lines.some((l) => l.op === "w" && l.verdict !== "allowed"), "the refused writes are in the trace");
    assert.ok(!lines.some((l) => l.op === "w" && l.verdict === "allowed"), "no write was allowed");
  });

  testEnds(
    "a revoked export (the exporter closed its map) fails the next task; a new export does not revive the old descriptor",
    "revoked",
    async ({ trace, peer, dev }) => {
      using mem = NativeMemory.alloc(4096);
      mem.bytes.fill(0x11);
      const map = Mmap.create({ memory: mem, permissions: Access.PCI_READ_WRITE, devices: [dev] });
      const descriptor = map.exportPci(dev);
      assert.ok((await ask(peer, { op: "open", pci: DPU_PCI })).ok);
      assert.ok((await ask(peer, { op: "import", descriptor: b64(descriptor) })).ok);
      const before = await ask(peer, { op: "write", offset: 0, data: b64(new Uint8Array(16).fill(0x22)) });
      assert.equal(before.error, undefined, String(before.error));
      assert.equal(mem.bytes[0], 0x22, "the write through the live export landed");
      counters.copies++;
      map.close(); // stop + destroy: revokes the export
      for (const op of ["read", "write"] as const) {
        const r = await ask(
          peer,
          op === "read" ? { op, offset: 0, length: 16 } : { op, offset: 0, data: b64(new Uint8Array(16).fill(0x33)) },
        );
        assertNotPermitted(r, /DocaError/, `${op} after revocation: ${JSON.stringify(r)}`);
      }
      assert.equal(mem.bytes[0], 0x22, "nothing written after revocation");
      await ask(peer, { op: "dropImport" });
      // Same memory, a new export: the old descriptor (old key) must stay dead.
      using again = Mmap.create({ memory: mem, permissions: Access.PCI_READ_WRITE, devices: [dev] });
      again.exportPci(dev);
      const replay = await ask(peer, { op: "import", descriptor: b64(descriptor) });
      assertNotPermitted(replay, /doca_mmap_create_from_export/, JSON.stringify(replay));
      assertTraceInside(readTrace(trace), [{ address: mem.address, length: 4096 }]);
    },
  );

  testEnds(
    "an export cannot be imported through a device without a representor of the exporter",
    "device",
    async ({ trace, peer, dev }) => {
      using mem = NativeMemory.alloc(4096);
      using map = Mmap.create({ memory: mem, permissions: Access.PCI_READ_WRITE, devices: [dev] });
      const descriptor = b64(map.exportPci(dev));
      const other = await ask(peer, { op: "open", pci: OTHER_DPU_PCI });
      assert.equal(other.error, undefined, `the config's second DPU device opens: ${JSON.stringify(other)}`);
      const refused = await ask(peer, { op: "import", descriptor });
      assertNotPermitted(refused, /doca_mmap_create_from_export/, JSON.stringify(refused));
      // Control: the device that owns the host's representor may import the same descriptor.
      assert.ok((await ask(peer, { op: "open", pci: DPU_PCI })).ok);
      const ok = await ask(peer, { op: "import", descriptor });
      assert.equal(ok.error, undefined, JSON.stringify(ok));
      const read = await ask(peer, { op: "read", offset: 0, length: 4096 });
      assert.equal(read.error, undefined);
      counters.copies++;
      await ask(peer, { op: "dropImport" });
      assertTraceInside(readTrace(trace), [map.range]);
    },
  );

  test("no handles leak on the host side", () => {
    assert.equal(liveObjects(), live0, "every Device, NativeMemory and Mmap of this file was closed");
  });
});
