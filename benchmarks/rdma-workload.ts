/**
 * The doca-ts side of the RDMA rows: the requester of benchmarks/rdma-driver.c (same command line, same stdin/stdout
 * protocol, same "cell OP SIZE OPS SECONDS" lines), written as a user of mod.ts would, run under Deno, Bun or Node:
 *
 *   rdma-workload.ts OPS SIZES SECONDS DEPTH     OPS: write,read,send; SIZES: bytes, comma separated
 *
 * stdin: "details HEX" and "mmap HEX" from the C responder, later "go"; stdout: "details HEX" (ours), one line per
 * cell, "done". Each cell keeps DEPTH tasks in flight from DEPTH async lanes (await, reset the destination, again);
 * OPS ending in "-batch" (write-batch, read-batch, send-batch: doca-ts only) submit the DEPTH tasks as one batch
 * (writeBatch, readBatch, sendBatch: one Promise per batch) and await it, again and again.
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { Access, BufInventory, listDevices, Device, Mmap, NativeMemory, ProgressEngine, Rdma } from "../mod.ts";

const REGION = 4 << 20;
const [opsArg, sizesArg, secondsArg, depthArg] = process.argv.slice(2);
const seconds = Number(secondsArg), depth = Number(depthArg);
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s: string) => new Uint8Array(s.match(/../g)!.map((x) => parseInt(x, 16)));

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function expect(tag: string): Promise<string> {
  const { value, done } = await lines.next();
  if (done || !String(value).startsWith(tag)) throw new Error(`rdma-workload: expected "${tag}" on stdin, got ${JSON.stringify(value)}`);
  return String(value).slice(tag.length).trim();
}

const info = listDevices().find((d) => (d.caps.rdma?.tasks.length ?? 0) > 0);
if (!info) throw new Error("rdma-workload: no device with RDMA");
using dev = Device.open(info.pciAddr);
using pe = new ProgressEngine();
await using rdma = await Rdma.create(dev, pe, { permissions: Access.LOCAL_READ_WRITE, maxTasks: Math.max(depth, 1) });
const peer = unhex(await expect("details"));
const desc = unhex(await expect("mmap"));
using memory = NativeMemory.alloc(REGION);
memory.bytes.fill(0x5a);
using local = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using remote = Mmap.fromExport(desc, dev);
using inv = new BufInventory(4 * depth + 4);
const { connection, details } = rdma.exportConnection();
process.stdout.write(`details ${hex(details)}\n`);
connection.connect(peer);
await expect("go");

for (const op of opsArg.split(",")) {
  const base = op.replace(/-batch$/, ""), batched = base !== op;
  for (const size of sizesArg.split(",").map(Number)) {
    const lanes = Array.from({ length: depth }, () => {
      const src = base === "read" ? inv.bufByData(remote, remote.range.address, size) : inv.bufByData(local, memory.address, size);
      const dst = base === "read" ? inv.bufByAddr(local, memory.address, size) : inv.bufByAddr(remote, remote.range.address, size);
      return { src, dst };
    });
    let ops = 0;
    const start = performance.now(), end = start + seconds * 1000;
    if (batched) {
      const pairs = lanes.map(({ src, dst }) => [src, dst] as const), srcs = lanes.map(({ src }) => src);
      do {
        for (const { dst } of lanes) dst.resetData();
        if (base === "write") await connection.writeBatch(pairs);
        else if (base === "read") await connection.readBatch(pairs);
        else await connection.sendBatch(srcs);
        ops += depth;
      } while (performance.now() < end);
    } else {
      await Promise.all(lanes.map(async ({ src, dst }) => {
        do {
          if (base === "write") {
            dst.resetData();
            await connection.write(src, dst);
          } else if (base === "read") {
            dst.resetData();
            await connection.read(src, dst);
          } else {
            await connection.send(src);
          }
          ops++;
        } while (performance.now() < end);
      }));
    }
    const took = (performance.now() - start) / 1000;
    for (const { src, dst } of lanes) (src.close(), dst.close());
    process.stdout.write(`cell ${op} ${size} ${ops} ${took.toFixed(6)}\n`);
  }
}
process.stdout.write("done\n");
process.exit(0);
