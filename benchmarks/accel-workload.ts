/**
 * The doca-ts side of the accelerator rows (benchmarks/accel.ts), written as a user of mod.ts would: DEPTH lanes each
 * awaiting one deflate (or SHA-256) of the same SIZE bytes into its own destination, again and again for SECONDS;
 * with "batch", one loop submitting all DEPTH tasks as one batch (compressDeflateBatch / hashBatch: one Promise per
 * batch) and awaiting it; a warm-up first, untimed (accel-cell.ts). One JSON line like the C driver's: {"mode", "size",
 * "ops", "seconds"}.
 *
 *   accel-workload.ts deflate|sha SIZE SECONDS DEPTH [batch]
 */
import process from "node:process";
import { Access, BufInventory, Compress, Device, listDevices, Mmap, NativeMemory, ProgressEngine, Sha } from "../mod.ts";
import { CellClock } from "./accel-cell.ts";

const [mode, sizeArg, secondsArg, depthArg, batchArg] = process.argv.slice(2);
const size = Number(sizeArg), seconds = Number(secondsArg), depth = Number(depthArg), batched = batchArg === "batch";
if ((mode !== "deflate" && mode !== "sha") || !(size > 0) || !(seconds > 0) || !(depth > 0) || (batchArg !== undefined && !batched)) {
  console.error("usage: accel-workload.ts deflate|sha SIZE SECONDS DEPTH [batch]");
  process.exit(2);
}

const words = ["doca ", "compress ", "deflate ", "block ", "software ", "device ", "\n"];
const room = size + (size >> 3) + 1024;
using dev = Device.open(listDevices()[0].pciAddr);
using pe = new ProgressEngine();
using memory = NativeMemory.alloc(size + room * depth);
let x = 1;
for (let i = 0; i < size;) {
  x = (x * 1103515245 + 12345) >>> 0;
  for (const ch of words[(x >>> 16) % 7]) if (i < size) memory.bytes[i++] = ch.charCodeAt(0);
}
using mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using inv = new BufInventory(depth + 1);
const src = inv.bufByData(mmap, memory.address, size);
const dsts = Array.from({ length: depth }, (_, i) => inv.bufByAddr(mmap, memory.address + size + room * i, room));
await using compress = mode === "deflate" ? await Compress.open(dev, pe, { maxTasks: depth }) : undefined;
await using sha = mode === "sha" ? await Sha.open(dev, pe, { maxTasks: depth }) : undefined;
// warm-up untimed, then the measured part (accel-cell.ts; the C driver does the same)
const clock = new CellClock(seconds);
if (batched) {
  const pairs = dsts.map((dst) => [src, dst] as const);
  do {
    if (compress) await compress.compressDeflateBatch(pairs);
    else await sha!.hashBatch("sha256", pairs);
    for (const dst of dsts) dst.resetData();
  } while (clock.tick(depth));
} else {
  await Promise.all(dsts.map(async (dst) => {
    do {
      if (compress) await compress.compressDeflate(src, dst);
      else await sha!.hash("sha256", src, dst);
      dst.resetData();
    } while (clock.tick());
  }));
}
console.log(JSON.stringify({ mode: `${mode}-doca-ts${batched ? "-batch" : ""}`, size, ...clock.result() }));
