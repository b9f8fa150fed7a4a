/**
 * The DPU side of cross-process tests, run by spawnRuntime with DOCA_SIM_SIDE=dpu under the caller's runtime.
 * Reads one JSON request per stdin line, answers one JSON line on stdout; exits on EOF or {op:"exit"}.
 *
 * Requests: open {pci} · import {descriptor: base64} · read {offset, length} (DMA remote→local, returns base64)
 * · write {offset, data: base64} (DMA local→remote) · dropImport · serve {name, repPci} (Comch echo server:
 * every message comes back prefixed with "echo:"; with greeting, that text is sent first, at accept) · accepted (waits for the first client)
 * · disconnectBusy {count} (sends count messages to the client and disconnects it without waiting for them)
 * · stream {length, depth} (writes length bytes of 0xee at the import's start again and again, depth in flight; answers
 * once the first landed) · revoked (writes submitted from now on are counted as "after") · streamStop (answers the
 * counts of writes after: succeeded and failed) · hoard {name, repPci, maxUnreadBytes} (a server that echoes its first
 * client and never reads any other) · hoardStatus (unread bytes, live connections, RSS) · acceptNext (accepts the next client: is it connected?) · exit.
 */
import process from "node:process";
import { Buffer } from "node:buffer";
import { pattern } from "./sim-env.ts";
import { reply, serveJsonRequests } from "./json-requests.ts";
import {
  Access,
  BufInventory,
  type ComchConnection,
  ComchConsumer,
  ComchServer,
  Device,
  Dma,
  Mmap,
  NativeMemory,
  ProgressEngine,
} from "../../mod.ts";

let device: Device | undefined;
let pe: ProgressEngine | undefined;
let remote: Mmap | undefined;
let dma: Dma | undefined;
let server: ComchServer | undefined;
let connection: ComchConnection | undefined;
let consumer: ComchConsumer | undefined;

/** A background stream of DMA writes into the import (the destroy-barrier test of fault-pages-api) */
interface Stream {
  stop: boolean;
  after: boolean;
  okAfter: number;
  failedAfter: number;
  done?: Promise<void>;
}
let stream: Stream | undefined;

async function streamWrites(s: Stream, length: number, depth: number, started: () => void): Promise<void> {
  if (!device || !remote || !pe) throw new Error("open and import first");
  const d = (dma ??= new Dma(device, pe));
  const target = remote;
  using local = NativeMemory.alloc(length);
  local.bytes.fill(0xee);
  using map = Mmap.create({ memory: local, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inv = new BufInventory(depth * 2);
  const worker = async () => {
    while (!s.stop) {
      const after = s.after;
      using src = inv.bufByData(map, local.address, length);
      using dst = inv.bufByAddr(target, target.range.address, length);
      try {
        await d.memcpy(src, dst);
        if (after) s.okAfter++;
      } catch {
        if (after) s.failedAfter++;
      }
      started();
    }
  };
  await Promise.all(Array.from({ length: depth }, worker));
}

async function copy(direction: "read" | "write", offset: number, length: number, data?: Uint8Array): Promise<Uint8Array> {
  if (!device || !remote || !pe) throw new Error("open and import first");
  dma ??= new Dma(device, pe);
  using local = NativeMemory.alloc(length);
  if (data) local.bytes.set(data);
  using map = Mmap.create({ memory: local, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inv = new BufInventory(2);
  const remoteAddress = remote.range.address + offset;
  if (direction === "read") {
    await dma.memcpy(inv.bufByData(remote, remoteAddress, length), inv.bufByAddr(map, local.address, length));
  } else {
    await dma.memcpy(inv.bufByData(map, local.address, length), inv.bufByAddr(remote, remoteAddress, length));
  }
  return local.bytes.slice();
}

function serve(name: string, repPci: string, greeting?: string): void {
  if (!device || !pe) throw new Error("open first");
  const rep = device.openRepresentor(repPci);
  server = ComchServer.start({ device, rep, name, pe });
  void (async () => {
    const conn = await server!.accept();
    connection = conn;
    // sent at once: it may reach the client in the same progress call as the end of its handshake
    if (greeting !== undefined) await conn.send(new TextEncoder().encode(greeting));
    reply({ event: "accepted" });
    conn.onDisconnect(() => reply({ event: "disconnected" }));
    for await (const msg of conn.messages()) {
      const text = new TextDecoder().decode(msg);
      await conn.send(new TextEncoder().encode(`echo:${text}`));
    }
  })().catch((e) => reply({ event: "error", error: String(e) }));
}

/** A server that serves its first client and leaves every other unread (the unread bound's test). */
function hoard(name: string, repPci: string, maxUnreadBytes: number): void {
  if (!device || !pe) throw new Error("open first");
  const rep = device.openRepresentor(repPci);
  server = ComchServer.start({ device, rep, name, pe, maxUnreadBytes });
  void (async () => {
    const served = await server!.accept();
    for await (const msg of served.messages()) await served.send(msg);
  })().catch((e) => reply({ event: "error", error: String(e) }));
}

async function handle(req: Record<string, unknown>): Promise<unknown> {
  switch (req.op) {
    case "open":
      device = Device.open(String(req.pci));
      pe = new ProgressEngine();
      return { ok: true, pci: device.info.pciAddr, reps: device.listRepresentors() };
    case "import":
      remote = Mmap.fromExport(Buffer.from(String(req.descriptor), "base64"), device!);
      return { ok: true, range: remote.range };
    case "read": {
      const bytes = await copy("read", Number(req.offset), Number(req.length));
      return { ok: true, data: Buffer.from(bytes).toString("base64") };
    }
    case "write": {
      const data = new Uint8Array(Buffer.from(String(req.data), "base64"));
      await copy("write", Number(req.offset), data.length, data);
      return { ok: true };
    }
    case "dropImport":
      dma?.close();
      dma = undefined;
      remote?.close();
      remote = undefined;
      return { ok: true };
    case "serve":
      serve(String(req.name), String(req.repPci), req.greeting === undefined ? undefined : String(req.greeting));
      return { ok: true };
    case "hoard":
      hoard(String(req.name), String(req.repPci), Number(req.maxUnreadBytes));
      return { ok: true };
    case "hoardStatus":
      if (!server) throw new Error("hoard first");
      return { ok: true, unreadBytes: server.unreadBytes, connections: server.connections.length, rss: process.memoryUsage().rss };
    case "acceptNext": {
      if (!server) throw new Error("hoard first");
      const c = await server.accept({ timeoutMs: 10_000 });
      return { ok: true, connected: c.connected };
    }
    case "consume": {
      if (!connection || !device || !pe) throw new Error("no client connected yet");
      consumer = await ComchConsumer.create({ connection, device, pe });
      const c = consumer;
      void (async () => {
        for (;;) {
          const m = await c.recv();
          reply({ event: "fast", consumer: c.id, data: Buffer.from(m.bytes).toString("base64"), imm: Buffer.from(m.imm).toString("base64") });
        }
      })().catch(() => {});
      return { ok: true, id: consumer.id };
    }
    case "consumeBatches": {
      // A consumer read with recvBatch: one line per batch, with whether its messages share one ArrayBuffer.
      if (!connection || !device || !pe) throw new Error("no client connected yet");
      consumer = await ComchConsumer.create({ connection, device, pe, buffers: 64 });
      const c = consumer;
      void (async () => {
        for (;;) {
          const batch = await c.recvBatch({ max: Number(req.max ?? 1000) });
          reply({
            event: "fastBatch",
            shared: batch.length > 1 && batch.every((m) => m.bytes.buffer === batch[0].bytes.buffer),
            messages: batch.map((m) => ({ data: Buffer.from(m.bytes).toString("base64"), imm: Buffer.from(m.imm).toString("base64") })),
          });
        }
      })().catch(() => {});
      return { ok: true, id: consumer.id };
    }
    case "consumeIdle": {
      // A consumer nobody reads yet (readQueued takes what it holds, later).
      if (!connection || !device || !pe) throw new Error("no client connected yet");
      consumer = await ComchConsumer.create({ connection, device, pe, buffers: 32 });
      return { ok: true, id: consumer.id };
    }
    case "consumerQueued":
      // How many messages the idle consumer holds (its printable summary says).
      if (!consumer) throw new Error("consumeIdle first");
      return { ok: true, queued: Number(/queued=(\d+)/.exec(String(consumer))?.[1] ?? -1) };
    case "readQueued": {
      // Everything the consumer queued, even once it is closed; stops at the first rejection.
      if (!consumer) throw new Error("consumeIdle first");
      const got: string[] = [];
      let end = "";
      try {
        for (;;) for (const m of await consumer.recvBatch({ timeoutMs: 300 })) got.push(Buffer.from(m.bytes).toString("base64"));
      } catch (e) {
        end = e instanceof Error ? e.message : String(e);
      }
      return { ok: true, messages: got, end, closed: consumer.closed };
    }
    case "sendMany": {
      // `count` messages of `size` bytes to the client, all in flight at once: message i is pattern(size, i).
      if (!connection) throw new Error("no client connected yet");
      // wait: false answers at once, the sends still in flight (they complete as the peer takes them in).
      const size = Number(req.size);
      const sends = Promise.all(Array.from({ length: Number(req.count) }, (_, i) => connection!.send(pattern(size, i))));
      if (req.wait === false) sends.catch((e) => reply({ event: "error", error: String(e) }));
      else await sends;
      return { ok: true };
    }
    case "disconnectBusy": {
      // The sends are still in flight when disconnect() runs: DOCA may answer DOCA_ERROR_AGAIN ("call again
      // later"; the software device does whenever sends are in flight), which the wrapper must retry, not throw.
      if (!server || !connection) throw new Error("no client connected yet");
      const sends = Array.from({ length: Number(req.count) }, (_, i) => connection!.send(new TextEncoder().encode(`busy ${i}`)));
      await server.disconnect(connection);
      const settled = await Promise.allSettled(sends);
      return { ok: true, connected: connection.connected, sent: settled.filter((r) => r.status === "fulfilled").length };
    }
    case "stream": {
      const s: Stream = { stop: false, after: false, okAfter: 0, failedAfter: 0 };
      stream = s;
      let first!: () => void;
      const landed = new Promise<void>((resolve) => (first = resolve));
      s.done = streamWrites(s, Number(req.length), Number(req.depth), first);
      await Promise.race([landed, s.done]);
      return { ok: true };
    }
    case "revoked":
      if (!stream) throw new Error("no stream");
      stream.after = true;
      return { ok: true };
    case "streamStop": {
      if (!stream) throw new Error("no stream");
      stream.stop = true;
      await stream.done;
      return { ok: true, okAfter: stream.okAfter, failedAfter: stream.failedAfter };
    }
    case "exit":
      await server?.close();
      device?.close();
      pe?.close();
      process.exit(0);
  }
  throw new Error(`unknown op ${String(req.op)}`);
}

serveJsonRequests(handle, async () => {
  await consumer?.close().catch(() => {});
  await server?.close().catch(() => {});
  dma?.close();
  remote?.close();
  device?.close();
  pe?.close();
});
