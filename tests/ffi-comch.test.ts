import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout } from "node:timers";
import { DPU_PCI, dpuEnv, HOST_PCI, pattern, uniqueName } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { ComchClient, Device, liveObjects, ProgressEngine, TimeoutError } from "../mod.ts";

const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);

/** Starts an echo server in a DPU process of the same runtime. */
async function startServer(name: string, greeting?: string): Promise<RuntimeChild> {
  const dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
  await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
  await dpu.request({ op: "serve", name, repPci: HOST_PCI, greeting });
  return dpu;
}

/**
 * An echo server in a DPU process and a client of it here, accepted; `body` runs with both, then all is closed and
 * nothing may be left behind. `connect`: the client's options besides device, name, pe and timeout.
 */
async function withClient(
  tag: string,
  connect: { maxUnreadBytes?: number; sendTasks?: number },
  body: (dpu: RuntimeChild, client: ComchClient, pe: ProgressEngine) => Promise<void>,
): Promise<void> {
  const start = liveObjects();
  const name = uniqueName(tag);
  const dpu = await startServer(name);
  try {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000, ...connect });
    await awaitEvent(dpu, "accepted");
    await body(dpu, client, pe);
  } finally {
    await dpu.close();
  }
  assert.equal(liveObjects(), start, "no leaked handles");
}

/** Reads the child's lines until an event line `{event}` arrives. */
async function awaitEvent(dpu: RuntimeChild, event: string, timeoutMs = 10_000): Promise<void> {
  for (;;) {
    const line = await dpu.receive<{ event?: string; error?: string }>(timeoutMs);
    if (line.event === "error") throw new Error(`peer: ${line.error}`);
    if (line.event === event) return;
  }
}

describe("ffi: Comch control path (DPU server process, host client here)", { timeout: 120_000 }, () => {
  test("round trip: messages come back in order, byte for byte", { skip: noLiveCounter }, async () => {
    await withClient("echo", {}, async (_dpu, client) => {
      const conn = client.connection;
      assert.equal(conn.connected, true);
      assert.ok(conn.maxMsgSize >= 1024);
      for (let i = 0; i < 20; i++) await conn.send(text(`msg ${i}`));
      for (let i = 0; i < 20; i++) assert.equal(str(await conn.recv({ timeoutMs: 10_000 })), `echo:msg ${i}`);
      const big = "x".repeat(conn.maxMsgSize - 5);
      await conn.send(text(big));
      assert.equal(str(await conn.recv({ timeoutMs: 10_000 })), `echo:${big}`);
      await assert.rejects(conn.send(new Uint8Array(conn.maxMsgSize + 1)), /TOO_BIG/);
      await assert.rejects(conn.recv({ timeoutMs: 100 }), TimeoutError);
      await client.close();
      await client.close();
      assert.throws(() => client.connection, /is closed/);
    });
  });

  test("recvBatch: every message once, in order, byte for byte; batches share slabs, recv() gets its own buffer", { skip: noLiveCounter }, async () => {
    await withClient("batch", {}, async (dpu, client, pe) => {
      const conn = client.connection;
      await assert.rejects(conn.recvBatch({ max: 0 }), RangeError);
      await assert.rejects(conn.recvBatch({ timeoutMs: 50 }), TimeoutError);
      const count = 400, size = 100;
      // Received while they are sent (the server's sends complete as this side's engine takes them in).
      const sending = dpu.request({ op: "sendMany", count, size }, 20_000);
      const got: Uint8Array[] = [];
      let largest = 0, shared = false;
      // The first call takes one (max 1) and leaves the rest queued; recv() then hands out a queued slab message
      // in a buffer of its own.
      got.push(...await conn.recvBatch({ max: 1, timeoutMs: 10_000 }));
      while (got.length < count - 1) {
        const max = Math.min(50, count - 1 - got.length); // the last message is left for recv()
        const batch = await conn.recvBatch({ max, timeoutMs: 10_000 });
        assert.ok(batch.length >= 1 && batch.length <= max, `a batch of ${batch.length} (max ${max})`);
        largest = Math.max(largest, batch.length);
        shared ||= batch.length > 1 && batch.every((m) => m.buffer === batch[0].buffer && m.byteLength < m.buffer.byteLength);
        got.push(...batch);
      }
      // Let the last message be queued (into a slab, as this reader takes batches) before recv() takes it.
      const deadline = Date.now() + 10_000;
      while (conn.unreadBytes === 0) {
        assert.ok(Date.now() < deadline, "the last message arrived within 10 s");
        pe.progress();
        await new Promise((r) => setTimeout(r, 1));
      }
      const last = await conn.recv({ timeoutMs: 10_000 });
      assert.equal(last.byteLength, last.buffer.byteLength, "recv() hands out a buffer of its own");
      got.push(last);
      assert.equal(got.length, count);
      await sending;
      got.forEach((m, i) => assert.deepEqual(m, pattern(size, i), `message ${i}`));
      assert.ok(largest > 1, "messages that arrived together came in one batch");
      assert.ok(shared, "a batch's messages are views into one slab");
      assert.equal(conn.unreadBytes, 0);

      // Readers waiting at once are served in call order, each batch in arrival order: taken in the order the
      // promises resolve, the messages come out as sent.
      const taken: Uint8Array[][] = [];
      const readers = [
        conn.recvBatch({ max: 4, timeoutMs: 10_000 }).then((b) => taken.push(b)),
        conn.recv({ timeoutMs: 10_000 }).then((m) => taken.push([m])),
        conn.recvBatch({ max: 3, timeoutMs: 10_000 }).then((b) => taken.push(b)),
      ];
      await dpu.request({ op: "sendMany", count: 12, size }, 20_000);
      await Promise.all(readers);
      let inOrder = taken.flat();
      while (inOrder.length < 12) inOrder = [...inOrder, ...await conn.recvBatch({ timeoutMs: 10_000 })];
      assert.equal(inOrder.length, 12);
      inOrder.forEach((m, i) => assert.deepEqual(m, pattern(size, i), `message ${i} of the concurrent readers`));
    });
  });

  test("messages readers wait for do not count as unread: a burst larger than maxUnreadBytes reaches waiting batch readers", { skip: noLiveCounter }, async () => {
    await withClient("claimed", { maxUnreadBytes: 65_536 }, async (dpu, client) => {
      const conn = client.connection;
      const size = conn.maxMsgSize, count = 20; // 20 × (4080 + overhead) bytes: more than the bound
      // One reader, always waiting again at once (its next call comes before the engine runs again): every message
      // arrives for a waiting reader, however many come in one burst.
      const reading = (async () => {
        const got: Uint8Array[] = [];
        while (got.length < count) got.push(...await conn.recvBatch({ timeoutMs: 10_000 }));
        return got;
      })();
      // The whole burst lands at once: the server sends while this process is blocked (not taking messages in),
      // then one turn of the engine takes in what the socket holds, all for the waiting reader.
      await dpu.request({ op: "sendMany", count, size, wait: false }, 20_000);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      const got = await reading;
      got.forEach((m, i) => assert.deepEqual(m, pattern(size, i), `message ${i}`));
      assert.equal(conn.connected, true, "not cut for unread messages");
      assert.equal(conn.unreadBytes, 0);
    });
  });

  test("sendBatch: messages go out in order with one Promise; a batch with a bad message sends none of it", { skip: noLiveCounter }, async () => {
    await withClient("sendbatch", { sendTasks: 8 }, async (_dpu, client) => {
      const conn = client.connection;
      // More messages than send tasks: the rest wait in the queue, copied (the arrays are overwritten at once).
      const batch = Array.from({ length: 40 }, (_, i) => text(`b ${i}`));
      const sent = conn.sendBatch(batch);
      batch.forEach((m) => m.fill(0x21));
      await sent;
      await assert.rejects(conn.sendBatch([text("never 1"), new Uint8Array(conn.maxMsgSize + 1), text("never 2")]), /TOO_BIG/);
      await assert.rejects(conn.sendBatch("nope" as unknown as Uint8Array[]), TypeError);
      await conn.sendBatch([]);
      // What is checked is what is sent: an element read once (a getter handing out an oversize array on its second
      // read must not reach the send slab).
      let reads = 0;
      const sly: Uint8Array[] = [];
      Object.defineProperty(sly, 0, { get: () => (++reads === 1 ? text("sly") : new Uint8Array(3 * conn.maxMsgSize).fill(0x41)), enumerable: true });
      await conn.sendBatch(sly);
      assert.equal(reads, 1, "each message is read once");
      await conn.send(text("after"));
      for (let i = 0; i < 40; i++) assert.equal(str(await conn.recv({ timeoutMs: 10_000 })), `echo:b ${i}`);
      assert.equal(str(await conn.recv({ timeoutMs: 10_000 })), "echo:sly", "nothing of the refused batch was sent");
      assert.equal(str(await conn.recv({ timeoutMs: 10_000 })), "echo:after");
    });
  });

  test("the server disconnects a client while its sends are in flight (DOCA_ERROR_AGAIN is retried)", async () => {
    await withClient("busy", {}, async (dpu, client) => {
      const gone = new Promise<void>((resolve) => client.connection.onDisconnect(resolve));
      dpu.send({ op: "disconnectBusy", count: 32 });
      let r: { ok?: boolean; event?: string; error?: string; connected?: boolean };
      do r = await dpu.receive<typeof r>(30_000); while (r.event === "disconnected"); // the server's watcher line
      assert.equal(r.error, undefined, "disconnect() must not throw on DOCA_ERROR_AGAIN");
      assert.equal(r.ok, true);
      assert.equal(r.connected, false);
      await gone;
      assert.equal(client.connection.connected, false, "the client saw the disconnect");
      await client.close();
    });
  });

  test("a message the server sends as soon as it accepts is not lost in the client's connect", async () => {
    const name = uniqueName("greet");
    const dpu = await startServer(name, "hello at accept");
    try {
      using dev = Device.open(HOST_PCI);
      using pe = new ProgressEngine();
      await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      assert.equal(str(await client.connection.recv({ timeoutMs: 10_000 })), "hello at accept");
    } finally {
      await dpu.close();
    }
  });

  test("killing the server process is seen by the client within a timeout", async () => {
    const name = uniqueName("victim");
    const dpu = await startServer(name);
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
    const conn = client.connection;
    await conn.send(text("ping"));
    assert.equal(str(await conn.recv({ timeoutMs: 10_000 })), "echo:ping");
    const gone = new Promise<number>((resolve) => {
      const t0 = Date.now();
      conn.onDisconnect(() => resolve(Date.now() - t0));
    });
    dpu.kill();
    await dpu.exited;
    const ms = await Promise.race([gone, new Promise<number>((_, reject) => setTimeout(() => reject(new Error("no disconnect within 10 s")), 10_000))]);
    assert.ok(ms < 10_000);
    assert.equal(conn.connected, false);
    await assert.rejects(conn.recv(), /disconnected/);
  });

  test("connecting to a name nobody serves times out with TimeoutError", { skip: noLiveCounter }, async () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    const start = liveObjects();
    const name = uniqueName("nobody");
    // Nobody listens: the client keeps trying (DOCA's client stays STARTING), so the wait runs out.
    await assert.rejects(ComchClient.connect({ device: dev, name, pe, timeoutMs: 500 }), (e: unknown) => {
      assert.ok(e instanceof TimeoutError, `expected a TimeoutError, got ${e}`);
      assert.match(e.message, new RegExp(`after 500 ms.*"${name}"`));
      return true;
    });
    assert.equal(liveObjects(), start, "the failed client was destroyed");
  });

  test("a connect that is still waiting when its device is closed ends with a clear error, never touching the destroyed context", { skip: noLiveCounter }, async () => {
    const dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    const start = liveObjects();
    // Nobody listens; the caller gives up (an interrupt) and closes the device, which closes the client under the wait
    const connecting = ComchClient.connect({ device: dev, name: uniqueName("nobody"), pe, timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    dev.close();
    await assert.rejects(connecting, (e: unknown) => {
      // Before: the wait woke up and asked DOCA for the destroyed context's state (doca_ctx_get_state: strict mode's
      // use-after-destroy, freed memory on DOCA)
      assert.doesNotMatch(String(e), /doca_ctx_get_state/);
      assert.match(String(e), /closed|destroyed/);
      return true;
    });
    assert.ok(liveObjects()! < start!, "the client and the device are gone");
  });
});
