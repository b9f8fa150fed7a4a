/**
 * The doca-ts side of the Comch rows: the cells of benchmarks/comch-driver.c (same command line, same protocol, same
 * JSON lines), written as a user of mod.ts would write them, run under Deno, Bun or Node:
 *
 *   comch-workload.ts serve NAME CELL...            DPU side (DOCA_SIM_SIDE=dpu)
 *   comch-workload.ts client NAME SECONDS CELL...   host side, prints {"op","size","depth","value","unit"} per cell
 *       ctrl:S:D  control path, ComchConnection.send() of S-byte messages from D lanes
 *       fast:S:D  fast path, ComchProducer.send() to the server's ComchConsumer, S-byte buffers, D lanes
 *
 * Per cell the server says "ready ID", the client sends sequence-stamped messages then a 1-byte end marker on the
 * same path, the server checks every message and answers "ack COUNT" (or "bad WHY"); rate = COUNT / (ack - ready).
 * Each path's calls sit in one small function per side (sendCtrl, sendFast, receiveCtrl, receiveFast); both sides
 * use the batch calls (sendBatch, recvBatch) a program after throughput would use.
 */
import process from "node:process";
import {
  type ComchConnection,
  ComchClient,
  ComchConsumer,
  ComchProducer,
  ComchServer,
  Device,
  listDevices,
  ProgressEngine,
} from "../mod.ts";

/** How long a peer may stay silent before this side gives up (a dead peer must not hang the bench). */
const PEER_TIMEOUT_MS = 10_000;
/** Receive buffers the consumer keeps posted (as benchmarks/comch-driver.c). */
const CONSUMER_BUFS = 128;

interface Cell {
  op: "ctrl" | "fast";
  size: number;
  depth: number;
}

function parseCell(text: string): Cell {
  const [op, size, depth] = text.split(":");
  const cell = { op: op as Cell["op"], size: Number(size), depth: Number(depth) };
  if ((op !== "ctrl" && op !== "fast") || !Number.isSafeInteger(cell.size) || cell.size < 8 || !(cell.depth >= 1 && cell.depth <= 1024)) {
    throw new Error(`bad cell "${text}" (ctrl:S:D or fast:S:D, S >= 8)`);
  }
  return cell;
}

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const END_MARKER = new Uint8Array(1);

/** Sequence number in front, its low byte at the end (a short or shifted message shows). */
function stamp(message: Uint8Array, view: DataView, seq: number): void {
  view.setUint32(0, seq, true);
  message[message.length - 1] = seq & 0xff;
}

/** Checks messages of one cell in arrival order; the verdict is what the server answers. */
class Tally {
  count = 0;
  #bad: string | undefined;
  constructor(readonly size: number) {}
  take(m: Uint8Array): void {
    if (this.#bad) return;
    // Read with index operations: a DataView per message costs more than the receive itself on Node.
    const seq = m.length >= 4 ? (m[0] | (m[1] << 8) | (m[2] << 16) | (m[3] << 24)) >>> 0 : -1;
    if (m.length !== this.size) this.#bad = "wrong length";
    else if (seq !== (this.count >>> 0)) this.#bad = "out of order";
    else if (m[m.length - 1] !== (seq & 0xff)) this.#bad = "wrong bytes";
    this.count++;
  }
  get verdict(): string {
    return this.#bad ? `bad ${this.#bad}` : `ack ${this.count}`;
  }
}

function openFirstDevice(): Device {
  const first = listDevices()[0];
  if (!first) throw new Error("no DOCA device");
  return Device.open(first.pciAddr);
}

// ------------------------------------------------------------------ server (DPU side)

// Receivers take what arrived in batches (recvBatch: one Promise per wake-up, messages in shared slabs), as a
// program after throughput would; every message is still checked.
async function receiveCtrl(connection: ComchConnection, cell: Cell): Promise<string> {
  const tally = new Tally(cell.size);
  for (;;) {
    for (const m of await connection.recvBatch({ timeoutMs: PEER_TIMEOUT_MS })) {
      if (m.length === 1) return tally.verdict;
      tally.take(m);
    }
  }
}

async function receiveFast(consumer: ComchConsumer, cell: Cell): Promise<string> {
  const tally = new Tally(cell.size);
  for (;;) {
    for (const m of await consumer.recvBatch({ timeoutMs: PEER_TIMEOUT_MS })) {
      if (m.bytes.length === 1) return tally.verdict;
      tally.take(m.bytes);
    }
  }
}

async function serve(name: string, cells: Cell[]): Promise<void> {
  using device = openFirstDevice();
  using pe = new ProgressEngine();
  const [repInfo] = device.listRepresentors();
  if (!repInfo) throw new Error("no representor (run with DOCA_SIM_SIDE=dpu)");
  using rep = device.openRepresentor(repInfo.pciAddr);
  await using server = ComchServer.start({ device, rep, name, pe });
  process.stdout.write("listening\n");
  const connection = await server.accept({ timeoutMs: 30_000 });
  const gone = new Promise<void>((resolve) => connection.onDisconnect(resolve));
  for (const cell of cells) {
    if (cell.op === "fast") {
      await using consumer = await ComchConsumer.create({ connection, device, pe, buffers: CONSUMER_BUFS, bufferSize: cell.size });
      await connection.send(encode(`ready ${consumer.id}`));
      await connection.send(encode(await receiveFast(consumer, cell)));
    } else {
      await connection.send(encode("ready 0"));
      await connection.send(encode(await receiveCtrl(connection, cell)));
    }
  }
  await withTimeout(gone, "the client to disconnect");
}

// ------------------------------------------------------------------ client (host side)

/** Lanes that each send a batch at a time (sendBatch: one Promise per batch), D messages in flight in all. */
const SEND_LANES = 2;

/** Sends stamped messages until `seconds` passed; returns how many were sent (all completed). */
async function lanes(cell: Cell, seconds: number, sendBatch: (messages: Uint8Array[]) => Promise<void>): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let seq = 0;
  const lanes = Math.min(SEND_LANES, cell.depth);
  const lane = async (i: number) => {
    // Each lane reuses its own arrays once its batch completed (sendBatch copies them at the call anyway).
    const batch = Array.from({ length: Math.floor(cell.depth / lanes) + (i < cell.depth % lanes ? 1 : 0) }, () => new Uint8Array(cell.size));
    const views = batch.map((m) => new DataView(m.buffer));
    while (performance.now() < end) {
      for (let k = 0; k < batch.length; k++) stamp(batch[k], views[k], seq++);
      await sendBatch(batch);
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, i) => lane(i)));
  return seq;
}

async function sendCtrl(connection: ComchConnection, cell: Cell, seconds: number): Promise<number> {
  const sent = await lanes(cell, seconds, (batch) => connection.sendBatch(batch));
  await connection.send(END_MARKER);
  return sent;
}

async function sendFast(producer: ComchProducer, consumerId: number, cell: Cell, seconds: number): Promise<number> {
  const sent = await lanes(cell, seconds, (batch) => producer.sendBatch(batch, consumerId));
  await producer.send(END_MARKER, consumerId);
  return sent;
}

async function client(name: string, seconds: number, cells: Cell[]): Promise<void> {
  using device = openFirstDevice();
  using pe = new ProgressEngine();
  const maxDepth = Math.max(...cells.map((c) => c.depth));
  await using client = await ComchClient.connect({ device, name, pe, timeoutMs: 30_000, sendTasks: maxDepth + 1 });
  const { connection } = client;
  for (const cell of cells) {
    if (cell.op === "ctrl" && cell.size > client.maxMsgSize) throw new Error(`ctrl:${cell.size}: larger than the max message size ${client.maxMsgSize}`);
    const ready = decode(await connection.recv({ timeoutMs: PEER_TIMEOUT_MS })).match(/^ready (\d+)$/);
    if (!ready) throw new Error("unexpected message from the server");
    // As the C driver: the producer is made before the clock starts, and closed after it stopped.
    await using producer = cell.op === "fast"
      ? await ComchProducer.create({ connection, device, pe, buffers: cell.depth + 1, bufferSize: cell.size })
      : undefined;
    const t0 = performance.now();
    const sent = producer ? await sendFast(producer, Number(ready[1]), cell, seconds) : await sendCtrl(connection, cell, seconds);
    const answer = decode(await connection.recv({ timeoutMs: PEER_TIMEOUT_MS }));
    const elapsed = (performance.now() - t0) / 1000;
    if (answer !== `ack ${sent}`) throw new Error(`${cell.op}:${cell.size}:${cell.depth}: sent ${sent}, the server answered "${answer}"`);
    process.stdout.write(JSON.stringify({ op: cell.op, size: cell.size, depth: cell.depth, value: sent / elapsed, unit: "msgs/s" }) + "\n");
  }
}

function withTimeout(p: Promise<void>, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), PEER_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function main(argv: string[]): Promise<void> {
  const [mode, name, ...rest] = argv;
  if (mode === "serve" && name && rest.length > 0) return serve(name, rest.map(parseCell));
  if (mode === "client" && name && rest.length > 1 && Number(rest[0]) >= 0) return client(name, Number(rest[0]), rest.slice(1).map(parseCell));
  console.error("usage: comch-workload.ts serve NAME CELL... | comch-workload.ts client NAME SECONDS CELL...  (CELL = ctrl:S:D | fast:S:D)");
  process.exit(2);
}

try {
  await main(process.argv.slice(2));
  process.exit(0); // a pending timer of a finished wait must not keep the process alive
} catch (e) {
  console.error(`comch workload: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
