/**
 * A comch-stream DPU that answers the host's announcement with hostile text: "stop" sends a stop notice whose
 * reason is HOSTILE_TEXT; "report" lets the stream run and then sends a report whose fields are hostile text.
 *
 *   args: stop|report
 */
import process from "node:process";
import { ComchConsumer } from "../../../mod.ts";
import { acceptHost } from "./scripted-peer.ts";
import { HOSTILE_TEXT } from "./hostile-text.ts";

const [mode] = process.argv.slice(2);
const { device, pe, conn } = await acceptHost("doca-ts comch stream", "hostile stream DPU listening");
const plan = JSON.parse(new TextDecoder().decode(await conn.recv({ timeoutMs: 30_000 })));
const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
if (mode === "stop") {
  await conn.send(encode({ stop: HOSTILE_TEXT }));
} else {
  const consumer = await ComchConsumer.create({ connection: conn, device, pe, bufferSize: Math.max(plan.size, 8) });
  await conn.send(encode({ ready: true }));
  for (let i = 0; i < plan.count; i++) await consumer.recv({ timeoutMs: 30_000 });
  await conn.send(encode({ side: HOSTILE_TEXT, messages: plan.count, bytes: HOSTILE_TEXT, seconds: 1, messagesPerSecond: 1 }));
}
await new Promise((r) => setTimeout(r, 2000));
process.exit(0);
