// The ten-line example from ffi/README.md, verbatim apart from the import path and the assertion.
import { test } from "node:test";
import assert from "node:assert/strict";
import "./helpers/sim-env.ts";
import { Access, BufInventory, Dma, Mmap, NativeMemory, openDevice, ProgressEngine } from "../mod.ts";

test("ffi/README.md local DMA example works as written", async () => {
  using dev = openDevice();
  using pe = new ProgressEngine();
  using src = NativeMemory.alloc(4096), dst = NativeMemory.alloc(4096);
  src.bytes.fill(7);
  using map = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  using map2 = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  using inv = new BufInventory(2);
  await using dma = new Dma(dev, pe);
  await dma.memcpy(inv.bufByData(map, src.address, 4096), inv.bufByAddr(map2, dst.address, 4096));
  assert.equal(dst.bytes[4095], 7);
  assert.ok(dst.bytes.every((b) => b === 7));
});
