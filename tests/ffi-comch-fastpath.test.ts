import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import process from "node:process";
import { DPU_PCI, dpuEnv, HOST_PCI, pattern, uniqueName } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { spawnRuntime } from "./helpers/spawn-runtime.ts";
import { Access, BufInventory, ComchClient, ComchProducer, Device, liveObjects, Mmap, NativeMemory, ProgressEngine } from "../mod.ts";

type DpuSide = ReturnType<typeof spawnRuntime>;

/** A DPU-side process serving Comch and a client of it here, accepted; `body` runs with both, then all is closed. */
async function withServedClient(
  tag: string,
  body: (dpu: DpuSide, client: ComchClient, dev: Device, pe: ProgressEngine) => Promise<void>,
): Promise<void> {
  const name = uniqueName(tag);
  const dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
  try {
    await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
    await dpu.request({ op: "serve", name, repPci: HOST_PCI });
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
    for (;;) if ((await dpu.receive<{ event?: string }>()).event === "accepted") break;
    await body(dpu, client, dev, pe);
  } finally {
    await dpu.close();
  }
}

describe("ffi: Comch fast path (host producer → DPU consumer)", { timeout: 120_000 }, () => {
  test("buffers and immediate data arrive intact, in order, also under back-pressure", { skip: noLiveCounter }, async () => {
    const start = liveObjects();
    await withServedClient("fast", async (dpu, client, dev, pe) => {
      const { id } = await dpu.request<{ id: number }>({ op: "consume" }, 20_000);
      const announced = await client.connection.waitForRemoteConsumer({ timeoutMs: 10_000 });
      assert.equal(announced, id, "the consumer event carries the consumer's id");
      await using producer = await ComchProducer.create({ connection: client.connection, device: dev, pe });
      for (let i = 0; i < 8; i++) {
        await producer.send(pattern(1000 + i, i), id, new Uint8Array([i, 42]));
      }
      for (let i = 0; i < 8; i++) {
        const m = await dpu.receive<{ event: string; data: string; imm: string }>(10_000);
        assert.equal(m.event, "fast");
        assert.deepEqual(new Uint8Array(Buffer.from(m.data, "base64")), pattern(1000 + i, i));
        // DOCA delivers either the sent length or the consumer's configured immediate-data length.
        const imm = new Uint8Array(Buffer.from(m.imm, "base64"));
        assert.ok(imm.length >= 2, `immediate data of ${imm.length} bytes`);
        assert.deepEqual(imm.subarray(0, 2), new Uint8Array([i, 42]));
      }
      // Back-pressure: many sends in flight from one reused array must arrive complete and in call order.
      const message = new Uint8Array(64);
      const view = new DataView(message.buffer);
      const sends: Promise<void>[] = [];
      for (let i = 0; i < 500; i++) {
        view.setUint32(0, i, true);
        sends.push(producer.send(message, id));
      }
      await Promise.all(sends);
      for (let i = 0; i < 500; i++) {
        const m = await dpu.receive<{ event: string; data: string }>(10_000);
        const got = Buffer.from(m.data, "base64");
        assert.equal(got.length, 64);
        assert.equal(got.readUInt32LE(0), i, `message ${i} out of order`);
      }
    });
    assert.equal(liveObjects(), start, "producer, client, buffers and maps all released");
  });

  test("sendBatch and recvBatch on the fast path: every message once, in order, with its immediate data; batches share slabs", { skip: noLiveCounter }, async () => {
    await withServedClient("fastbatch", async (dpu, client, dev, pe) => {
      const { id } = await dpu.request<{ id: number }>({ op: "consumeBatches", max: 40 }, 20_000);
      await client.connection.waitForRemoteConsumer({ timeoutMs: 10_000 });
      await using producer = await ComchProducer.create({ connection: client.connection, device: dev, pe, buffers: 32 });
      const count = 300;
      // Half one send each (immediate data: the index), half in five batches of 30 (sendBatch: one immediate data per
      // batch, [batch, 0xbb]; more messages than the producer's 32 buffers are in flight, so some wait in its queue).
      const immOf = (i: number) => i < count / 2 ? new Uint8Array([i & 0xff, i >> 8]) : new Uint8Array([Math.floor((i - count / 2) / 30), 0xbb]);
      const sends = Array.from({ length: count / 2 }, (_, i) => producer.send(pattern(200 + (i % 7), i), id, immOf(i)));
      for (let first = count / 2; first < count; first += 30) {
        const batch = Array.from({ length: 30 }, (_, k) => pattern(200 + ((first + k) % 7), first + k));
        sends.push(producer.sendBatch(batch, id, immOf(first)));
        batch.forEach((m) => m.fill(0)); // copied at the call
      }
      await Promise.all(sends);
      await assert.rejects(producer.sendBatch([pattern(10, 1), new Uint8Array(5000)], id), /TOO_BIG/, "a batch with a message over bufferSize");
      await assert.rejects(producer.sendBatch([pattern(10, 1)], -1), RangeError);
      let n = 0, largest = 0, shared = false;
      while (n < count) {
        const batch = await dpu.receive<{ event: string; shared: boolean; messages: { data: string; imm: string }[] }>(10_000);
        assert.equal(batch.event, "fastBatch");
        assert.ok(batch.messages.length >= 1 && batch.messages.length <= 40, `a batch of ${batch.messages.length} (max 40)`);
        largest = Math.max(largest, batch.messages.length);
        shared ||= batch.shared;
        for (const m of batch.messages) {
          assert.deepEqual(new Uint8Array(Buffer.from(m.data, "base64")), pattern(200 + (n % 7), n), `message ${n}`);
          assert.deepEqual(new Uint8Array(Buffer.from(m.imm, "base64")).subarray(0, 2), immOf(n), `imm of ${n}`);
          n++;
        }
      }
      assert.equal(n, count);
      assert.ok(largest > 1, "messages that arrived together came in one batch");
      assert.ok(shared, "a batch's messages are views into one slab");
    });
  });

  test("messages a consumer received stay readable once its connection is gone and it is closed", { skip: noLiveCounter }, async () => {
    await withServedClient("fastgone", async (dpu, client, dev, pe) => {
      const { id } = await dpu.request<{ id: number }>({ op: "consumeIdle" }, 20_000);
      await client.connection.waitForRemoteConsumer({ timeoutMs: 10_000 });
      {
        await using producer = await ComchProducer.create({ connection: client.connection, device: dev, pe });
        await producer.sendBatch(Array.from({ length: 10 }, (_, i) => pattern(50, i)), id);
      }
      const deadline = Date.now() + 10_000;
      while ((await dpu.request<{ queued: number }>({ op: "consumerQueued" })).queued < 10) {
        assert.ok(Date.now() < deadline, "the DPU's consumer received the ten messages within 10 s");
      }
      await client.close(); // the DPU's connection ends, and with it its consumer
      for (;;) if ((await dpu.receive<{ event?: string }>(10_000)).event === "disconnected") break;
      const r = await dpu.request<{ messages: string[]; end: string; closed: boolean }>({ op: "readQueued" }, 20_000);
      assert.equal(r.closed, true, "the consumer closed with its connection");
      assert.equal(r.messages.length, 10, `all ten read after the close (then: ${r.end})`);
      r.messages.forEach((m, i) => assert.deepEqual(new Uint8Array(Buffer.from(m, "base64")), pattern(50, i), `message ${i}`));
      assert.match(r.end, /closed/);
    });
  });

  // The producer keeps its send tasks and re-arms them: each send must carry its own consumer, buffer and immediate
  // data, never what the task's previous send left armed.
  test("one producer, two consumers: every send reaches its consumer with its own bytes and immediate data", { skip: noLiveCounter }, async () => {
    await withServedClient("fast2", async (dpu, client, dev, pe) => {
      const a = (await dpu.request<{ id: number }>({ op: "consume" }, 20_000)).id;
      const b = (await dpu.request<{ id: number }>({ op: "consume" }, 20_000)).id;
      assert.notEqual(a, b);
      // The producer may send to a consumer only once its announcement arrived: drive the engine until both did.
      const deadline = Date.now() + 10_000;
      while (![a, b].every((id) => client.connection.remoteConsumers.includes(id))) {
        assert.ok(Date.now() < deadline, `consumers ${a} and ${b} announced within 10 s (known: ${client.connection.remoteConsumers})`);
        pe.progress();
        await new Promise((r) => setTimeout(r, 2));
      }
      await using producer = await ComchProducer.create({ connection: client.connection, device: dev, pe, buffers: 1 });
      using memory = NativeMemory.alloc(4096);
      using map = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE, devices: [dev] });
      using inventory = new BufInventory(1);
      memory.bytes.set(pattern(300, 77));
      using own = inventory.bufByData(map, memory.address, 300);
      // One slot: every send after the first re-arms the same task.
      const plan: { to: number; data: Uint8Array | "buf"; imm: number[] }[] = [
        { to: a, data: pattern(100, 1), imm: [1, 42] },
        { to: b, data: pattern(101, 2), imm: [] },
        { to: a, data: "buf", imm: [3, 4, 5] },
        { to: b, data: pattern(102, 4), imm: [6] },
        { to: b, data: pattern(103, 5), imm: [] },
        { to: a, data: "buf", imm: [] },
        { to: a, data: pattern(104, 7), imm: [8, 9] },
      ];
      for (const s of plan) await producer.send(s.data === "buf" ? own : s.data, s.to, new Uint8Array(s.imm));
      const got = new Map<number, { data: Uint8Array; imm: Uint8Array }[]>([[a, []], [b, []]]);
      for (let i = 0; i < plan.length; i++) {
        const m = await dpu.receive<{ event: string; consumer: number; data: string; imm: string }>(10_000);
        assert.equal(m.event, "fast");
        got.get(m.consumer)!.push({ data: new Uint8Array(Buffer.from(m.data, "base64")), imm: new Uint8Array(Buffer.from(m.imm, "base64")) });
      }
      for (const to of [a, b]) {
        const sent = plan.filter((s) => s.to === to);
        const arrived = got.get(to)!;
        assert.equal(arrived.length, sent.length, `messages for consumer ${to}`);
        sent.forEach((s, i) => {
          assert.deepEqual(arrived[i].data, s.data === "buf" ? pattern(300, 77) : s.data, `data of message ${i} to ${to}`);
          // DOCA delivers the sent length or the configured one (zero-padded): the sent bytes, then nothing else.
          assert.deepEqual(arrived[i].imm.subarray(0, s.imm.length), new Uint8Array(s.imm), `imm of message ${i} to ${to}`);
          assert.ok(arrived[i].imm.subarray(s.imm.length).every((x) => x === 0), `no stale imm in message ${i} to ${to}`);
        });
      }
      // Immediate data longer than the device takes (the software device: 32 bytes) is refused, as alloc_init
      // refuses it; the re-armed task must not go out with the previous send's immediate data instead.
      const long = await producer.send(pattern(105, 8), a, new Uint8Array(ComchProducer.IMM_MAX).fill(0x5a)).then(() => null, (e: Error) => e);
      await producer.send(pattern(106, 9), a, new Uint8Array([11]));
      if (long === null) {
        const m = await dpu.receive<{ consumer: number; imm: string }>(10_000);
        assert.ok(new Uint8Array(Buffer.from(m.imm, "base64")).every((x) => x === 0x5a), "the long immediate data, as sent");
      } else {
        assert.match(long.message, /DOCA_ERROR_INVALID_VALUE/);
      }
      const last = await dpu.receive<{ consumer: number; data: string; imm: string }>(10_000);
      assert.deepEqual(new Uint8Array(Buffer.from(last.data, "base64")), pattern(106, 9));
      const lastImm = new Uint8Array(Buffer.from(last.imm, "base64"));
      assert.equal(lastImm[0], 11);
      assert.ok(lastImm.subarray(1).every((x) => x === 0), "no stale immediate data after the refused send");
    });
  });

  // DOCA_ERROR_AGAIN (the consumer's queue is full) is retried: quickly at first, then on a timer, so a consumer that
  // makes no room for a long time is not spun on; once it drains, every send is delivered.
  test("sends to a consumer that stopped draining wait without spinning, and all complete once it drains", { skip: noLiveCounter }, async () => {
    await withServedClient("stalled", async (dpu, client, dev, pe) => {
      const { id } = await dpu.request<{ id: number }>({ op: "consume" }, 20_000);
      await client.connection.waitForRemoteConsumer({ timeoutMs: 10_000 });
      await using producer = await ComchProducer.create({ connection: client.connection, device: dev, pe, buffers: 16 });
      dpu.kill("SIGSTOP");
      try {
        const message = new Uint8Array(64);
        const sends = Array.from({ length: 3000 }, (_, i) => (message[0] = i & 255, producer.send(message, id)));
        let settled = 0;
        for (const s of sends) void s.then(() => settled++, () => settled++);
        // The consumer's socket holds a few hundred datagrams: wait until the sends stop completing (the rest retry).
        let last = -1;
        const deadline = Date.now() + 20_000;
        while (settled !== last) {
          assert.ok(Date.now() < deadline, "sends kept completing for 20 s into a stopped consumer");
          last = settled;
          await new Promise((r) => setTimeout(r, 200));
        }
        assert.ok(settled < sends.length, `the stopped consumer took all ${sends.length} messages: nothing was retried`);
        const before = process.cpuUsage();
        await new Promise((r) => setTimeout(r, 1000));
        const used = process.cpuUsage(before);
        const ms = (used.user + used.system) / 1000;
        assert.ok(ms < 500, `${ms.toFixed(0)} ms of CPU in 1 s while every send waited for room (a retry loop spinning)`);
        dpu.kill("SIGCONT");
        // The DPU side reports each message on its stdout: read them (a full pipe would stall it again).
        let arrived = 0;
        while (arrived < sends.length) if ((await dpu.receive<{ event: string }>(20_000)).event === "fast") arrived++;
        await Promise.all(sends);
        assert.equal(settled, sends.length);
      } finally {
        dpu.kill("SIGCONT");
      }
    });
  });
});
