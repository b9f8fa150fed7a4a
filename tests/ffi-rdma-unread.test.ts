/**
 * ffi: the messages recv() has not taken are bounded (Rdma.create({ maxUnreadBytes })). Past the bound the receives
 * this context keeps posted are not posted again until recv() takes messages, so a peer sending to a side that does
 * not read waits for receives (as on a receiver-not-ready) instead of growing the receiver's memory without end;
 * nothing is dropped.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { noRdma, rdmaDevice, rdmaPair } from "./helpers/rdma-pair.ts";
import { ProgressEngine, Rdma } from "../mod.ts";

const SIZE = 4096;

describe("ffi: RDMA unread bound", { skip: noRdma }, () => {
  test("a peer sending to a side that does not read is held at maxUnreadBytes; reading lets it finish, nothing lost", { timeout: 60_000 }, async () => {
    const n = 64;
    await using p = await rdmaPair(n * SIZE, { b: { receives: 8, receiveSize: SIZE, maxUnreadBytes: 64 * 1024 } });
    for (let i = 0; i < n; i++) new DataView(p.memA.bytes.buffer, p.memA.bytes.byteOffset).setUint32(i * SIZE, i, true);
    let done = false;
    const sends = p.ab.sendBatch(Array.from({ length: n }, (_, i) => p.local(i * SIZE, SIZE)));
    sends.then(() => (done = true), () => (done = true));
    // 64 × 4 KiB is four times the bound: without a reader, the batch cannot finish
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(done, false, "every send completed although nobody read and the bound is 64 KiB");
    // every message exactly once; receives complete in the order the device reports them (DOCA does not promise
    // send order across receives, and DOCA_SIM_SHUFFLE reorders them), so the set is checked, not the order
    const got: number[] = [];
    for (let i = 0; i < n; i++) {
      const m = await p.b.recv({ timeoutMs: 20_000 });
      assert.equal(m.bytes.length, SIZE);
      got.push(new DataView(m.bytes.buffer, m.bytes.byteOffset).getUint32(0, true));
    }
    assert.deepEqual(got.sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i), "every message once");
    await sends;
    assert.equal(p.ab.state, "connected");
  });

  test("maxUnreadBytes must hold one message of receiveSize", async () => {
    using dev = rdmaDevice();
    using pe = new ProgressEngine();
    await assert.rejects(Rdma.create(dev, pe, { receives: 2, receiveSize: 4096, maxUnreadBytes: 4096 }), RangeError);
    await assert.rejects(Rdma.create(dev, pe, { receives: 2, maxUnreadBytes: 1.5 }), RangeError);
  });
});
