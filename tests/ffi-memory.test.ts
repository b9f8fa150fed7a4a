import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { HOST_PCI } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Access, BufInventory, Device, DocaError, liveObjects, Mmap, NativeMemory } from "../mod.ts";
import { copyOut } from "../ffi/native/copy-out.ts";

describe("ffi: native memory, mmaps and buffers", () => {
  test("NativeMemory is page-aligned, zeroed, writable through bytes", () => {
    using mem = NativeMemory.alloc(10_000);
    assert.equal(mem.address % 4096, 0);
    assert.equal(mem.length, 10_000);
    assert.equal(mem.bytes.length, 10_000);
    assert.ok(mem.bytes.every((b) => b === 0));
    mem.bytes[9_999] = 0xab;
    assert.equal(mem.bytes[9_999], 0xab);
    assert.throws(() => NativeMemory.alloc(0), RangeError);
  });

  test("closed NativeMemory refuses access instead of crashing", () => {
    const mem = NativeMemory.alloc(4096);
    mem.close();
    mem.close();
    assert.throws(() => mem.bytes, /NativeMemory is closed/);
    assert.throws(() => mem.address, /is closed/);
  });

  test("Mmap over NativeMemory, buffers by address and by data", { skip: noLiveCounter }, () => {
    const before = liveObjects();
    {
      using dev = Device.open(HOST_PCI);
      using mem = NativeMemory.alloc(8192);
      using map = Mmap.create({ memory: mem, offset: 4096, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
      assert.deepEqual(map.range, { address: mem.address + 4096, length: 4096 });
      using inv = new BufInventory(4);
      const empty = inv.bufByAddr(map, mem.address + 4096, 100);
      assert.equal(empty.dataLength, 0);
      assert.equal(empty.address, mem.address + 4096);
      const full = inv.bufByData(map, mem.address + 4196, 50);
      assert.equal(full.dataLength, 50);
      assert.equal(full.dataAddress, mem.address + 4196);
      full.setData(mem.address + 4200, 10);
      assert.equal(full.dataLength, 10);
      assert.equal(full.dataAddress, mem.address + 4200);
      empty.close();
      assert.throws(() => empty.dataLength, /Buf is closed/);
    }
    assert.equal(liveObjects(), before, "no leaked handles");
  });

  test("a buffer outside the mmap is a DocaError", () => {
    using dev = Device.open(HOST_PCI);
    using mem = NativeMemory.alloc(8192);
    using map = Mmap.create({ memory: mem, length: 4096, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using inv = new BufInventory(2);
    assert.throws(() => inv.bufByAddr(map, mem.address + 4000, 200), (e: unknown) => {
      assert.ok(e instanceof DocaError);
      assert.equal(e.fn, "doca_buf_inventory_buf_get_by_args");
      return true;
    });
  });

  test("closing a parent closes its children first", { skip: noLiveCounter }, () => {
    const before = liveObjects();
    const dev = Device.open(HOST_PCI);
    const mem = NativeMemory.alloc(4096);
    const map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    const inv = new BufInventory(2);
    const buf = inv.bufByData(map, mem.address, 16);
    mem.close(); // → map → buf
    assert.ok(map.closed && buf.closed);
    assert.throws(() => map.exportPci(dev), /Mmap is closed/);
    inv.close();
    dev.close();
    assert.equal(liveObjects(), before);
  });

  test("exportPci returns a descriptor copy that fromExport accepts", () => {
    using dev = Device.open(HOST_PCI);
    using mem = NativeMemory.alloc(4096);
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE, devices: [dev] });
    const desc = map.exportPci(dev);
    assert.ok(desc instanceof Uint8Array && desc.length > 0);
    assert.throws(() => Mmap.fromExport(new Uint8Array([1, 2, 3]), dev), DocaError);
  });

  test("copyOut: bytes lent by native code become an array of their own, at any length", () => {
    using src = NativeMemory.alloc(3 * 65536);
    for (let i = 0; i < src.length; i++) src.bytes[i] = (i * 31 + 7) & 255;
    const small = copyOut(src.address + 5, 64);
    const large = copyOut(src.address + 1, 2 * 65536 + 3); // past the staging area: it grows
    const again = copyOut(src.address + 9, 64);
    assert.deepEqual(small, src.bytes.subarray(5, 69));
    assert.deepEqual(large, src.bytes.subarray(1, 2 * 65536 + 4));
    assert.deepEqual(again, src.bytes.subarray(9, 73));
    small[0] ^= 0xff;
    src.bytes[9] ^= 0xff;
    assert.notEqual(again[0], src.bytes[9], "a copy, not a view of the source");
    assert.deepEqual(large.subarray(0, 4), src.bytes.subarray(1, 5), "nor of the staging area the next copy reuses");
    assert.equal(copyOut(src.address, 0).length, 0);
  });
});
