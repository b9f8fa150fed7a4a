import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { DPU_PCI, dpuEnv, HOST_PCI, pattern, uniqueName } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { spawnRuntime } from "./helpers/spawn-runtime.ts";
import { ComchClient, ComchProducer, Device, liveObjects, ProgressEngine } from "../mod.ts";

describe("ffi: Comch fast path (host producer → DPU consumer)", { timeout: 120_000 }, () => {
  test("buffers and immediate data arrive intact, in order, also under back-pressure", { skip: noLiveCounter }, async () => {
    const start = liveObjects();
    const name = uniqueName("fast");
    const dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
    try {
      await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
      await dpu.request({ op: "serve", name, repPci: HOST_PCI });
      using dev = Device.open(HOST_PCI);
      using pe = new ProgressEngine();
      await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      for (;;) if ((await dpu.receive<{ event?: string }>()).event === "accepted") break;
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
    } finally {
      await dpu.close();
    }
    assert.equal(liveObjects(), start, "producer, client, buffers and maps all released");
  });
});
