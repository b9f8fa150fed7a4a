/**
 * ffi: DOCA RDMA on the software device, two contexts in one process connected by exchanged details: every task
 * kind moves the right bytes, errors arrive as DocaError naming the task kind, options are checked before
 * anything native exists, close flushes what is in flight, nothing leaks.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { pattern } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { noRdma, rdmaDevice, rdmaPair } from "./helpers/rdma-pair.ts";
import { RuntimeChild } from "./helpers/spawn-runtime.ts";
import { Access, DocaError, liveObjects, ProgressEngine, Rdma, RdmaOpcode } from "../mod.ts";

const KiB = 1024;

describe("ffi: RDMA", { skip: noRdma }, () => {
  test("write moves src's data into the peer's memory", async () => {
    await using p = await rdmaPair();
    p.memA.bytes.set(pattern(64 * KiB));
    await p.ab.write(p.local(0, 64 * KiB), p.remote(4096, 64 * KiB, true));
    assert.deepEqual(p.memB.bytes.subarray(4096, 4096 + 64 * KiB), pattern(64 * KiB));
  });

  test("read brings the peer's memory into dst", async () => {
    await using p = await rdmaPair();
    p.memB.bytes.set(pattern(100 * KiB, 7));
    const dst = p.local(0, 100 * KiB, true);
    await p.ab.read(p.remote(0, 100 * KiB), dst);
    assert.deepEqual(p.memA.bytes.subarray(0, 100 * KiB), pattern(100 * KiB, 7));
  });

  test("writeBatch / readBatch / sendBatch: 40 operations (more than the task slots) with one Promise each; a bad pair throws naming it", { timeout: 60_000 }, async () => {
    await using p = await rdmaPair(1 << 20, { b: { receives: 48, receiveSize: 256 } });
    const n = 40, size = 4 * KiB;
    p.memA.bytes.set(pattern(n * size, 3));
    await p.ab.writeBatch(Array.from({ length: n }, (_, i) => [p.local(i * size, size), p.remote(i * size, size, true)] as const));
    assert.deepEqual(p.memB.bytes.subarray(0, n * size), pattern(n * size, 3));
    p.memB.bytes.set(pattern(n * size, 9), n * size);
    await p.ab.readBatch(Array.from({ length: n }, (_, i) => [p.remote(n * size + i * size, size), p.local(n * size + i * size, size, true)] as const));
    assert.deepEqual(p.memA.bytes.subarray(n * size, 2 * n * size), pattern(n * size, 9));
    const texts = Array.from({ length: n }, (_, i) => `message ${i}`);
    texts.forEach((t, i) => p.memA.bytes.set(new TextEncoder().encode(t), 2 * n * size + i * 64));
    await p.ab.sendBatch(texts.map((t, i) => p.local(2 * n * size + i * 64, t.length)));
    // every message once (receives complete in the device's order: DOCA_SIM_SHUFFLE reorders them)
    const got: string[] = [];
    for (let i = 0; i < n; i++) got.push(new TextDecoder().decode((await p.b.recv({ timeoutMs: 30_000 })).bytes));
    assert.deepEqual(got.sort(), [...texts].sort());
    await p.ab.writeBatch([]);
    await assert.rejects(p.ab.writeBatch([[p.local(0, 8), {} as never]]), /writeBatch: pairs\[0\]\[1\] must be an open Buf/);
    await assert.rejects(p.ab.sendBatch([p.local(0, 8), null as never]), /sendBatch: srcs\[1\] must be an open Buf/);
    // deno-lint-ignore no-sparse-arrays
    await assert.rejects(p.ab.writeBatch([[p.local(0, 8), p.remote(0, 8, true)], , [p.local(0, 8), p.remote(8, 8, true)]] as never), /writeBatch: pairs\[1\] must be \[src, dst\]/);
  });

  test("send / receive with and without immediate data; the receive names its connection", async () => {
    await using p = await rdmaPair(1 << 20, { b: { receives: 4, receiveSize: 4096 } });
    p.memA.bytes.set(new TextEncoder().encode("hello over rdma"));
    await p.ab.send(p.local(0, 15));
    const m = await p.b.recv({ timeoutMs: 30_000 });
    assert.equal(new TextDecoder().decode(m.bytes), "hello over rdma");
    assert.equal(m.opcode, RdmaOpcode.SEND);
    assert.equal(m.immediate, undefined);
    assert.equal(m.connection, p.ba);
    await p.ab.sendImm(p.local(0, 5), 0xabcd1234);
    const n = await p.b.recv({ timeoutMs: 30_000 });
    assert.equal(new TextDecoder().decode(n.bytes), "hello");
    assert.equal(n.opcode, RdmaOpcode.SEND_WITH_IMM);
    assert.equal(n.immediate, 0xabcd1234);
  });

  test("write with immediate lands the data and completes a receive with the immediate", async () => {
    await using p = await rdmaPair(1 << 20, { b: { receives: 2 } });
    p.memA.bytes.set(pattern(8 * KiB, 3));
    await p.ab.writeImm(p.local(0, 8 * KiB), p.remote(0, 8 * KiB, true), 77);
    const m = await p.b.recv({ timeoutMs: 30_000 });
    assert.equal(m.opcode, RdmaOpcode.WRITE_WITH_IMM);
    assert.equal(m.immediate, 77);
    assert.deepEqual(p.memB.bytes.subarray(0, 8 * KiB), pattern(8 * KiB, 3));
  });

  test("receive(buf): the caller's own buffer, length and opcode", async () => {
    await using p = await rdmaPair();
    p.memA.bytes.set(pattern(300, 5));
    const dst = p.inv.bufByAddr(p.mapB, p.memB.address, 4096);
    const got = p.b.receive(dst);
    await p.ab.send(p.local(0, 300));
    const r = await got;
    assert.equal(r.length, 300);
    assert.equal(r.buf, dst);
    assert.deepEqual(p.memB.bytes.subarray(0, 300), pattern(300, 5));
  });

  test("atomic fetch-and-add and compare-and-swap on the peer's 8 bytes", async () => {
    await using p = await rdmaPair();
    const remote = new DataView(p.memB.bytes.buffer, p.memB.bytes.byteOffset);
    const local = new DataView(p.memA.bytes.buffer, p.memA.bytes.byteOffset);
    remote.setBigUint64(0, 5n, true);
    await p.ab.fetchAdd(p.remote(0, 8), p.local(64, 8, true), 3);
    assert.equal(local.getBigUint64(64, true), 5n, "old value returned");
    assert.equal(remote.getBigUint64(0, true), 8n, "added");
    await p.ab.compareSwap(p.remote(0, 8), p.local(128, 8, true), 8, 2n ** 63n + 1n);
    assert.equal(local.getBigUint64(128, true), 8n);
    assert.equal(remote.getBigUint64(0, true), 2n ** 63n + 1n, "swapped (a value beyond 2^53)");
    await p.ab.compareSwap(p.remote(0, 8), p.local(192, 8, true), 1, 99);
    assert.equal(remote.getBigUint64(0, true), 2n ** 63n + 1n, "no swap when the compare differs");
  });

  test("a write into memory the peer did not open for RDMA write rejects with DocaError (doca_rdma_task_write)", async () => {
    await using p = await rdmaPair(1 << 20, { mapBAccess: Access.LOCAL_READ_WRITE | Access.RDMA_READ });
    p.memB.bytes.fill(0);
    p.memA.bytes.fill(0xee, 0, 4096);
    await assert.rejects(p.ab.write(p.local(0, 4096), p.remote(0, 4096, true)), (e: unknown) => {
      assert.ok(e instanceof DocaError, String(e));
      assert.equal(e.fn, "doca_rdma_task_write");
      return true;
    });
    assert.equal(p.memB.bytes[0], 0, "nothing written");
    // A read is allowed by the same map, and the connection still works after the refusal.
    await p.ab.read(p.remote(0, 16), p.local(0, 16, true));
  });

  test("options and arguments are checked before anything native exists", async () => {
    using dev = rdmaDevice();
    using pe = new ProgressEngine();
    const before = liveObjects();
    await assert.rejects(Rdma.create(dev, pe, { maxTasks: 0 }), RangeError);
    await assert.rejects(Rdma.create(dev, pe, { permissions: 1 << 20 }), RangeError);
    await assert.rejects(Rdma.create(dev, pe, { maxConnections: 70000 }), RangeError);
    await assert.rejects(Rdma.create(dev, pe, { transport: "ud" as "rc" }), RangeError);
    assert.equal(liveObjects(), before);
    await using r = await Rdma.create(dev, pe);
    assert.throws(() => r.listen(0), RangeError);
    await assert.rejects(r.connectTo("", 1), TypeError);
    await assert.rejects(r.recv(), /receives: N/);
    const { connection } = r.exportConnection();
    assert.throws(() => connection.connect(new Uint8Array(0)), TypeError);
    // @ts-expect-error: not a Buf
    await assert.rejects(connection.send({ address: 1 }), TypeError);
    assert.match(String(r), /^Rdma \{ .* running connections=1/);
    assert.match(String(connection), /^RdmaConnection \{ id=\d+ exported/);
  });

  test("close flushes in-flight work (settles, never hangs) and use after close throws", async () => {
    const p = await rdmaPair();
    const inflight = Array.from({ length: 32 }, (_, i) => p.ab.write(p.local(i * 4096, 4096), p.remote(i * 4096, 4096, true)));
    const settled = Promise.allSettled(inflight);
    await p.a.close();
    const results = await settled;
    for (const r of results) if (r.status === "rejected") assert.ok(r.reason instanceof Error);
    await assert.rejects(p.ab.write(p.local(0, 1), p.remote(0, 1, true)), /Rdma is closed/);
    await p[Symbol.asyncDispose]();
  });

  test("buffer lists (Buf.chain): a send gathered from two Bufs fills a three-Buf receive in order; a write and a read gathered/scattered", async () => {
    const lists = { maxSendBufListLen: 4, receiveBufListLen: 3 };
    await using p = await rdmaPair(1 << 20, { a: lists, b: lists });
    const enc = new TextEncoder();
    // send: "gathered" + "+scatter" from two places in A, into 4 + 4 + 8 bytes of B
    p.memA.bytes.set(enc.encode("gathered"), 0);
    p.memA.bytes.set(enc.encode("+scatter"), 100);
    const src = p.local(0, 8);
    src.chain(p.local(100, 8));
    assert.equal(src.listLength, 2);
    const parts = [p.inv.bufByAddr(p.mapB, p.memB.address, 4), p.inv.bufByAddr(p.mapB, p.memB.address + 4, 4), p.inv.bufByAddr(p.mapB, p.memB.address + 8, 8)];
    parts[0].chain(parts[1]);
    parts[0].chain(parts[2]);
    assert.match(String(parts[0]), /list=3/);
    const got = p.b.receive(parts[0]);
    await p.ab.send(src);
    assert.equal((await got).length, 16);
    assert.equal(new TextDecoder().decode(p.memB.bytes.subarray(0, 16)), "gathered+scatter");
    assert.deepEqual(parts.map((b) => b.dataLength), [4, 4, 8], "each element's data grew by what landed in it");
    // write: three pieces of A, one remote destination
    p.memA.bytes.set(enc.encode("three-pieces-written"), 200);
    const w = p.local(200, 5);
    w.chain(p.local(205, 7));
    w.chain(p.local(212, 8));
    await p.ab.write(w, p.remote(4096, 64, true));
    assert.equal(new TextDecoder().decode(p.memB.bytes.subarray(4096, 4116)), "three-pieces-written");
    // read: 4 KiB of B scattered over 1000 + 3096 bytes of A
    p.memB.bytes.set(pattern(4096, 3), 8192);
    const into = p.local(8192, 1000, true);
    into.chain(p.local(8192 + 1000, 3096, true));
    await p.ab.read(p.remote(8192, 4096), into);
    assert.deepEqual(p.memA.bytes.subarray(8192, 8192 + 4096), pattern(4096, 3));
    // the list goes with its head: closing it closes the members; a member cannot start another list
    assert.throws(() => parts[1].chain(p.local(0, 1)), /member of another list/);
    parts[0].close();
    assert.ok(parts.every((b) => b.closed));
  });

  test("a list longer than the context allows fails the task with DocaError, not the process", async () => {
    await using p = await rdmaPair();
    const src = p.local(0, 1);
    src.chain(p.local(1, 1)); // DOCA's default allows one Buf per list here
    await assert.rejects(p.ab.write(src, p.remote(0, 64, true)), (e: unknown) => e instanceof DocaError && /INVALID_VALUE/.test(String(e)));
    await p.ab.write(p.local(0, 2), p.remote(0, 64, true)); // the connection is still usable
  });

  test("onDisconnect: a throwing handler does not stop the ones after it; one registered after the end still runs", async () => {
    const p = await rdmaPair();
    try {
      const calls: string[] = [];
      p.ab.onDisconnect(() => {
        calls.push("first");
        throw new Error("a handler that fails");
      });
      p.ab.onDisconnect((reason) => calls.push(`second ${reason instanceof DocaError}`));
      p.ab.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.deepEqual(calls, ["first", "second true"]);
      // Late: the connection ended already, the handler still runs (once, with the same reason)
      const late = await new Promise<unknown>((resolve) => p.ab.onDisconnect(resolve));
      assert.ok(late instanceof DocaError, String(late));
      assert.throws(() => p.ab.onDisconnect(42 as unknown as () => void), TypeError);
    } finally {
      await Promise.resolve(p[Symbol.asyncDispose]()).catch(() => {});
    }
  });

  test("a server that takes connection after connection keeps serving: ended connections are retired", { skip: noLiveCounter, timeout: 60_000 }, async () => {
    // The software device keeps 4096 connection objects per context before it retires closed ones; the test-only
    // knob lowers that to 4, so 12 connections in a row cross it on both sides (and retired handles get reused).
    const child = new RuntimeChild(new URL("./helpers/rdma-churn.ts", import.meta.url), {
      args: ["12"],
      env: { DOCA_SIM_RDMA_CONN_OBJECTS: "4" },
    });
    try {
      const r = await child.receive<{ connections: number; grew: number }>(50_000);
      assert.equal(r.connections, 12);
      // Without retirement each side would hold all 12: 22 objects more than after the first connection
      assert.ok(r.grew <= 8, `live objects grew by ${r.grew}`);
      assert.equal(await child.exited, 0, child.stderr);
    } finally {
      child.kill();
    }
  });

  test("nothing leaks", { skip: noLiveCounter }, async () => {
    const before = liveObjects()!;
    {
      await using p = await rdmaPair(1 << 16, { b: { receives: 4 } });
      await p.ab.write(p.local(0, 1024), p.remote(0, 1024, true));
      await p.ab.send(p.local(0, 10));
      await p.b.recv({ timeoutMs: 30_000 });
    }
    assert.equal(liveObjects(), before);
  });
});
