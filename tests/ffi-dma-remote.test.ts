import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { DPU_PCI, dpuEnv, HOST_PCI, pattern } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { Access, Device, liveObjects, Mmap, NativeMemory } from "../mod.ts";

const SIZE = 256 * 1024;

describe("ffi: DMA across processes (host exports, DPU copies)", { timeout: 120_000, skip: noLiveCounter }, () => {
  let dpu: RuntimeChild;
  let dev: Device;
  let start: number | undefined;

  before(async () => {
    start = liveObjects();
    dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
    const opened = await dpu.request<{ pci: string; reps: { pciAddr: string; vuid: string }[] }>({ op: "open", pci: DPU_PCI }, 30_000);
    assert.equal(opened.pci, DPU_PCI);
    assert.ok(opened.reps.some((r) => r.pciAddr === HOST_PCI && r.vuid.length > 0), `DPU sees a representor of the host: ${JSON.stringify(opened.reps)}`);
    dev = Device.open(HOST_PCI);
  }, { timeout: 60_000 }); // starts a runtime child: sized for a loaded 2-core machine

  after(async () => {
    await dpu?.close();
    dev?.close();
    assert.equal(liveObjects(), start, "host side released every handle");
  }, { timeout: 60_000 });

  test("DPU reads host memory and writes it back, byte for byte", async () => {
    using mem = NativeMemory.alloc(SIZE);
    mem.bytes.set(pattern(SIZE, 3));
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE, devices: [dev] });
    const imported = await dpu.request<{ range: { address: number; length: number } }>({
      op: "import",
      descriptor: Buffer.from(map.exportPci(dev)).toString("base64"),
    });
    assert.deepEqual(imported.range, { address: mem.address, length: SIZE }, "the DPU sees the exporter's range");

    const read = await dpu.request<{ data: string }>({ op: "read", offset: 0, length: SIZE });
    assert.deepEqual(new Uint8Array(Buffer.from(read.data, "base64")), pattern(SIZE, 3));

    const written = pattern(65536, 9);
    await dpu.request({ op: "write", offset: 4096, data: Buffer.from(written).toString("base64") });
    assert.deepEqual(mem.bytes.subarray(4096, 4096 + 65536), written);
    assert.deepEqual(mem.bytes.subarray(0, 4096), pattern(SIZE, 3).subarray(0, 4096), "bytes before untouched");
    assert.deepEqual(mem.bytes.subarray(69632), pattern(SIZE, 3).subarray(69632), "bytes after untouched");
    await dpu.request({ op: "dropImport" });
  });

  test("a read-only export refuses DPU writes", async () => {
    using mem = NativeMemory.alloc(4096);
    mem.bytes.fill(0x11);
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_ONLY, devices: [dev] });
    await dpu.request({ op: "import", descriptor: Buffer.from(map.exportPci(dev)).toString("base64") });
    const read = await dpu.request<{ data: string }>({ op: "read", offset: 0, length: 16 });
    assert.deepEqual(new Uint8Array(Buffer.from(read.data, "base64")), new Uint8Array(16).fill(0x11));
    await assert.rejects(
      dpu.request({ op: "write", offset: 0, data: Buffer.from(new Uint8Array(16)).toString("base64") }),
      /NOT_PERMITTED/,
    );
    assert.ok(mem.bytes.every((b) => b === 0x11), "host memory unchanged");
    await dpu.request({ op: "dropImport" });
  });

  test("access outside the exported range is refused", async () => {
    using mem = NativeMemory.alloc(8192);
    using map = Mmap.create({ memory: mem, length: 4096, permissions: Access.PCI_READ_WRITE, devices: [dev] });
    await dpu.request({ op: "import", descriptor: Buffer.from(map.exportPci(dev)).toString("base64") });
    await assert.rejects(dpu.request({ op: "read", offset: 4000, length: 200 }), /DocaError/);
    await dpu.request({ op: "dropImport" });
  });

  test("after the host closes its mmap, the export is revoked", async () => {
    const mem = NativeMemory.alloc(4096);
    const map = Mmap.create({ memory: mem, permissions: Access.PCI_READ_WRITE, devices: [dev] });
    await dpu.request({ op: "import", descriptor: Buffer.from(map.exportPci(dev)).toString("base64") });
    await dpu.request({ op: "read", offset: 0, length: 16 });
    map.close();
    await assert.rejects(dpu.request({ op: "read", offset: 0, length: 16 }), /DocaError/);
    await dpu.request({ op: "dropImport" });
    mem.close();
  });
});
