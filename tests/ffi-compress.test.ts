/**
 * Compress from TypeScript on the software device: deflate round trips checked against node:zlib (raw deflate both
 * ways), DOCA's checksums against reference implementations, LZ4 block and stream decompression, corrupt input and
 * small destinations rejecting with DocaError, a close with tasks in flight, and the capability query.
 */
import "./helpers/sim-env.ts";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { HOST_PCI } from "./helpers/sim-env.ts";
import { adler32, crc32, xxh32 } from "./helpers/checksums.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Access, BufInventory, Compress, Device, DocaError, DocaErrorCode, liveObjects, Mmap, NativeMemory } from "../mod.ts";
import { textLike } from "./helpers/text-like.ts";
import { localRegions, withContext } from "./helpers/local-regions.ts";
import { skipWithout } from "./helpers/skip-without.ts";

const SIZE = 1 << 20;

const WORDS = ["doca ", "compress ", "deflate ", "block ", "software ", "device ", "\n"];
/** Text-like bytes (helpers/text-like.ts) over this file's words. */
const text = (length: number, seed = 1): Uint8Array => textLike(WORDS, length, seed);

async function setup() {
  const r = localRegions({ srcSize: SIZE, dstSize: SIZE, bufs: 64 });
  const { dev, pe, src, dst, srcMap, dstMap, inv } = r;
  const c = await Compress.open(dev, pe, { maxTasks: 8 });
  /** A source Buf holding `bytes`, and an empty destination of `room` bytes. */
  const bufs = (bytes: Uint8Array, room = SIZE) => {
    src.bytes.set(bytes);
    return { s: inv.bufByData(srcMap, src.address, bytes.length), d: inv.bufByAddr(dstMap, dst.address, room) };
  };
  const out = (length: number) => dst.bytes.slice(0, length);
  return withContext(r, c, { dev, pe, c, bufs, out });
}

/** A DOCA without libdoca_compress (real DOCA without it, or the 2.7 flavour) skips, saying so. */
const skip = skipWithout("compress");

describe("ffi: Compress", { skip }, () => {
  test("capabilities: every kind supported on the software device, with its max buffer size", () => {
    const dev = Device.open(HOST_PCI);
    try {
      const caps = Compress.caps(dev);
      assert.deepEqual(
        [caps.compressDeflate, caps.decompressDeflate, caps.decompressLz4Stream, caps.decompressLz4Block],
        [true, true, true, true],
      );
      assert.ok(caps.maxBufSize >= SIZE);
      assert.equal(caps.missingReason, undefined);
    } finally {
      dev.close();
    }
  });

  test("deflate: the output is raw deflate node:zlib inflates, checksums of the plain bytes", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const plain = text(300_000);
    const { s: src, d: dst } = s.bufs(plain);
    const r = await s.c.compressDeflate(src, dst);
    assert.ok(r.length > 0 && r.length < plain.length / 2, `compressed to ${r.length}`);
    assert.equal(dst.dataLength, r.length);
    assert.deepEqual(new Uint8Array(inflateRawSync(s.out(r.length))), plain);
    assert.equal(r.crc32, crc32(plain));
    assert.equal(r.adler32, adler32(plain));
  });

  test("compressDeflateBatch: 20 pieces (more than the 8 slots), one Promise, each raw deflate node:zlib inflates, results in order", { timeout: 60_000 }, async () => {
    const r = localRegions({ srcSize: 20 * 4096, dstSize: 20 * 8192, bufs: 64 });
    const c = await Compress.open(r.dev, r.pe, { maxTasks: 8 });
    try {
      const pieces = Array.from({ length: 20 }, (_, i) => text(4096 - i * 7, i));
      const pairs = pieces.map((p, i) => {
        r.src.bytes.set(p, i * 4096);
        return [r.inv.bufByData(r.srcMap, r.src.address + i * 4096, p.length), r.inv.bufByAddr(r.dstMap, r.dst.address + i * 8192, 8192)] as const;
      });
      const results = await c.compressDeflateBatch(pairs);
      assert.equal(results.length, 20);
      for (let i = 0; i < 20; i++) {
        assert.equal(pairs[i][1].dataLength, results[i].length);
        assert.deepEqual(new Uint8Array(inflateRawSync(r.dst.bytes.slice(i * 8192, i * 8192 + results[i].length))), pieces[i], `piece ${i}`);
        assert.equal(results[i].crc32, crc32(pieces[i]));
      }
      assert.deepEqual(await c.compressDeflateBatch([]), []);
      assert.throws(() => c.compressDeflateBatch([[pairs[0][0], {} as never]]), /pairs\[0\]\[1\]/);
    } finally {
      await c.close();
      r.close();
    }
  });

  test("inflate: what node:zlib deflates (raw) comes back byte for byte", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const plain = text(500_000, 2);
    const packed = new Uint8Array(deflateRawSync(plain, { level: 9 }));
    const { s: src, d: dst } = s.bufs(packed);
    const r = await s.c.decompressDeflate(src, dst);
    assert.equal(r.length, plain.length);
    assert.deepEqual(s.out(r.length), plain);
    assert.equal(r.crc32, crc32(plain));
    assert.equal(r.adler32, adler32(plain));
  });

  test("corrupt, truncated or too large: DocaError with DOCA's code, nothing written", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const plain = text(100_000, 3);
    const packed = new Uint8Array(deflateRawSync(plain));
    const bad = packed.slice();
    bad.fill(0xff, 0, 16);
    let b = s.bufs(bad);
    await assert.rejects(s.c.decompressDeflate(b.s, b.d), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.INVALID_VALUE && e.fn === "doca_compress_task_decompress_deflate");
    assert.equal(b.d.dataLength, 0);
    b = s.bufs(packed.slice(0, packed.length >> 1));
    await assert.rejects(s.c.decompressDeflate(b.s, b.d), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.INVALID_VALUE);
    b = s.bufs(packed, plain.length - 1);
    await assert.rejects(s.c.decompressDeflate(b.s, b.d), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.TOO_BIG);
    b = s.bufs(plain, 100);
    await assert.rejects(s.c.compressDeflate(b.s, b.d), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.TOO_BIG);
  });

  test("LZ4: a hand-made block, and the same block as a stream with and without its checksum", { timeout: 60_000 }, async () => {
    await using s = await setup();
    // literals "abcdefgh", a match of 32 bytes at offset 8, final literals "12345"
    const block = new Uint8Array([0x8f, ...new TextEncoder().encode("abcdefgh"), 8, 0, 13, 0x50, ...new TextEncoder().encode("12345")]);
    const plain = new TextEncoder().encode("abcdefgh".repeat(5) + "12345");
    let b = s.bufs(block);
    let r = await s.c.decompressLz4Block(b.s, b.d);
    assert.deepEqual(s.out(r.length), plain);
    assert.equal(r.crc32, crc32(plain));
    assert.equal(r.xxhash32, xxh32(plain));
    for (const blockChecksum of [false, true]) {
      const size = new Uint8Array(4);
      new DataView(size.buffer).setUint32(0, block.length, true);
      const sum = new Uint8Array(4);
      new DataView(sum.buffer).setUint32(0, xxh32(block), true);
      const stream = new Uint8Array([...size, ...block, ...(blockChecksum ? sum : []), ...size, ...block, ...(blockChecksum ? sum : [])]);
      b = s.bufs(stream);
      r = await s.c.decompressLz4Stream(b.s, b.d, { blockChecksum });
      assert.deepEqual(s.out(r.length), new Uint8Array([...plain, ...plain]));
      assert.equal(r.xxhash32, xxh32(new Uint8Array([...plain, ...plain])));
      if (blockChecksum) {
        stream[stream.length - 1] ^= 1;
        b = s.bufs(stream);
        await assert.rejects(s.c.decompressLz4Stream(b.s, b.d, { blockChecksum }), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.INVALID_VALUE);
      }
    }
  });

  test("more requests than tasks queue; a close with tasks in flight settles every one", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const plain = text(4000, 4);
    const { s: src } = s.bufs(plain);
    const inv = new BufInventory(64);
    const dstMem = NativeMemory.alloc(64 * 8192);
    const dstMap = Mmap.create({ memory: dstMem, permissions: Access.LOCAL_READ_WRITE, devices: [s.dev] });
    try {
      const all = Array.from({ length: 40 }, (_, i) => s.c.compressDeflate(src, inv.bufByAddr(dstMap, dstMem.address + i * 8192, 8192)));
      const results = await Promise.all(all);
      for (const r of results) assert.equal(r.crc32, crc32(plain));
      const inflight = Array.from({ length: 8 }, (_, i) => s.c.compressDeflate(src, inv.bufByAddr(dstMap, dstMem.address + i * 8192, 8192)));
      const closing = s.c.close();
      const settled = await Promise.allSettled(inflight);
      await closing;
      for (const r of settled) assert.ok(r.status === "fulfilled" || r.reason instanceof Error);
      const late = inv.bufByAddr(dstMap, dstMem.address, 8192);
      assert.throws(() => s.c.compressDeflate(src, late), /Compress is closed/);
    } finally {
      inv.close();
      dstMap.close();
      dstMem.close();
    }
  });

  test("byte-array conveniences: compressBytes is raw deflate node:zlib inflates; decompressBytes bounds its output", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const plain = text(70_000, 9);
    const packed = await s.c.compressBytes(plain);
    assert.deepEqual(new Uint8Array(inflateRawSync(packed.bytes)), plain);
    assert.equal(packed.length, packed.bytes.length);
    assert.equal(packed.crc32, crc32(plain));
    const back = await s.c.decompressBytes(packed.bytes, { maxOutput: plain.length });
    assert.deepEqual(back.bytes, plain);
    await assert.rejects(s.c.decompressBytes(packed.bytes, { maxOutput: 100 }), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.TOO_BIG);
    assert.throws(() => s.c.decompressBytes(packed.bytes, {} as { maxOutput: number }), /maxOutput is required/);
  });

  test("nothing left alive after a close", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    const before = liveObjects()!;
    {
      await using s = await setup();
      const b = s.bufs(text(1000));
      await s.c.compressDeflate(b.s, b.d);
    }
    assert.equal(liveObjects(), before);
  });
});
