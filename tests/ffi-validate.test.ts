// The API validates before it allocates (the same on Deno, Bun and Node), Buf.setData checks its own bounds, and
// Dma copies any length through copy() while memcpy() beyond the device's limit names the limit and copy().
import { describe, test } from "node:test";
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { HOST_PCI, pattern } from "./helpers/sim-env.ts";
import { Access, BufInventory, Device, Dma, DocaError, liveObjects, Mmap, NativeMemory, ProgressEngine } from "../mod.ts";

const MiB = 1024 * 1024;

/** Runs `fn` expecting a throw matching `error`, and that no native object was created meanwhile. */
function refusedBeforeAllocating(fn: () => unknown, error: RegExp): void {
  const before = liveObjects();
  assert.throws(fn, error);
  assert.equal(liveObjects(), before, "nothing native was created (or left behind)");
}

describe("ffi: options are checked before anything native exists", () => {
  test("Dma maxTasks: positive integers up to 65536 only", () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    for (const bad of [-1, 0, 1.5, NaN, 2 ** 32, 65_537, Infinity, "8" as unknown as number]) {
      refusedBeforeAllocating(() => new Dma(dev, pe, { maxTasks: bad }), /maxTasks must be an integer from 1 to 65536/);
    }
  });

  test("Mmap permissions: integers made of Access flags only", () => {
    using dev = Device.open(HOST_PCI);
    using mem = NativeMemory.alloc(4096);
    for (const bad of [2 ** 32 + Access.LOCAL_READ_WRITE, NaN, -1, 0.5, 128, 1 << 20]) {
      refusedBeforeAllocating(
        () => Mmap.create({ memory: mem, permissions: bad, devices: [dev] }),
        /permissions must combine Access flags/,
      );
    }
    refusedBeforeAllocating(() => Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [] }), /at least one Device/);
  });

  test("BufInventory capacity and Buf ranges", () => {
    using dev = Device.open(HOST_PCI);
    using mem = NativeMemory.alloc(8192);
    using map = Mmap.create({ memory: mem, length: 4096, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    for (const bad of [0, -1, NaN, 1.5, 2 ** 40]) refusedBeforeAllocating(() => new BufInventory(bad), /capacity must be an integer/);
    using inv = new BufInventory(2);
    refusedBeforeAllocating(() => inv.bufByAddr(map, mem.address + 4000, 200), /outside the map/);
    refusedBeforeAllocating(() => inv.bufByData(map, mem.address - 1, 1), /outside the map/);
  });

  test("Buf.setData checks the data section lies inside the buffer itself", () => {
    using dev = Device.open(HOST_PCI);
    using mem = NativeMemory.alloc(8192);
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using inv = new BufInventory(1);
    const buf = inv.bufByAddr(map, mem.address + 4096, 100);
    for (const [address, length] of [[mem.address + 4096, 101], [mem.address + 4095, 1], [mem.address + 4196, 1], [NaN, 1], [mem.address + 4096, -1]]) {
      assert.throws(() => buf.setData(address, length), (e: unknown) => {
        assert.ok(e instanceof DocaError || e instanceof RangeError, String(e));
        assert.match(String(e), /outside the buffer|non-negative/);
        return true;
      });
    }
    buf.setData(mem.address + 4100, 96);
    assert.equal(buf.dataLength, 96);
    assert.equal(buf.dataAddress, mem.address + 4100);
  });
});

describe("ffi: failure paths release what they took", () => {
  test("Mmap.fromExport frees its staging memory when the import fails (no page per hostile descriptor)", () => {
    const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;
    using dev = Device.open(HOST_PCI);
    const descriptor = new Uint8Array(1 << 20).fill(0x5a); // staged in fresh pages (too big for the scratch area)
    const attempt = () => assert.throws(() => Mmap.fromExport(descriptor, dev), DocaError);
    for (let i = 0; i < 3; i++) attempt();
    const before = rssMiB();
    for (let i = 0; i < 50; i++) attempt();
    // Leaking the staging would add 50 MiB of touched pages; what remains is runtime noise.
    assert.ok(rssMiB() - before < 20, `resident memory grew by ${(rssMiB() - before).toFixed(1)} MiB over 50 failed imports`);
  });
});

describe("ffi: timeouts", () => {
  test("a NaN or negative timeout is refused (not a wait that ends at once on one runtime and never on another)", async () => {
    const { Waiters } = await import("../ffi/engine/waiters.ts");
    const waiters = new Waiters<number>(undefined);
    for (const bad of [NaN, -1, Infinity]) await assert.rejects(waiters.wait("something", bad), /timeoutMs must be a number/);
    const late = waiters.wait("something", 0);
    await assert.rejects(late, /timed out after 0 ms waiting for something/);
  });

  // Waiters share one timer armed for the earliest deadline (a timer per wait cost more than a message).
  test("a shorter timeout added after a longer one fires first; each names its own wait", async () => {
    const { Waiters } = await import("../ffi/engine/waiters.ts");
    const waiters = new Waiters<number>(undefined);
    const order: string[] = [];
    const long = waiters.wait("the long one", 400).catch((e: Error) => order.push(e.message));
    const short = waiters.wait("the short one", 20).catch((e: Error) => order.push(e.message));
    await Promise.all([long, short]);
    assert.equal(order.length, 2);
    assert.match(order[0], /timed out after 20 ms waiting for the short one/);
    assert.match(order[1], /timed out after 400 ms waiting for the long one/);
  });

  test("a wait settled early leaves the timer to the next: a later, longer wait still times out", async () => {
    const { Waiters } = await import("../ffi/engine/waiters.ts");
    const waiters = new Waiters<number>(undefined);
    const first = waiters.wait("the first", 10);
    assert.ok(waiters.resolveNext(1));
    assert.equal(await first, 1);
    const pump = { demand() {}, release() {} };
    const pumped = new Waiters<number>(pump);
    const early = pumped.wait("an early one", 10);
    pumped.resolveNext(2);
    assert.equal(await early, 2);
    const later = pumped.wait("a later one", 50);
    // Keeps this test's event loop alive the way a pump would (the shared timer is unref'd when a pump runs).
    const hold = setTimeout(() => {}, 5_000);
    await assert.rejects(later, /timed out after 50 ms waiting for a later one/);
    clearTimeout(hold);
  });
});

describe("ffi: Dma copies of any length", () => {
  test("copy() splits a range larger than the max buf size into tasks, byte for byte", { timeout: 120_000 }, async () => {
    const size = 5 * MiB + 3;
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using src = NativeMemory.alloc(size), dst = NativeMemory.alloc(size + 4096);
    src.bytes.set(pattern(size));
    using srcMap = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using dstMap = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    await using dma = new Dma(dev, pe, { maxTasks: 4 });
    assert.ok(size > dma.maxBufSize, "the copy needs several tasks");
    const before = liveObjects();
    const copied = await dma.copy({ mmap: srcMap, address: src.address, length: size }, { mmap: dstMap, address: dst.address + 4096, length: size });
    assert.equal(copied, size);
    assert.deepEqual(dst.bytes.subarray(4096, 4096 + size), src.bytes);
    assert.equal(liveObjects(), before === undefined ? undefined : before + dma.keptTasks, "the copy's own bufs and inventory are released (tasks kept for reuse aside)");
    assert.ok(dma.keptTasks <= 4, "at most one kept task per slot");
  });

  test("memcpy() beyond the limit fails naming the limit and copy()", async () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using mem = NativeMemory.alloc(8 * MiB);
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using inv = new BufInventory(2);
    using dma = new Dma(dev, pe);
    const big = dma.maxBufSize + 1;
    await assert.rejects(dma.memcpy(inv.bufByData(map, mem.address, big), inv.bufByAddr(map, mem.address + 4 * MiB, big)), (e: unknown) => {
      assert.ok(e instanceof DocaError);
      assert.match(e.message, new RegExp(`max DMA buf size of ${dma.maxBufSize} bytes`));
      assert.match(e.message, /Dma\.copy/);
      return true;
    });
  });

  test("copy() refuses a destination smaller than the source", async () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using mem = NativeMemory.alloc(8192);
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using dma = new Dma(dev, pe);
    await assert.rejects(
      dma.copy({ mmap: map, address: mem.address, length: 4096 }, { mmap: map, address: mem.address + 4096, length: 100 }),
      /does not fit/,
    );
  });
});
