/**
 * ErasureCoding and CodingMatrix from TypeScript on the software device: create tasks give the redundancy DOCA's
 * Cauchy formula gives (checked with a GF(2^8) written here), every loss of up to M blocks is recovered byte for byte
 * for a small geometry, on Bufs (buffer lists too) and on bytes; bad input throws or rejects with DocaError; a close
 * with tasks in flight settles them and leaves no native object behind.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { HOST_PCI, pattern } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import {
  Access,
  BufInventory,
  CodingMatrix,
  Device,
  DocaError,
  DocaErrorCode,
  ErasureCoding,
  liveObjects,
  Mmap,
  NativeMemory,
  ProgressEngine,
} from "../mod.ts";

/** Real DOCA without libdoca_erasure_coding (or a device without EC) skips, saying so. */
const skip: string | false = (() => {
  using dev = Device.open(HOST_PCI);
  return ErasureCoding.caps(dev).create ? false : "this DOCA or device has no erasure coding (libdoca_erasure_coding)";
})();

/** GF(2^8) over 0x11d, bit by bit: independent of the device's tables. */
function mul(a: number, b: number): number {
  let r = 0;
  while (b) {
    if (b & 1) r ^= a;
    a = ((a << 1) ^ (a & 0x80 ? 0x1d : 0)) & 0xff;
    b >>= 1;
  }
  return r;
}
function inv(a: number): number {
  for (let x = 1; x < 256; x++) if (mul(a, x) === 1) return x;
  throw new Error("no inverse of 0");
}

/** Redundancy by DOCA's Cauchy formula: entry (data i, redundancy j) = 1 / (i ^ (j + N)). */
function cauchyEncode(data: Uint8Array, n: number, m: number): Uint8Array {
  const block = data.length / n;
  const out = new Uint8Array(m * block);
  for (let j = 0; j < m; j++) {
    for (let i = 0; i < n; i++) {
      const c = inv(i ^ (j + n));
      for (let x = 0; x < block; x++) out[j * block + x] ^= mul(c, data[i * block + x]);
    }
  }
  return out;
}

function setup() {
  const dev = Device.open(HOST_PCI);
  const pe = new ProgressEngine();
  const ec = new ErasureCoding(dev, pe, { maxTasks: 8 });
  const memory = NativeMemory.alloc(1 << 20);
  const mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  const inv = new BufInventory(256);
  return {
    dev, pe, ec, memory, mmap, inv,
    async [Symbol.asyncDispose]() {
      await ec.close();
      inv.close();
      mmap.close();
      memory.close();
      pe.close();
      dev.close();
    },
  };
}

/** Every non-empty subset of 0..total-1 with at most `max` members, ascending. */
function losses(total: number, max: number): number[][] {
  const out: number[][] = [];
  for (let mask = 1; mask < 1 << total; mask++) {
    const set = [...Array(total).keys()].filter((i) => mask & (1 << i));
    if (set.length <= max) out.push(set);
  }
  return out;
}

describe("ffi: erasure coding", { skip }, () => {
  test("caps: block size and list length from the device", () => {
    using dev = Device.open(HOST_PCI);
    const caps = ErasureCoding.caps(dev);
    assert.equal(caps.create, true);
    assert.equal(caps.recover, true);
    assert.ok(caps.maxBlockSize >= 64 * 1024, `max block ${caps.maxBlockSize}`);
    assert.ok(caps.maxBufListLen >= 1);
  });

  test("create on Bufs equals DOCA's Cauchy formula; buffer lists give the same bytes", async () => {
    await using s = setup();
    const n = 4, m = 2, block = 256;
    const data = pattern(n * block, 3);
    s.memory.bytes.set(data);
    using matrix = s.ec.matrix("cauchy", n, m);
    const src = s.inv.bufByData(s.mmap, s.memory.address, n * block);
    const dst = s.inv.bufByAddr(s.mmap, s.memory.address + 8192, m * block);
    await s.ec.create(matrix, src, dst);
    assert.equal(dst.dataLength, m * block);
    const want = cauchyEncode(data, n, m);
    assert.deepEqual(s.memory.bytes.slice(8192, 8192 + m * block), want);
    // the same source as a list of three pieces, the destination as two
    const a = s.inv.bufByData(s.mmap, s.memory.address, 300);
    a.chain(s.inv.bufByData(s.mmap, s.memory.address + 300, 500));
    a.chain(s.inv.bufByData(s.mmap, s.memory.address + 800, n * block - 800));
    const b = s.inv.bufByAddr(s.mmap, s.memory.address + 16384, 100);
    b.chain(s.inv.bufByAddr(s.mmap, s.memory.address + 16384 + 100, m * block - 100));
    await s.ec.create(matrix, a, b);
    assert.deepEqual(s.memory.bytes.slice(16384, 16384 + m * block), want);
    assert.deepEqual(await s.ec.encode(matrix, data), want);
  });

  test("a kept create task serves the next request: matrices and Bufs switched between tasks give each its own bytes", async () => {
    // One task at a time through the same slot: each create re-arms the task the previous one left (task reuse),
    // so a matrix or Buf not set again would give the previous request's shape or place.
    await using s = setup();
    const data = pattern(4096, 5);
    s.memory.bytes.set(data);
    using wide = s.ec.matrix("cauchy", 4, 2);
    using narrow = s.ec.matrix("cauchy", 2, 2);
    const src = s.inv.bufByData(s.mmap, s.memory.address, 4096);
    for (let round = 0; round < 3; round++) {
      for (const [k, matrix, n] of [[0, wide, 4], [1, narrow, 2]] as const) {
        const at = 8192 + (round * 2 + k) * 4096;
        const dst = s.inv.bufByAddr(s.mmap, s.memory.address + at, 4096);
        await s.ec.create(matrix, src, dst);
        const want = cauchyEncode(data, n, 2);
        assert.equal(dst.dataLength, want.length, `round ${round}, ${n}+2`);
        assert.deepEqual(s.memory.bytes.slice(at, at + want.length), want, `round ${round}, ${n}+2`);
      }
    }
  });

  test("createBatch: 20 stripes (more than the 8 slots), one Promise, each equals DOCA's Cauchy formula; a bad pair throws naming it", { timeout: 60_000 }, async () => {
    await using s = setup();
    const n = 4, m = 2, block = 1024, count = 20;
    using matrix = s.ec.matrix("cauchy", n, m);
    const stripes = Array.from({ length: count }, (_, i) => pattern(n * block, i + 5));
    const out = 256 * 1024; // parity region
    const pairs = stripes.map((data, i) => {
      s.memory.bytes.set(data, i * n * block);
      return [s.inv.bufByData(s.mmap, s.memory.address + i * n * block, n * block), s.inv.bufByAddr(s.mmap, s.memory.address + out + i * m * block, m * block)] as const;
    });
    await s.ec.createBatch(matrix, pairs);
    for (let i = 0; i < count; i++) {
      assert.deepEqual(s.memory.bytes.slice(out + i * m * block, out + (i + 1) * m * block), cauchyEncode(stripes[i], n, m), `stripe ${i}`);
    }
    await s.ec.createBatch(matrix, []);
    assert.throws(() => s.ec.createBatch(matrix, [pairs[0], [pairs[1][0], {} as never]]), /pairs\[1\] dst must be a Buf/);
    assert.throws(() => s.ec.createBatch(matrix, [pairs[0][0]] as never), /pairs\[0\] must be \[src, dst\]/);
  });

  test("every loss of up to M blocks (N=4, M=2, both matrix types) is recovered byte for byte", async () => {
    await using s = setup();
    const n = 4, m = 2, block = 128;
    for (const type of ["cauchy", "vandermonde"] as const) {
      using coding = s.ec.matrix(type, n, m);
      const data = pattern(n * block, type.length);
      const all = new Uint8Array((n + m) * block);
      all.set(data);
      all.set(await s.ec.encode(coding, data), n * block);
      if (type === "cauchy") assert.deepEqual(all.subarray(n * block), cauchyEncode(data, n, m));
      let count = 0;
      for (const missing of losses(n + m, m)) {
        using rec = coding.recoverMatrix(missing);
        const available = new Uint8Array(n * block);
        rec.availableBlocks.forEach((index, k) => available.set(all.subarray(index * block, (index + 1) * block), k * block));
        const out = await s.ec.recoverBlocks(rec, available);
        assert.equal(out.length, missing.length * block);
        missing.forEach((index, k) =>
          assert.deepEqual(out.subarray(k * block, (k + 1) * block), all.subarray(index * block, (index + 1) * block), `${type} lost ${missing}`)
        );
        count++;
      }
      assert.equal(count, 21);
    }
  });

  test("update: new redundancy from (old, new) pairs and the old redundancy equals a fresh encode", async () => {
    await using s = setup();
    const n = 3, m = 2, block = 64;
    using coding = s.ec.matrix("cauchy", n, m);
    const data = pattern(n * block, 9);
    const parity = await s.ec.encode(coding, data);
    const changed = data.slice();
    changed.set(pattern(block, 10), 2 * block);
    using upd = coding.updateMatrix([2]);
    const input = new Uint8Array((2 + m) * block);
    input.set(data.subarray(2 * block), 0);
    input.set(changed.subarray(2 * block), block);
    input.set(parity, 2 * block);
    assert.deepEqual(await s.ec.encode(upd, input), await s.ec.encode(coding, changed));
  });

  test("bad input: refused at once (TypeError/RangeError) or rejected by DOCA (DocaError INVALID_VALUE)", async () => {
    await using s = setup();
    using coding = s.ec.matrix("cauchy", 4, 2);
    assert.throws(() => s.ec.matrix("reed-solomon" as "cauchy", 4, 2), TypeError);
    assert.throws(() => s.ec.matrix("cauchy", 0, 2), RangeError);
    assert.throws(() => coding.recoverMatrix([3, 1]), RangeError);
    assert.throws(() => coding.recoverMatrix([0, 1, 2]), RangeError);
    assert.throws(() => coding.recoverMatrix([6]), RangeError);
    assert.throws(() => s.ec.matrixFromRaw(new Uint8Array(7), 4, 2), RangeError);
    // not whole 64-byte blocks: DOCA's verdict, as a rejection naming the task
    const src = s.inv.bufByData(s.mmap, s.memory.address, 4 * 100);
    const dst = s.inv.bufByAddr(s.mmap, s.memory.address + 8192, 2 * 100);
    await assert.rejects(s.ec.create(coding, src, dst), (e: unknown) => {
      assert.ok(e instanceof DocaError);
      assert.equal(e.code, DocaErrorCode.INVALID_VALUE);
      assert.match(e.message, /doca_ec_task_create/);
      return true;
    });
    // a destination one block short
    const src2 = s.inv.bufByData(s.mmap, s.memory.address, 4 * 64);
    const dst2 = s.inv.bufByAddr(s.mmap, s.memory.address + 8192, 64);
    await assert.rejects(s.ec.create(coding, src2, dst2), DocaError);
    assert.equal(dst2.dataLength, 0, "nothing written");
    // a recover matrix in a create task
    using rec = coding.recoverMatrix([0]);
    assert.throws(() => s.ec.create(rec, src2, dst2), TypeError);
    // a matrix of another context
    using dev2 = Device.open(HOST_PCI);
    await using other = new ErasureCoding(dev2, s.pe, { maxTasks: 1 });
    using foreign = other.matrix("cauchy", 4, 2);
    assert.throws(() => s.ec.create(foreign, src2, dst2), TypeError);
  });

  test("closing with tasks in flight settles every task and destroys matrices first", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    const before = liveObjects()!;
    {
      await using s = setup();
      const coding = s.ec.matrix("cauchy", 8, 4);
      const block = 4096;
      s.memory.bytes.set(pattern(8 * block, 5));
      const tasks: Promise<void>[] = [];
      for (let i = 0; i < 20; i++) {
        const src = s.inv.bufByData(s.mmap, s.memory.address, 8 * block);
        const dst = s.inv.bufByAddr(s.mmap, s.memory.address + 65536 + i * 4 * block, 4 * block);
        tasks.push(s.ec.create(coding, src, dst));
      }
      assert.ok(s.ec.inflight > 0);
      const closing = s.ec.close();
      const settled = await Promise.allSettled(tasks);
      await closing;
      assert.ok(coding.closed, "the matrix closed with its context");
      for (const r of settled) if (r.status === "rejected") assert.match(String(r.reason), /closed|DOCA_ERROR/);
      assert.ok(settled.length === 20);
      assert.throws(() => s.ec.matrix("cauchy", 2, 1), /closed/);
    }
    assert.equal(liveObjects(), before);
  });

  test("a matrix closed while its tasks run: they finish with the right bytes, then it is destroyed", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    await using s = setup();
    const block = 1024;
    const data = pattern(4 * block, 11);
    s.memory.bytes.set(data);
    const coding = s.ec.matrix("cauchy", 4, 2);
    // a first round of twice the 8 slots leaves every slot's kept task allocated (they are reused): count from there
    await Promise.all(Array.from({ length: 16 }, (_, i) =>
      s.ec.create(coding, s.inv.bufByData(s.mmap, s.memory.address, 4 * block), s.inv.bufByAddr(s.mmap, s.memory.address + 32768 + i * 2 * block, 2 * block))));
    const srcs = Array.from({ length: 12 }, () => s.inv.bufByData(s.mmap, s.memory.address, 4 * block));
    const dsts = Array.from({ length: 12 }, (_, i) => s.inv.bufByAddr(s.mmap, s.memory.address + 65536 + i * 2 * block, 2 * block));
    const live = liveObjects()!;
    // more than maxTasks (8): some wait in the queue
    const tasks = srcs.map((src, i) => s.ec.create(coding, src, dsts[i]));
    coding.close();
    assert.ok(coding.closed);
    assert.throws(() => s.ec.create(coding, dsts[0], dsts[1]), /closed/);
    await Promise.all(tasks);
    const want = cauchyEncode(data, 4, 2);
    for (let i = 0; i < 12; i++) assert.deepEqual(s.memory.bytes.slice(65536 + i * 2 * block, 65536 + (i + 1) * 2 * block), want);
    assert.equal(liveObjects(), live - 1, "the native matrix was destroyed once its tasks were done");
  });

  test("CodingMatrix is exported for instanceof checks only", () => {
    assert.equal(typeof CodingMatrix, "function");
  });
});
