/**
 * SHA from TypeScript on the software device: one-shot digests of SHA-1/256/512 against node:crypto, a partial
 * session over many parts equal to the one-shot digest, a non-block part rejecting with DocaError, sessions used
 * concurrently, a close with tasks and a session in flight, and the capability query.
 * The last part of a session may be of any length; every other part a multiple of the block size.
 */
import "./helpers/sim-env.ts";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { HOST_PCI, pattern } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Device, DocaError, DocaErrorCode, liveObjects, Sha } from "../mod.ts";
import { localRegions, withContext } from "./helpers/local-regions.ts";
import { skipWithout } from "./helpers/skip-without.ts";

const SIZE = 4 << 20;
const DIGESTS = 64 * 64;

async function setup() {
  const r = localRegions({ srcSize: SIZE, dstSize: DIGESTS, bufs: 256 });
  const { dev, pe, src, dst, srcMap, dstMap, inv } = r;
  src.bytes.set(pattern(SIZE, 5));
  const sha = await Sha.open(dev, pe, { maxTasks: 8, maxSessions: 4 });
  const part = (offset: number, length: number) => inv.bufByData(srcMap, src.address + offset, length);
  const digestBuf = (index: number, room = 64) => inv.bufByAddr(dstMap, dst.address + index * 64, room);
  const digest = (index: number, length: number) => Buffer.from(dst.bytes.slice(index * 64, index * 64 + length)).toString("hex");
  const expected = (algorithm: string, offset: number, length: number) => createHash(algorithm).update(src.bytes.subarray(offset, offset + length)).digest("hex");
  return withContext(r, sha, { dev, pe, sha, part, digestBuf, digest, expected });
}

/** A DOCA without libdoca_sha (real DOCA without it, or the 2.7 flavour) skips, saying so. */
const skip = skipWithout("sha");

describe("ffi: Sha", { skip }, () => {
  test("capabilities: SHA-1/256/512, digest lengths and block sizes", () => {
    const dev = Device.open(HOST_PCI);
    try {
      const caps = Sha.caps(dev);
      assert.deepEqual(caps.hash, ["sha1", "sha256", "sha512"]);
      assert.deepEqual(caps.partial, ["sha1", "sha256", "sha512"]);
      assert.deepEqual(caps.digestLength, { sha1: 20, sha256: 32, sha512: 64 });
      assert.deepEqual(caps.blockSize, { sha1: 64, sha256: 64, sha512: 128 });
      assert.ok(caps.maxSrcBufSize >= SIZE);
    } finally {
      dev.close();
    }
  });

  test("one-shot digests equal node:crypto's, many in flight at once", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const jobs: Promise<void>[] = [];
    let i = 0;
    for (const algorithm of ["sha1", "sha256", "sha512"] as const) {
      for (const length of [0, 1, 63, 64, 65, 1000, 1 << 20]) {
        const index = i++;
        jobs.push(s.sha.hash(algorithm, s.part(index, length), s.digestBuf(index)).then((n) => {
          assert.equal(s.digest(index, n), s.expected(algorithm, index, length), `${algorithm} of ${length} bytes`);
        }));
      }
    }
    await Promise.all(jobs);
  });

  test("hashBatch: 20 digests (more than the 8 slots), one Promise, each equal to node:crypto's; a bad pair throws naming it", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const pairs = Array.from({ length: 20 }, (_, i) => [s.part(i * 4096, 4096 + i), s.digestBuf(i)] as const);
    const lengths = await s.sha.hashBatch("sha256", pairs);
    assert.deepEqual(lengths, new Array(20).fill(32));
    for (let i = 0; i < 20; i++) assert.equal(s.digest(i, 32), s.expected("sha256", i * 4096, 4096 + i), `digest ${i}`);
    assert.deepEqual(await s.sha.hashBatch("sha256", []), []);
    assert.throws(() => s.sha.hashBatch("sha256", [[pairs[0][0], {} as never]]), /pairs\[0\]\[1\]/);
    assert.throws(() => s.sha.hashBatch("md5" as never, pairs), /md5/);
  });

  test("a partial session over parts equals the one-shot digest; two sessions interleaved", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const a = s.sha.partial("sha256", s.digestBuf(0));
    const b = s.sha.partial("sha512", s.digestBuf(1));
    const total = 3 * (1 << 20) + 77;
    const step = 1 << 18; // a multiple of both block sizes
    let off = 0;
    while (total - off > step) {
      await Promise.all([a.update(s.part(off, step)), b.update(s.part(off, step))]);
      off += step;
    }
    const [la, lb] = await Promise.all([a.final(s.part(off, total - off)), b.final(s.part(off, total - off))]);
    assert.equal(s.digest(0, la), s.expected("sha256", 0, total));
    assert.equal(s.digest(1, lb), s.expected("sha512", 0, total));
    assert.ok(a.finished && b.finished);
    await assert.rejects(a.update(s.part(0, 64)), /final part was hashed already/);
    a.close();
    b.close();
  });

  test("a non-final part that is not whole blocks rejects with DocaError INVALID_VALUE", { timeout: 60_000 }, async () => {
    await using s = await setup();
    using p = s.sha.partial("sha1", s.digestBuf(0));
    await assert.rejects(p.update(s.part(0, 100)), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.INVALID_VALUE && e.fn === "doca_sha_task_partial_hash");
    await assert.rejects(s.sha.hash("sha256", s.part(0, 10), s.digestBuf(5, 31)), (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.INVALID_VALUE && e.fn === "doca_sha_task_hash");
    assert.throws(() => s.sha.hash("md5" as "sha1", s.part(0, 1), s.digestBuf(2)), /algorithm must be/);
  });

  test("a close with hashes and a session part in flight settles them all", { timeout: 60_000 }, async () => {
    await using s = await setup();
    const hashes = Array.from({ length: 20 }, (_, i) => s.sha.hash("sha256", s.part(0, 1 << 20), s.digestBuf(i)));
    const p = s.sha.partial("sha256", s.digestBuf(40));
    const part = p.update(s.part(0, 1 << 20));
    const closing = s.sha.close();
    const settled = await Promise.allSettled([...hashes, part]);
    await closing;
    for (const r of settled) assert.ok(r.status === "fulfilled" || r.reason instanceof Error);
    assert.equal(s.sha.inflight, 0);
  });

  test("digest(): bytes in, digest out, equal to node:crypto's (empty input too)", { timeout: 60_000 }, async () => {
    await using s = await setup();
    for (const data of [new Uint8Array(0), new TextEncoder().encode("abc"), pattern(100_000, 7)]) {
      for (const algorithm of ["sha1", "sha256", "sha512"] as const) {
        const got = await s.sha.digest(algorithm, data);
        assert.equal(Buffer.from(got).toString("hex"), createHash(algorithm).update(data).digest("hex"));
      }
    }
  });

  test("nothing left alive after a close", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    const before = liveObjects()!;
    {
      await using s = await setup();
      using p = s.sha.partial("sha1", s.digestBuf(0));
      await p.final(s.part(0, 10));
      await s.sha.hash("sha1", s.part(0, 10), s.digestBuf(1));
    }
    assert.equal(liveObjects(), before);
  });
});
