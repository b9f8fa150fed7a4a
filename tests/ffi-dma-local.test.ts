import { Buffer } from "node:buffer";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { pattern } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Access, type Buf, Dma, DocaError, liveObjects } from "../mod.ts";
import { localRegions } from "./helpers/local-regions.ts";

const MiB = 1024 * 1024;

/** A device, engine, DMA and two maps over fresh memory of `size` bytes (src filled with a pattern). */
function setup(size: number, dstPermissions: number = Access.LOCAL_READ_WRITE) {
  const r = localRegions({ srcSize: size, dstSize: size, bufs: 4096, dstPermissions });
  r.src.bytes.set(pattern(size));
  const dma = new Dma(r.dev, r.pe, { maxTasks: 128 });
  return {
    ...r, dma,
    [Symbol.dispose]() {
      dma.close();
      r.close();
    },
  };
}

describe("ffi: local DMA", () => {
  for (const size of [1, 4096, 2 * MiB]) {
    test(`copies ${size} bytes byte-for-byte`, async () => {
      using s = setup(size);
      const srcBuf = s.inv.bufByData(s.srcMap, s.src.address, size);
      const dstBuf = s.inv.bufByAddr(s.dstMap, s.dst.address, size);
      await s.dma.memcpy(srcBuf, dstBuf);
      assert.equal(dstBuf.dataLength, size);
      assert.deepEqual(s.dst.bytes, pattern(size));
    });
  }

  test("64 MiB split into max-size tasks, all in flight at once", { timeout: 120_000 }, async () => {
    const size = 64 * MiB;
    using s = setup(size);
    const max = Dma.caps(s.dev).maxBufSize;
    assert.equal(max, 2 * MiB);
    const copies: Promise<void>[] = [];
    for (let off = 0; off < size; off += max) {
      const n = Math.min(max, size - off);
      copies.push(s.dma.memcpy(s.inv.bufByData(s.srcMap, s.src.address + off, n), s.inv.bufByAddr(s.dstMap, s.dst.address + off, n)));
    }
    await Promise.all(copies);
    assert.ok(Buffer.compare(s.dst.bytes, s.src.bytes) === 0, "64 MiB copied exactly");
  });

  test("more copies than tasks: 1000 small copies with 128 tasks, and a batch", async () => {
    using s = setup(64 * 1000);
    const pairs: [Buf, Buf][] = [];
    for (let i = 0; i < 1000; i++) {
      pairs.push([s.inv.bufByData(s.srcMap, s.src.address + i * 64, 64), s.inv.bufByAddr(s.dstMap, s.dst.address + i * 64, 64)]);
    }
    await Promise.all(pairs.slice(0, 500).map(([a, b]) => s.dma.memcpy(a, b)));
    await s.dma.memcpyBatch(pairs.slice(500));
    assert.deepEqual(s.dst.bytes, s.src.bytes);
    assert.equal(s.dma.inflight, 0);
    // not a list of pairs: a TypeError naming what is wrong, thrown at the call (not an internal property's name)
    for (const bad of [undefined, null, 5, new Set(), { length: 2 }]) {
      assert.throws(() => s.dma.memcpyBatch(bad as never), /memcpyBatch: pairs must be an array of \[src, dst\] Bufs/, String(bad));
    }
    // deno-lint-ignore no-sparse-arrays
    assert.throws(() => s.dma.memcpyBatch([pairs[0], , pairs[1]] as never), /memcpyBatch: pairs\[1\] must be \[src, dst\]/);
  });

  test("a copy larger than the maximum buffer size rejects with a DocaError", async () => {
    using s = setup(4 * MiB);
    const src = s.inv.bufByData(s.srcMap, s.src.address, 4 * MiB);
    const dst = s.inv.bufByAddr(s.dstMap, s.dst.address, 4 * MiB);
    await assert.rejects(s.dma.memcpy(src, dst), DocaError);
  });

  test("copying into a read-only map is refused", async () => {
    using s = setup(4096, Access.LOCAL_READ_ONLY);
    const src = s.inv.bufByData(s.srcMap, s.src.address, 4096);
    const dst = s.inv.bufByAddr(s.dstMap, s.dst.address, 4096);
    await assert.rejects(s.dma.memcpy(src, dst), (e: unknown) => {
      assert.ok(e instanceof DocaError);
      assert.equal(e.docaName, "DOCA_ERROR_NOT_PERMITTED");
      assert.equal(e.code, 2);
      assert.equal(e.fn, "doca_dma_task_memcpy");
      assert.ok(e.description.length > 0, "doca_error_get_descr text");
      return true;
    });
    assert.ok(s.dst.bytes.every((b) => b === 0), "nothing was written");
  });

  test("use after close and double close", () => {
    using s = setup(4096);
    const src = s.inv.bufByData(s.srcMap, s.src.address, 16);
    const dst = s.inv.bufByAddr(s.dstMap, s.dst.address, 16);
    s.dma.close();
    s.dma.close();
    assert.throws(() => s.dma.memcpy(src, dst), /Dma is closed/);
    src.close();
    const dma2 = new Dma(s.dev, s.pe);
    assert.throws(() => dma2.memcpy(src, dst), /Buf is closed/);
    dma2.close();
  });

  test("closing with copies in flight settles every one of them", async () => {
    using s = setup(64 * 300);
    const copies: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      copies.push(s.dma.memcpy(s.inv.bufByData(s.srcMap, s.src.address + i * 64, 64), s.inv.bufByAddr(s.dstMap, s.dst.address + i * 64, 64)));
    }
    s.dma.close();
    const results = await Promise.allSettled(copies);
    assert.equal(results.length, 300);
    for (const r of results) {
      if (r.status === "rejected") assert.ok(r.reason instanceof Error, String(r.reason));
    }
    assert.ok(results.some((r) => r.status === "rejected"), "copies queued beyond the task pool were refused");
    assert.equal(s.dma.inflight, 0);
  });

  test("no leaked handles after everything is closed", { skip: noLiveCounter }, async () => {
    const before = liveObjects();
    {
      using s = setup(4096);
      await s.dma.memcpy(s.inv.bufByData(s.srcMap, s.src.address, 4096), s.inv.bufByAddr(s.dstMap, s.dst.address, 4096));
    }
    assert.equal(liveObjects(), before);
  });
});
