/**
 * The window protocol (tasks/transfer/window.ts) against scripted peers, in one process and without a device: a
 * peer that writes the receiver's slot at every moment it can (as soon as this side has looked at it, hashed it, or
 * released it) must never make the bytes hashed differ from the bytes written (issue 29: bytes verified are bytes
 * committed). Deterministic, unlike the end-to-end lying-writer tests (tasks-rdma-copy, tasks-hostile), whose
 * rewrites land only when the timing allows; this one fails at once for a receiver that reads a peer-writable slot
 * twice.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type Chunk, receiveThroughWindow, sendThroughWindow } from "../tasks/transfer/window.ts";
import { FileReader, SourceChangedError } from "../tasks/transfer/local-file.ts";
import { appendFileSync, closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SLOT = 4096;
const SLOTS = 3;
const SIZE = 5 * SLOT + 123;
const honest = Uint8Array.from({ length: SIZE }, (_, i) => (i * 31 + 7) & 0xff);
const tick = () => new Promise<void>((r) => setTimeout(r, 0));

/** A receiver's window whose owner (the peer) overwrites a slot whenever `scribble` is called. */
function hostileWindow() {
  const memory = new Uint8Array(SLOTS * SLOT);
  const view = (slot: number, length: number) => memory.subarray(slot * SLOT, slot * SLOT + length);
  const announced: Chunk[] = [];
  let scribbles = 0;
  /** The peer writes foreign bytes into every slot it announced and that is not released yet. */
  const scribble = () => {
    for (const c of announced) view(c.slot, c.length).fill(0xee);
    scribbles++;
  };
  const freeSlot = () => [...Array(SLOTS).keys()].find((slot) => !announced.some((c) => c.slot === slot))!;
  return {
    memory,
    view,
    announced,
    scribble,
    freeSlot,
    get scribbles() {
      return scribbles;
    },
  };
}

/**
 * Receives the honest bytes through a hostile window whose peer writes the slots right after the hash and just
 * before the file write (and, with `scribbleOnRelease`, after each release). Returns the SHA-256 of what was hashed
 * and of what was written, and how often the peer wrote.
 */
async function receiveFromScribbler(peerWritable: boolean, scribbleOnRelease: boolean) {
  const w = hostileWindow();
  const hashed = createHash("sha256"), stored = new Uint8Array(SIZE);
  await receiveThroughWindow({
    size: SIZE,
    slotCount: SLOTS,
    slotSize: SLOT,
    view: w.view,
    // Hashing is a moment the old receivers left open: the peer writes right after it.
    hash: {
      update(bytes: Uint8Array) {
        hashed.update(bytes);
        w.scribble();
      },
    },
    // The file write reads its bytes a moment later (in the runtime's thread pool): the peer writes just before.
    file: {
      async writeAtAsync(bytes: Uint8Array, position: number) {
        await tick();
        w.scribble();
        stored.set(bytes, position);
      },
    },
    peerWritable,
    async nextAnnouncement(expected) {
      // The peer puts the honest chunk in a free slot (one it is not waiting to get back) and announces it
      while (w.announced.length >= SLOTS) await tick();
      await tick();
      const slot = w.freeSlot();
      const length = Math.min(SLOT, SIZE - expected);
      w.view(slot, length).set(honest.subarray(expected, expected + length));
      w.announced.push({ slot, offset: expected, length });
      return { slot, offset: expected, length };
    },
    slotHeld: (c) => new Error(`slot ${c.slot} announced twice`),
    async release(c) {
      w.announced.splice(w.announced.findIndex((a) => a.slot === c.slot), 1);
      if (scribbleOnRelease) w.scribble();
      await tick();
    },
  });
  return {
    hashed: hashed.digest("hex"),
    written: createHash("sha256").update(stored).digest("hex"),
    scribbles: w.scribbles,
  };
}

describe("the window's receiver commits what it verified, whatever a peer writes into its slots", () => {
  test(
    "a peer writing after the announcement, after the hash and after the release: hash and file see the same bytes",
    { timeout: 30_000 },
    async () => {
      const r = await receiveFromScribbler(true, true);
      assert.ok(r.scribbles > 10, `the peer wrote ${r.scribbles} times`);
      // What was hashed is what was written: the file's SHA-256 is the checked one.
      assert.equal(r.written, r.hashed);
    },
  );

  test("without the private copy (a slot only this side fills) the same peer is caught by this test", {
    timeout: 30_000,
  }, async () => {
    // The guard of the test itself: with peerWritable false the window hashes and writes in place, so the
    // scribbling peer makes the two differ. Were they equal here, the test above would prove nothing.
    const r = await receiveFromScribbler(false, false);
    assert.notEqual(r.written, r.hashed);
  });

  test("a slot announced again before its release is refused, and no write is under way once it fails", {
    timeout: 30_000,
  }, async () => {
    const memory = new Uint8Array(SLOTS * SLOT);
    let writing = 0, maxAfterFailure = 0, failed = false;
    const attempt = receiveThroughWindow({
      size: SIZE,
      slotCount: SLOTS,
      slotSize: SLOT,
      view: (slot, length) => memory.subarray(slot * SLOT, slot * SLOT + length),
      hash: { update() {} },
      file: {
        async writeAtAsync() {
          writing++;
          await new Promise((r) => setTimeout(r, 20));
          writing--;
        },
      },
      // In place: slot 0 is held while its 20 ms write runs, and the peer announces it again meanwhile
      peerWritable: false,
      nextAnnouncement: async (expected) => {
        await tick();
        return { slot: 0, offset: expected, length: Math.min(SLOT, SIZE - expected) }; // slot 0 every time
      },
      slotHeld: (c) => new Error(`slot ${c.slot} announced twice`),
      release: () => Promise.resolve(),
    });
    await assert.rejects(
      attempt.finally(() => {
        failed = true;
        maxAfterFailure = writing;
      }),
      /slot 0 announced twice/,
    );
    assert.ok(failed);
    assert.equal(maxAfterFailure, 0, "a file write was still under way when the receive failed");
  });
});

describe("the window's sender", () => {
  test(
    "announces in file order once each move landed, hashes every byte, and refuses a release of a slot not in flight",
    { timeout: 30_000 },
    async () => {
      const memory = new Uint8Array(SLOTS * SLOT);
      const hashed = createHash("sha256");
      const announced: Chunk[] = [];
      const releases: { slot: number; offset?: number; length?: number }[] = [];
      let landed = 0;
      const queue: Chunk[] = [];
      await sendThroughWindow({
        size: SIZE,
        slotCount: SLOTS,
        slotSize: SLOT,
        view: (slot, length) => memory.subarray(slot * SLOT, slot * SLOT + length),
        reader: { readExactly: (into, position) => into.set(honest.subarray(position, position + into.length)) },
        hash: hashed,
        // Moves land in reverse order of their start: the announcements must still leave in file order.
        deliver: (c) => new Promise<void>((r) => setTimeout(() => (landed++, r()), 30 - (c.offset / SLOT) * 5)),
        announce: async (c) => {
          announced.push(c);
          queue.push(c);
          await tick();
        },
        nextRelease: async () => {
          while (queue.length === 0) await tick();
          const c = queue.shift()!;
          releases.push(c);
          return { slot: c.slot, offset: c.offset, length: c.length };
        },
        badRelease: (r) => new Error(`release of slot ${r.slot}`),
      });
      assert.equal(landed, Math.ceil(SIZE / SLOT));
      assert.deepEqual(
        announced.map((c) => c.offset),
        Array.from({ length: Math.ceil(SIZE / SLOT) }, (_, k) => k * SLOT),
      );
      assert.equal(hashed.digest("hex"), createHash("sha256").update(honest).digest("hex"));

      const bad = sendThroughWindow({
        size: SIZE,
        slotCount: SLOTS,
        slotSize: SLOT,
        view: (slot, length) => memory.subarray(slot * SLOT, slot * SLOT + length),
        reader: { readExactly: () => {} },
        hash: { update() {} },
        announce: () => Promise.resolve(),
        nextRelease: () => Promise.resolve({ slot: SLOTS + 5 }),
        badRelease: (r) => new Error(`release of slot ${r.slot}`),
      });
      await assert.rejects(bad, new RegExp(`release of slot ${SLOTS + 5}`));
    },
  );
});

describe("a source file that changes while it is sent (an outside attack: exit 0 and 'verified' for a mix)", () => {
  const withFile = async (fn: (path: string) => Promise<void> | void) => {
    const dir = mkdtempSync(join(tmpdir(), "doca-source-change-"));
    try {
      const path = join(dir, "source");
      writeFileSync(path, honest);
      await fn(path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // a change is told apart by size, modification and change time: wait out the file system's clock granularity
  const later = () => new Promise<void>((r) => setTimeout(r, 30));

  test("the window's sender fails before its checksum leaves when the file was written during the copy", async () => {
    await withFile(async (path) => {
      using reader = new FileReader(path, SIZE);
      const queue: Chunk[] = [];
      let checksumSent = false;
      const memory = new Uint8Array(SLOTS * SLOT);
      const sent = sendThroughWindow({
        size: SIZE,
        slotCount: SLOTS,
        slotSize: SLOT,
        view: (slot, length) => memory.subarray(slot * SLOT, slot * SLOT + length),
        reader,
        hash: { update() {} },
        announce: async (c) => {
          queue.push(c);
          if (c.offset === SLOT) {
            // someone rewrites the file's beginning in place, after it was read and sent
            await later();
            const fd = openSync(path, "r+");
            writeSync(fd, new Uint8Array(100).fill(1), 0, 100, 0);
            closeSync(fd);
          }
        },
        nextRelease: async () => {
          while (queue.length === 0) await tick();
          const c = queue.shift()!;
          return { slot: c.slot };
        },
        badRelease: (r) => new Error(`release of slot ${r.slot}`),
      }).then(() => (checksumSent = true));
      await assert.rejects(sent, (e: Error) => e instanceof SourceChangedError && /changed while it was copied \(it was written to\)/.test(e.message));
      assert.equal(checksumSent, false);
    });
  });

  test("a file that grew, or whose size is not the one offered, is refused", async () => {
    await withFile(async (path) => {
      using reader = new FileReader(path, SIZE);
      reader.assertUnchanged(); // untouched: fine
      await later();
      appendFileSync(path, "more");
      assert.throws(() => reader.assertUnchanged(), new RegExp(`its size went from ${SIZE} to ${SIZE + 4} bytes`));
      assert.throws(() => new FileReader(path, SIZE), (e: Error) => e instanceof SourceChangedError && /changed before it was read: \d+ bytes, not the \d+ offered/.test(e.message));
    });
  });
});
