/**
 * A comch-stream host that sends sequence numbers 0, 1, 1 (a duplicate), reads the DPU's stop notice (printed on
 * stdout) and leaves at once, as a peer told why should: the DPU must still say its own finding, not that the host
 * disconnected.
 */
import process from "node:process";
import { ComchClient, openDevice, ProgressEngine } from "../../../mod.ts";

using device = openDevice();
using pe = new ProgressEngine();
const client = await ComchClient.connect({ device, name: "doca-ts comch stream", pe, timeoutMs: 30_000 });
const conn = client.connection;
await conn.send(new TextEncoder().encode(JSON.stringify({ count: 10, size: 64 })));
const consumerId = await conn.waitForRemoteConsumer({ timeoutMs: 30_000 });
await conn.recv({ timeoutMs: 30_000 }); // {ready}
const producer = await conn.createProducer({ bufferSize: 64, buffers: 4 });
for (const seq of [0, 1, 1]) {
  const m = new Uint8Array(64);
  new DataView(m.buffer).setUint32(0, seq, true);
  await producer.send(m, consumerId);
}
process.stdout.write(new TextDecoder().decode(await conn.recv({ timeoutMs: 30_000 })) + "\n");
process.exit(0); // gone at once
