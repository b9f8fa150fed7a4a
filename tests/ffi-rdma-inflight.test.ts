/**
 * ffi: RDMA tasks in flight together into one destination Buf. The room a write or read will fill is taken when it
 * is submitted, so the one that no longer fits fails alone with INVALID_VALUE (as the second of two DMA copies into
 * one Buf does): never a Buf whose data runs past its end, never a reset connection.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { noRdma, rdmaPair } from "./helpers/rdma-pair.ts";
import { DocaError } from "../mod.ts";

const S = 64;
const ROUNDS = 40;

function isInvalidValue(e: unknown): boolean {
  return e instanceof DocaError && /INVALID_VALUE/.test(String(e));
}

describe("ffi: RDMA tasks in flight into the same destination", { skip: noRdma }, () => {
  test("two writes into one remote Buf with room for one: the second fails INVALID_VALUE, the Buf stays whole", { timeout: 60_000 }, async () => {
    await using p = await rdmaPair(1 << 20);
    p.memA.bytes.fill(0xaa, 0, S);
    p.memA.bytes.fill(0xbb, S, 2 * S);
    for (let k = 0; k < ROUNDS; k++) {
      const at = k * 4 * S;
      const d = p.remote(at, S, true);
      await assert.rejects(p.ab.writeBatch([[p.local(0, S), d], [p.local(S, S), d]]), isInvalidValue, `round ${k}: writeBatch`);
      assert.equal(d.dataLength, S, `round ${k}: the Buf holds the first write only`);
      assert.equal(p.memB.bytes[at], 0xaa, `round ${k}: the first write's bytes`);
      assert.equal(p.memB.bytes[at + S], 0, `round ${k}: nothing written past the Buf`);
      d.close();
      const e = p.remote(at + 2 * S, S, true);
      const both = await Promise.allSettled([p.ab.write(p.local(0, S), e), p.ab.write(p.local(S, S), e)]);
      assert.equal(both[0].status, "fulfilled", `round ${k}: the first write()`);
      assert.ok(both[1].status === "rejected" && isInvalidValue(both[1].reason), `round ${k}: the second write() ${JSON.stringify(both[1])}`);
      assert.equal(e.dataLength, S);
      assert.equal(p.memB.bytes[at + 2 * S], 0xaa);
      e.close();
    }
    assert.equal(p.ab.state, "connected");
  });

  test("two writes into one remote Buf with room for both land one after the other", async () => {
    await using p = await rdmaPair(1 << 20);
    p.memA.bytes.fill(0xaa, 0, S);
    p.memA.bytes.fill(0xbb, S, 2 * S);
    const d = p.remote(0, 2 * S, true);
    await Promise.all([p.ab.write(p.local(0, S), d), p.ab.write(p.local(S, S), d)]);
    assert.equal(d.dataLength, 2 * S);
    assert.equal(p.memB.bytes[0], 0xaa);
    assert.equal(p.memB.bytes[S], 0xbb);
  });

  test("two reads into one local Buf with room for one: the second fails INVALID_VALUE, the connection stays usable", { timeout: 60_000 }, async () => {
    await using p = await rdmaPair(1 << 20);
    p.memB.bytes.fill(0xaa, 0, S);
    p.memB.bytes.fill(0xbb, S, 2 * S);
    for (let k = 0; k < ROUNDS; k++) {
      const at = 4096 + k * 2 * S;
      const d = p.local(at, S, true);
      await assert.rejects(p.ab.readBatch([[p.remote(0, S), d], [p.remote(S, S), d]]), isInvalidValue, `round ${k}: readBatch`);
      assert.equal(p.ab.state, "connected", `round ${k}`);
      assert.equal(d.dataLength, S);
      assert.equal(p.memA.bytes[at], 0xaa);
      assert.equal(p.memA.bytes[at + S], 0, `round ${k}: nothing read past the Buf`);
      d.close();
    }
    const fresh = p.local(0, S, true);
    await p.ab.read(p.remote(S, S), fresh);
    assert.equal(p.memA.bytes[0], 0xbb);
    // room for both: the two reads fill it in order
    const two = p.local(1024, 2 * S, true);
    await p.ab.readBatch([[p.remote(0, S), two], [p.remote(S, S), two]]);
    assert.equal(two.dataLength, 2 * S);
    assert.equal(p.memA.bytes[1024], 0xaa);
    assert.equal(p.memA.bytes[1024 + S], 0xbb);
  });
});
