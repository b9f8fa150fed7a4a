/**
 * Many Comch clients on one server (tests/fault-soak.test.ts).
 *
 *   comch-multi.ts server <name> <clients>          DPU side: accepts <clients> connections, echoes every message
 *                                                    back on the connection it came from; exits when all are gone
 *   comch-multi.ts clients <name> <clients> <msgs>   host side: <clients> ComchClients at once, each sends <msgs>
 *                                                    messages (client id, sequence number, random body) and checks
 *                                                    every reply is its own message, intact and in order
 *
 * Prints JSON lines; the final one is {"done": true, ...}. Exits 1 on any mismatch.
 */
import process from "node:process";
import { ComchClient, type ComchConnection, ComchServer, Device, ProgressEngine } from "../../../mod.ts";
import { rng } from "./common.ts";

const [role, name, clientsText, msgsText] = process.argv.slice(2);
const clients = Number(clientsText);
const emit = (m: unknown) => process.stdout.write(JSON.stringify(m) + "\n");

function message(client: number, seq: number): Uint8Array {
  const r = rng(client * 100_003 + seq + 1);
  const len = 8 + Math.floor(r() * 4000); // up to the 4080-byte default max
  const bytes = new Uint8Array(len);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, client);
  v.setUint32(4, seq);
  for (let i = 8; i < len; i++) bytes[i] = r() * 256;
  return bytes;
}

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

if (role === "server") {
  const device = Device.open("0000:03:00.1");
  const rep = device.openRepresentor("0000:b1:00.1");
  const pe = new ProgressEngine();
  const server = ComchServer.start({ device, rep, name, pe });
  process.stderr.write("multi server listening\n");
  let echoed = 0;
  const serve = async (conn: ComchConnection) => {
    for await (const m of conn.messages()) {
      await conn.send(m);
      echoed++;
    }
  };
  const done: Promise<void>[] = [];
  for (let i = 0; i < clients; i++) done.push(serve(await server.accept({ timeoutMs: 30_000 })).catch(() => {}));
  await Promise.all(done);
  emit({ done: true, echoed });
  await server.close();
  process.exit(0);
} else {
  const msgs = Number(msgsText);
  const pe = new ProgressEngine();
  const device = Device.open("0000:b1:00.1");
  let bad = 0;
  const run = async (id: number) => {
    const client = await ComchClient.connect({ device, name, pe, timeoutMs: 20_000 });
    const conn = client.connection;
    let replies = 0;
    const window = 8; // several messages in flight per client
    const receiver = (async () => {
      for (let seq = 0; seq < msgs; seq++) {
        const got = await conn.recv({ timeoutMs: 20_000 });
        if (!same(got, message(id, seq))) {
          bad++;
          emit({ client: id, seq, error: "reply differs from the message sent" });
        }
        replies++;
      }
    })();
    for (let seq = 0; seq < msgs; seq++) {
      while (seq - replies >= window) await new Promise((r) => setTimeout(r, 1));
      await conn.send(message(id, seq));
    }
    await receiver;
    await client.close();
    return replies;
  };
  const results = await Promise.allSettled(Array.from({ length: clients }, (_, i) => run(i)));
  const replies = results.map((r) => (r.status === "fulfilled" ? r.value : -1));
  const errors = results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason));
  emit({ done: true, replies, bad, errors });
  process.exit(bad === 0 && errors.length === 0 ? 0 : 1);
}
