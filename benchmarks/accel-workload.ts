/**
 * The doca-ts side of the deflate and SHA-256 rows (benchmarks/accel-rows.ts), written as a user of mod.ts would. One
 * process runs several cells in turn (one start-up per runtime and round, not per cell): per cell, DEPTH lanes each
 * awaiting one deflate (or SHA-256) of the same SIZE bytes into its own destination, again and again; with "batch",
 * one loop submitting all DEPTH tasks as one batch (compressDeflateBatch / hashBatch: one Promise per batch) and
 * awaiting it. Each cell warms up untimed, then measures SECONDS (accel-cell.ts). One JSON line per cell, like the C
 * driver's: {"mode", "size", "ops", "seconds", "cpu"}.
 *
 *   accel-workload.ts SECONDS DEPTH CELL...     CELL: deflate|sha:SIZE[:batch], e.g. sha:65536 deflate:4096:batch
 */
import process from "node:process";
import { Access, BufInventory, Compress, Device, listDevices, Mmap, NativeMemory, ProgressEngine, Sha } from "../mod.ts";
import { CellClock } from "./accel-cell.ts";

const USAGE = "usage: accel-workload.ts SECONDS DEPTH CELL...   (CELL: deflate|sha:SIZE[:batch])";

interface CellSpec {
  op: "deflate" | "sha";
  size: number;
  batched: boolean;
}

function parseCell(text: string): CellSpec {
  const [op, sizeText, mode, ...rest] = text.split(":");
  const size = Number(sizeText);
  if ((op !== "deflate" && op !== "sha") || !Number.isInteger(size) || size <= 0 || (mode !== undefined && mode !== "batch") || rest.length > 0) {
    throw new Error(`bad cell "${text}"`);
  }
  return { op, size, batched: mode === "batch" };
}

const words = ["doca ", "compress ", "deflate ", "block ", "software ", "device ", "\n"];

/** One cell: its own memory, Bufs and context, closed before the next cell starts. */
async function runCell(dev: Device, pe: ProgressEngine, { op, size, batched }: CellSpec, seconds: number, depth: number): Promise<void> {
  const room = size + (size >> 3) + 1024;
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
  await using compress = op === "deflate" ? await Compress.open(dev, pe, { maxTasks: depth }) : undefined;
  await using sha = op === "sha" ? await Sha.open(dev, pe, { maxTasks: depth }) : undefined;
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
  console.log(JSON.stringify({ mode: `${op}-doca-ts${batched ? "-batch" : ""}`, size, ...clock.result() }));
}

const [secondsArg, depthArg, ...cellArgs] = process.argv.slice(2);
const seconds = Number(secondsArg), depth = Number(depthArg);
let cells: CellSpec[] = [];
try {
  if (!(seconds > 0) || !(Number.isInteger(depth) && depth > 0) || cellArgs.length === 0) throw new Error("missing or bad SECONDS, DEPTH or CELL");
  cells = cellArgs.map(parseCell);
} catch (e) {
  console.error(`accel-workload: ${(e as Error).message}\n${USAGE}`);
  process.exit(2);
}
using dev = Device.open(listDevices()[0].pciAddr);
using pe = new ProgressEngine();
for (const cell of cells) await runCell(dev, pe, cell, seconds, depth);
