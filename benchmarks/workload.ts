/**
 * The doca-ts side of `deno task bench`: the DMA cells of benchmarks/driver.c, written as a user of mod.ts would
 * write them, run under Deno, Bun or Node. Same command line and same output as `driver run`:
 *
 *   workload.ts SECONDS CELL...     CELL = local:S:D | read:S:D | write:S:D | rate:S:D | batch:S:D | call | call-api
 *
 * One JSON object per cell on stdout. Each of the D lanes owns its buffer pairs (one task per pair at a time) and
 * loops reset-destination → memcpy → await, exactly like the C driver's completion callback; `batch` submits the
 * D copies with one memcpyBatch() per round instead. read/write cells import the export named by BENCH_EXPORT.
 */
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import process from "node:process";
import {
  Access,
  type Buf,
  BufInventory,
  type Device,
  Dma,
  Mmap,
  NativeMemory,
  openDevice,
  ProgressEngine,
} from "../mod.ts";
import { measureCallOverhead } from "../ffi/diagnostics.ts";
import { measureTaskCost } from "./task-cost.ts";

const MAX_BUFFERS = 1024;

interface Cell {
  op: string;
  size: number;
  depth: number;
}

function parseCell(text: string): Cell {
  const [op, size = "0", depth = "1"] = text.split(":");
  const cell = { op, size: Number(size), depth: Number(depth) };
  if (!Number.isSafeInteger(cell.size) || !Number.isSafeInteger(cell.depth) || cell.depth < 1) {
    throw new Error(`bad cell "${text}" (op:size[:depth])`);
  }
  return cell;
}

function report(cell: Cell, value: number, unit: string): void {
  process.stdout.write(JSON.stringify({ op: cell.op, size: cell.size, depth: cell.depth, value, unit }) + "\n");
}

interface Region {
  mmap: Mmap;
  address: number;
}

class Bench implements Disposable {
  readonly device: Device;
  readonly pe = new ProgressEngine();
  readonly dma: Dma;
  readonly inventory = new BufInventory(2 * MAX_BUFFERS);
  readonly maxBuf: number;
  #remote: Mmap | undefined;

  constructor() {
    this.device = openDevice();
    this.dma = new Dma(this.device, this.pe, { maxTasks: MAX_BUFFERS });
    this.maxBuf = this.device.info.caps.dmaMaxBufSize;
  }

  /** The exporter's memory (driver export wrote "address length hex-descriptor" to BENCH_EXPORT). */
  remote(span: number): Region {
    if (!this.#remote) {
      const path = process.env.BENCH_EXPORT;
      if (!path) throw new Error("read/write cells need BENCH_EXPORT (a file written by `driver export`)");
      const [, , hex] = readFileSync(path, "utf8").trim().split(" ");
      const descriptor = new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
      this.#remote = Mmap.fromExport(descriptor, this.device);
    }
    if (span > this.#remote.range.length) throw new Error(`the export is smaller than ${span} bytes`);
    return { mmap: this.#remote, address: this.#remote.range.address };
  }

  async dmaCell(cell: Cell, seconds: number): Promise<void> {
    const { op, size, depth } = cell;
    const perTask = op === "rate" || op === "batch";
    const chunk = perTask ? size : Math.min(size, this.maxBuf);
    const chunks = perTask ? depth : size / chunk;
    const pairs = Math.max(chunks, depth);
    if (pairs > MAX_BUFFERS || pairs % depth !== 0) throw new Error(`cell ${op}:${size}:${depth} has too many buffers`);
    const span = chunk * chunks;
    using a = NativeMemory.alloc(span);
    using b = NativeMemory.alloc(span);
    // Sources hold 0x5a (as the exporter's memory does), destinations 0xa5: a copy that moved nothing shows.
    a.bytes.fill(0x5a);
    b.bytes.fill(0xa5);
    const permissions = Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE;
    using aMap = Mmap.create({ memory: a, permissions, devices: [this.device] });
    using bMap = Mmap.create({ memory: b, permissions, devices: [this.device] });
    const local = (map: Mmap, memory: NativeMemory): Region => ({ mmap: map, address: memory.address });
    const from = op === "read" ? this.remote(span) : local(aMap, a);
    const to = op === "write" ? this.remote(span) : local(bMap, b);

    const src: Buf[] = [], dst: Buf[] = [];
    try {
      for (let p = 0; p < pairs; p++) {
        const offset = (p % chunks) * chunk;
        src.push(this.inventory.bufByData(from.mmap, from.address + offset, chunk));
        dst.push(this.inventory.bufByAddr(to.mmap, to.address + offset, chunk));
      }
      const run = op === "batch" ? (s: number) => this.#batches(src, dst, s) : (s: number) => this.#lanes(src, dst, depth, s);
      await run(0); // warm-up: one pass over every pair
      const t0 = performance.now();
      const tasks = await run(seconds);
      const elapsed = (performance.now() - t0) / 1000;
      const bytes = (m: NativeMemory) => Buffer.from(m.bytes.buffer, m.bytes.byteOffset, span);
      if (op !== "write" && !bytes(b).equals(bytes(a))) {
        throw new Error(`cell ${op}:${size}:${depth}: the copied bytes differ from the source`);
      }
      if (perTask) report(cell, tasks / elapsed, "tasks/s");
      else report(cell, (tasks * chunk) / elapsed, "B/s");
    } finally {
      for (const buf of [...src, ...dst]) buf.close();
    }
  }

  /** `depth` lanes, each looping over its own pairs (p, p+depth, ...) until `seconds` passed (0: one pass). */
  async #lanes(src: Buf[], dst: Buf[], depth: number, seconds: number): Promise<number> {
    const end = performance.now() + seconds * 1000;
    const pairs = src.length;
    let tasks = 0;
    const lane = async (first: number) => {
      let p = first;
      do {
        dst[p].resetData();
        await this.dma.memcpy(src[p], dst[p]);
        tasks++;
        p = (p + depth) % pairs;
      } while (seconds > 0 ? performance.now() < end : p !== first);
    };
    await Promise.all(Array.from({ length: depth }, (_, i) => lane(i)));
    return tasks;
  }

  /** Rounds of one memcpyBatch() over every pair until `seconds` passed (0: one round). */
  async #batches(src: Buf[], dst: Buf[], seconds: number): Promise<number> {
    const end = performance.now() + seconds * 1000;
    const pairs = src.map((s, i): [Buf, Buf] => [s, dst[i]]);
    let tasks = 0;
    do {
      await this.dma.memcpyBatch(pairs, { resetDestinations: true });
      tasks += pairs.length;
    } while (performance.now() < end);
    return tasks;
  }

  /** Per-task cost breakdown (benchmarks/task-cost.ts): one line per variant, op cost-<variant>, ns per task. */
  async costCell(cell: Cell, seconds: number): Promise<void> {
    using a = NativeMemory.alloc(cell.size * cell.depth);
    using b = NativeMemory.alloc(cell.size * cell.depth);
    using aMap = Mmap.create({ memory: a, permissions: Access.LOCAL_READ_WRITE, devices: [this.device] });
    using bMap = Mmap.create({ memory: b, permissions: Access.LOCAL_READ_WRITE, devices: [this.device] });
    const pairs = Array.from({ length: cell.depth }, (_, i): [Buf, Buf] => [
      this.inventory.bufByData(aMap, a.address + i * cell.size, cell.size),
      this.inventory.bufByAddr(bMap, b.address + i * cell.size, cell.size),
    ]);
    try {
      const cost = await measureTaskCost(this.device, this.pe, pairs, seconds / 5);
      for (const [variant, ns] of Object.entries(cost)) report({ ...cell, op: `cost-${variant}` }, ns, "ns");
    } finally {
      for (const [s, d] of pairs) s.close(), d.close();
    }
  }

  /** ns per idle doca_pe_progress: through the raw binding (the FFI floor) or ProgressEngine.progress(). */
  callCell(cell: Cell, seconds: number): void {
    if (cell.op === "call") {
      report(cell, measureCallOverhead(Math.max(100_000, Math.round(seconds * 20e6))).emptyProgressRaw, "ns");
      return;
    }
    const pe = this.pe;
    let n = 0;
    const t0 = performance.now();
    let t = 0;
    do {
      for (let i = 0; i < 4096; i++) pe.progress();
      n += 4096;
    } while ((t = performance.now() - t0) < seconds * 1000);
    report(cell, (t * 1e6) / n, "ns");
  }

  [Symbol.dispose](): void {
    this.#remote?.close();
    this.inventory.close();
    this.dma.close();
    this.pe.close();
    this.device.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [secondsText, ...cellTexts] = argv;
  const seconds = Number(secondsText);
  if (!(seconds >= 0) || cellTexts.length === 0) {
    console.error("usage: workload.ts SECONDS op:size[:depth]...  (local, read, write, rate, batch, call, call-api)");
    process.exit(2);
  }
  const cells = cellTexts.map(parseCell);
  using bench = new Bench();
  for (const cell of cells) {
    if (cell.op === "call" || cell.op === "call-api") bench.callCell(cell, seconds);
    else if (cell.op === "cost") await bench.costCell(cell, seconds);
    else if (["local", "read", "write", "rate", "batch"].includes(cell.op)) await bench.dmaCell(cell, seconds);
    else throw new Error(`unknown cell "${cell.op}"`);
  }
}

await main(process.argv.slice(2));
