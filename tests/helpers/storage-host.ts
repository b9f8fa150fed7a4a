/**
 * A misbehaving host for tasks/storage-relay.ts (run by spawnRuntime with DOCA_SIM_SIDE=host): connects to the relay's
 * Comch channel (args[0]) and, by mode (args[1]), sends
 *   partial    the first 8 bytes of a 100-byte control message, then nothing more
 *   cores0     a query, then (its answer read) an init request asking for 0 cores
 *   tx-max     a query, then an init request asking for 4294967295 transactions
 *   garbage    a whole message of an unknown type (99)
 *   bad-descriptor  a query, then an init request whose memory descriptor is 200 bytes of "A"
 *   init       a query, then a valid init request (4 transactions, 1 core, its memory exported over PCI)
 *   idle       nothing (connected only: a host killed before its first request)
 * It prints "sent" once done and stays connected until its stdin closes.
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { Access, ComchClient, Mmap, NativeMemory, openDevice, ProgressEngine } from "../../mod.ts";

const [name, mode] = process.argv.slice(2);
const u32s = (...xs: number[]) => {
  const b = new Uint8Array(xs.length * 4);
  const v = new DataView(b.buffer);
  xs.forEach((x, i) => v.setUint32(i * 4, x >>> 0));
  return b;
};
/** One control message: length, type, id, correlation, payload (the storage wire, big-endian). */
const message = (type: number, id: number, payload = new Uint8Array(0)) => {
  const out = new Uint8Array(16 + payload.length);
  out.set(u32s(12 + payload.length, type, id, 0));
  out.set(payload, 16);
  return out;
};

using device = openDevice();
using pe = new ProgressEngine();
const client = await ComchClient.connect({ device, name, pe, timeoutMs: 30_000 });
const link = client.connection;
using memory = NativeMemory.alloc(1 << 20);
using map = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE | Access.RDMA_READ | Access.RDMA_WRITE, devices: [device] });
if (mode === "partial") {
  await link.send(u32s(100, 1));
} else if (mode === "garbage") {
  await link.send(message(99, 1));
} else if (mode === "idle") {
  // connected, and nothing more
} else {
  await link.send(message(1, 1));
  await link.recv({ timeoutMs: 30_000 });
  const descriptor = mode === "bad-descriptor" ? new Uint8Array(200).fill(0x41) : map.exportPci(device);
  const [transactions, cores] = mode === "cores0" ? [4, 0] : mode === "tx-max" ? [0xffffffff, 1] : [4, 1];
  const init = new Uint8Array(12 + descriptor.length);
  init.set(u32s(transactions, cores, descriptor.length));
  init.set(descriptor, 12);
  await link.send(message(3, 2, init));
}
console.log("sent");
for await (const _ of createInterface({ input: process.stdin })) { /* until stdin closes */ }
await client.close().catch(() => {});
process.exit(0);
