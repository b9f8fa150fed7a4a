/**
 * AesGcm and AesGcmKey from TypeScript on the software device, checked against node:crypto's AES-GCM both ways:
 * what AesGcm seals node:crypto opens, what node:crypto seals AesGcm opens (128- and 256-bit keys, 96- and 128-bit
 * tags, with and without AAD, on bytes and on Bufs in DOCA's layout); a forged tag, a flipped byte or other AAD
 * rejects with DocaError AUTHENTICATION and writes nothing; a close with tasks in flight settles them all.
 */
import { Buffer } from "node:buffer";
import crypto from "node:crypto";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { HOST_PCI, pattern } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Access, AesGcm, BufInventory, Device, DocaError, DocaErrorCode, liveObjects, Mmap, NativeMemory, ProgressEngine } from "../mod.ts";

const skip: string | false = (() => {
  using dev = Device.open(HOST_PCI);
  const caps = AesGcm.caps(dev);
  return caps.encrypt && caps.decrypt ? false : `no AES-GCM here: ${AesGcm.unavailableReason() ?? "the device lacks it"}`;
})();

function nodeSeal(key: Uint8Array, iv: Uint8Array, plain: Uint8Array, aad: Uint8Array, tagSize: number): Uint8Array {
  const c = crypto.createCipheriv(key.length === 16 ? "aes-128-gcm" : "aes-256-gcm", key, iv, { authTagLength: tagSize });
  if (aad.length) c.setAAD(aad);
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
}

function nodeOpen(key: Uint8Array, iv: Uint8Array, sealed: Uint8Array, aad: Uint8Array, tagSize: number): Uint8Array {
  const d = crypto.createDecipheriv(key.length === 16 ? "aes-128-gcm" : "aes-256-gcm", key, iv, { authTagLength: tagSize });
  if (aad.length) d.setAAD(aad);
  d.setAuthTag(sealed.subarray(sealed.length - tagSize));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - tagSize)), d.final()]);
}

function setup() {
  const dev = Device.open(HOST_PCI);
  const pe = new ProgressEngine();
  const aes = new AesGcm(dev, pe, { maxTasks: 8 });
  return {
    dev, pe, aes,
    async [Symbol.asyncDispose]() {
      await aes.close();
      pe.close();
      dev.close();
    },
  };
}

const isAuthFailure = (e: unknown) => e instanceof DocaError && e.code === DocaErrorCode.AUTHENTICATION;

describe("ffi: AES-GCM", { skip }, () => {
  test("sealed by AesGcm, opened by node:crypto, and back: 128/256-bit keys, 12/16-byte tags, AAD or none", async () => {
    await using s = setup();
    for (const keyLength of [16, 32]) {
      for (const tagSize of [12, 16] as const) {
        for (const aadLength of [0, 5, 40]) {
          for (const length of [0, 1, 16, 1000, 70_000]) {
            const raw = crypto.randomBytes(keyLength), iv = crypto.randomBytes(12);
            const aad = new Uint8Array(crypto.randomBytes(aadLength)), plain = pattern(length, length + aadLength);
            using key = s.aes.key(raw);
            const sealed = await s.aes.seal(plain, { key, iv, tagSize, aad });
            assert.deepEqual(Buffer.from(sealed), Buffer.from(nodeSeal(raw, iv, plain, aad, tagSize)));
            assert.deepEqual(Buffer.from(nodeOpen(raw, iv, sealed, aad, tagSize)), Buffer.from(plain));
            const theirs = nodeSeal(raw, iv, plain, aad, tagSize);
            assert.deepEqual(Buffer.from(await s.aes.open(theirs, { key, iv, tagSize, aad })), Buffer.from(plain));
          }
        }
      }
    }
  });

  test("keys and directions switched from task to task: each message under its own key (the device keeps a key's set-up between tasks)", async () => {
    await using s = setup();
    const raws = [crypto.randomBytes(32), crypto.randomBytes(32), crypto.randomBytes(16), crypto.randomBytes(16)];
    const keys = raws.map((raw) => s.aes.key(raw));
    try {
      for (let round = 0; round < 3; round++) {
        for (const [k, raw] of raws.entries()) {
          const iv = crypto.randomBytes(12), plain = pattern(1000 + k, round * 4 + k), aad = new Uint8Array(0);
          const sealed = await s.aes.seal(plain, { key: keys[k], iv });
          assert.deepEqual(Buffer.from(sealed), Buffer.from(nodeSeal(raw, iv, plain, aad, 16)), `round ${round}, key ${k}`);
          // the same key right after, the other direction; then a wrong key of the same length must not open it
          assert.deepEqual(Buffer.from(await s.aes.open(sealed, { key: keys[k], iv })), Buffer.from(plain));
          await assert.rejects(s.aes.open(sealed, { key: keys[k ^ 1], iv }), /AUTHENTICATION/);
        }
      }
    } finally {
      for (const key of keys) key.close();
    }
  });

  test("a forged tag, a flipped ciphertext byte, other AAD or another key: AUTHENTICATION, nothing written", async () => {
    await using s = setup();
    const raw = crypto.randomBytes(32), iv = crypto.randomBytes(12), aad = new Uint8Array([1, 2, 3]);
    using key = s.aes.key(raw);
    using other = s.aes.key(crypto.randomBytes(32));
    const plain = pattern(500);
    const sealed = new Uint8Array(nodeSeal(raw, iv, plain, aad, 16)); // a copy: Buffer.slice would share memory
    const forged = sealed.slice();
    forged[forged.length - 1] ^= 1;
    const flipped = sealed.slice();
    flipped[17] ^= 0x80;
    await assert.rejects(s.aes.open(forged, { key, iv, aad }), isAuthFailure);
    await assert.rejects(s.aes.open(flipped, { key, iv, aad }), isAuthFailure);
    await assert.rejects(s.aes.open(sealed, { key, iv, aad: new Uint8Array([1, 2, 4]) }), isAuthFailure);
    await assert.rejects(s.aes.open(sealed, { key: other, iv, aad }), isAuthFailure);
    await assert.rejects(s.aes.open(sealed, { key, iv: crypto.randomBytes(12), aad }), isAuthFailure);

    // On Bufs: the destination is left exactly as it was
    const memory = NativeMemory.alloc(4096);
    const mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [s.dev] });
    const inv = new BufInventory(4);
    try {
      memory.bytes.set(aad, 0);
      memory.bytes.set(forged, aad.length);
      memory.bytes.fill(0x77, 2048);
      const src = inv.bufByData(mmap, memory.address, aad.length + forged.length);
      const dst = inv.bufByAddr(mmap, memory.address + 2048, 2048);
      await assert.rejects(s.aes.decrypt(src, dst, { key, iv, aadSize: aad.length }), isAuthFailure);
      assert.equal(dst.dataLength, 0);
      assert.ok(memory.bytes.subarray(2048).every((b) => b === 0x77), "no byte of the destination changed");
      // the layout on Bufs: AAD, ciphertext, tag
      memory.bytes.set(plain, aad.length);
      const src2 = inv.bufByData(mmap, memory.address, aad.length + plain.length);
      const dst2 = inv.bufByAddr(mmap, memory.address + 2048, 2048);
      await s.aes.encrypt(src2, dst2, { key, iv, aadSize: aad.length });
      assert.equal(dst2.dataLength, aad.length + sealed.length);
      assert.deepEqual(memory.bytes.slice(2048, 2048 + aad.length), aad);
      assert.deepEqual(Buffer.from(memory.bytes.slice(2048 + aad.length, 2048 + dst2.dataLength)), Buffer.from(sealed));
    } finally {
      inv.close();
      mmap.close();
      memory.close();
    }
  });

  test("encryptBatch / decryptBatch: 20 tasks (more than the 8 slots), one Promise, each its own IV, node:crypto agrees; one forged tag rejects the batch after all settled", { timeout: 60_000 }, async () => {
    await using s = setup();
    const raw = crypto.randomBytes(32);
    using key = s.aes.key(raw);
    const n = 20, size = 4096, tag = 16;
    using memory = NativeMemory.alloc(n * (size + tag) * 3);
    using mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [s.dev] });
    using inv = new BufInventory(3 * n);
    const plains = Array.from({ length: n }, (_, i) => pattern(size, i + 1));
    const ivs = Array.from({ length: n }, () => new Uint8Array(crypto.randomBytes(12)));
    const at = (region: number, i: number) => memory.address + (region * n + i) * (size + tag);
    const view = (region: number, i: number, length: number) => memory.bytes.subarray((region * n + i) * (size + tag), (region * n + i) * (size + tag) + length);
    plains.forEach((p, i) => view(0, i, size).set(p));
    const sealed = plains.map((_, i) => ({ src: inv.bufByData(mmap, at(0, i), size), dst: inv.bufByAddr(mmap, at(1, i), size + tag), iv: ivs[i] }));
    await s.aes.encryptBatch(sealed, { key });
    for (let i = 0; i < n; i++) {
      assert.equal(sealed[i].dst.dataLength, size + tag);
      assert.deepEqual(new Uint8Array(nodeOpen(raw, ivs[i], view(1, i, size + tag), new Uint8Array(0), tag)), plains[i], `task ${i}`);
    }
    const opened = sealed.map((x, i) => ({ src: x.dst, dst: inv.bufByAddr(mmap, at(2, i), size), iv: ivs[i] }));
    await s.aes.decryptBatch(opened, { key });
    for (let i = 0; i < n; i++) assert.deepEqual(view(2, i, size), plains[i], `task ${i} round trip`);
    // one forged tag among them: the batch rejects with AUTHENTICATION once every task settled; the others decrypted
    view(1, 7, size + tag)[size] ^= 1;
    for (const x of opened) x.dst.resetData();
    view(2, 3, size).fill(0);
    await assert.rejects(s.aes.decryptBatch(opened, { key }), isAuthFailure);
    assert.equal(s.aes.inflight, 0, "every task settled before the rejection");
    assert.deepEqual(view(2, 3, size), plains[3], "another task of the batch still decrypted");
    await s.aes.encryptBatch([], { key });
    assert.throws(() => s.aes.encryptBatch([{ src: sealed[0].src, dst: sealed[0].dst, iv: new Uint8Array(13) }], { key }), /items\[0\]\.iv/);
    assert.throws(() => s.aes.encryptBatch([{ src: sealed[0].src, dst: {} as never, iv: ivs[0] }], { key }), /items\[0\]\.dst must be a Buf/);
  });

  test("bad parameters throw at once", async () => {
    await using s = setup();
    assert.throws(() => s.aes.key(new Uint8Array(24)), RangeError);
    using key = s.aes.key(new Uint8Array(16));
    await assert.rejects(s.aes.seal(new Uint8Array(1), { key, iv: new Uint8Array(13) }), RangeError);
    await assert.rejects(s.aes.seal(new Uint8Array(1), { key, iv: new Uint8Array(12), tagSize: 8 as 12 }), RangeError);
    await assert.rejects(s.aes.open(new Uint8Array(4), { key, iv: new Uint8Array(12) }), RangeError);
    using dev2 = Device.open(HOST_PCI);
    await using other = new AesGcm(dev2, s.pe, { maxTasks: 1 });
    using foreign = other.key(new Uint8Array(16));
    await assert.rejects(s.aes.seal(new Uint8Array(1), { key: foreign, iv: new Uint8Array(12) }), TypeError);
  });

  test("a key closed while its tasks run: they finish and decrypt right, then it is destroyed", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    await using s = setup();
    const raw = crypto.randomBytes(32), iv = crypto.randomBytes(12);
    const key = s.aes.key(raw);
    // a first round of twice the 8 slots leaves every slot's kept task allocated (they are reused): count from there
    await Promise.all(Array.from({ length: 16 }, (_, i) => s.aes.seal(pattern(100, i), { key, iv })));
    const live = liveObjects()!;
    const plains = Array.from({ length: 12 }, (_, i) => pattern(3000, i));
    const jobs = plains.map((p) => s.aes.seal(p, { key, iv })); // more than maxTasks (8): some wait in the queue
    key.close();
    await assert.rejects(s.aes.seal(plains[0], { key, iv }), /closed/);
    const sealed = await Promise.all(jobs);
    sealed.forEach((x, i) => assert.deepEqual(Buffer.from(nodeOpen(raw, iv, x, new Uint8Array(0), 16)), Buffer.from(plains[i])));
    assert.equal(liveObjects(), live - 1, "the native key was destroyed once its tasks were done");
  });

  test("closing with tasks in flight settles them all, keys closed first, nothing left", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    const before = liveObjects()!;
    {
      await using s = setup();
      const key = s.aes.key(crypto.randomBytes(16));
      const iv = new Uint8Array(12);
      const jobs = Array.from({ length: 30 }, (_, i) => s.aes.seal(pattern(4096, i), { key, iv }));
      assert.ok(s.aes.inflight > 0);
      const closing = s.aes.close();
      const settled = await Promise.allSettled(jobs);
      await closing;
      assert.ok(key.closed);
      for (const r of settled) if (r.status === "rejected") assert.match(String(r.reason), /closed|DOCA_ERROR/);
    }
    assert.equal(liveObjects(), before);
  });
});
