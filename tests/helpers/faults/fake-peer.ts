/**
 * A scripted, hostile or broken DMA Copy peer for tests/fault-peer.test.ts, speaking the protocol of docs/PROTOCOL.md
 * through the FFI's ComchClient (role host, against a real `dma-copy --side dpu`) or ComchServer (role dpu, against
 * a real `dma-copy --side host`).
 *
 *   fake-peer.ts <host|dpu> <scenario> <size> <server-name>
 *
 * Prints JSON lines on stdout: {event:"exported", address, length} for every range it exports (the test checks the
 * DOCA_SIM_TRACE accesses against them), {event:"got", type, ...} for what it received, {event:"dma", ...} for DMA
 * attempts it made itself, {event:"done"} at a normal end. "kill-*" scenarios end with SIGKILL on itself (a crash,
 * no cleanup). The side process (DOCA_SIM_SIDE) comes from the environment.
 *
 * A failure of its own (bad arguments, no device, a server name it cannot listen on, no peer within its wait) is
 * not a scenario's outcome: it says so on stderr and exits 1, so a test cannot pass on a peer that never took part.
 * Once connected, what goes wrong is the scenario's doing (the real side hung up on it): an {event:"error"} line, exit 0.
 */
import process from "node:process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import {
  Access,
  BufInventory,
  ComchClient,
  type ComchConnection,
  ComchServer,
  Device,
  Dma,
  Mmap,
  NativeMemory,
  ProgressEngine,
} from "../../../mod.ts";
import {
  decodeMessage,
  encodeChecksum,
  encodeChunk,
  encodeDirection,
  encodeExportDescriptor,
  encodeExtParams,
  encodeStatus,
  encodeWindow,
  type Msg,
  MsgType,
} from "../../../tasks/wire/protocol.ts";

const [role, scenario, sizeText, serverName] = process.argv.slice(2);
const size = Number(sizeText);
if ((role !== "host" && role !== "dpu") || !scenario || !Number.isSafeInteger(size) || size < 0 || !serverName) {
  process.stderr.write(`fake-peer: usage: fake-peer.ts <host|dpu> <scenario> <size> <server-name>, got ${process.argv.slice(2).join(" ")}\n`);
  process.exit(2);
}
/** Set once the real side is connected: a failure before that is the helper's own. */
let connected = false;
const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";

const emit = (m: Record<string, unknown>) => process.stdout.write(JSON.stringify(m) + "\n");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function crash(): never {
  emit({ event: "crash", scenario });
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable");
}

const pe = new ProgressEngine();
const device = Device.open(role === "host" ? HOST_PCI : DPU_PCI);
const keep: { close(): void }[] = []; // kept alive until exit (an export dies with its map)
let conn: ComchConnection;

async function recv(timeoutMs = 10_000): Promise<Msg | { type: "raw"; bytes: number[] }> {
  const raw = await conn.recv({ timeoutMs });
  let m: Msg | { type: "raw"; bytes: number[] };
  try {
    m = decodeMessage(raw);
  } catch {
    m = { type: "raw", bytes: Array.from(raw) };
  }
  emit({
    event: "got",
    ...JSON.parse(
      JSON.stringify(
        m,
        (_k, v) => (typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? Array.from(v) : v),
      ),
    ),
  });
  return m;
}

/** Receives until a STATUS (or the connection ends); reports it. */
async function drainUntilStatus(timeoutMs = 10_000): Promise<void> {
  for (;;) {
    let m;
    try {
      m = await recv(timeoutMs);
    } catch (e) {
      emit({ event: "recv-ended", error: String(e) });
      return;
    }
    if (m.type === MsgType.STATUS) return;
  }
}

/** A started map over fresh native memory, exported for the peer; reports the range. */
function exportRange(
  length: number,
  permissions: number,
  fill?: number,
): { memory: NativeMemory; map: Mmap; desc: Uint8Array } {
  const memory = NativeMemory.alloc(length);
  if (fill !== undefined) memory.bytes.fill(fill);
  const map = Mmap.create({ memory, permissions, devices: [device] });
  const desc = map.exportPci(device);
  keep.push(map, memory);
  emit({ event: "exported", address: memory.address, length });
  return { memory, map, desc };
}

function withDeclaredLength(msg: Uint8Array, declared: bigint): Uint8Array {
  new DataView(msg.buffer, msg.byteOffset).setBigUint64(16, declared, false);
  return msg;
}

// ---------------------------------------------------------------- fake host (against a real DPU)

async function fakeHost(): Promise<void> {
  // Loaded and about to connect: a test starts the real DPU only now, so that a short --timeout on the DPU measures
  // the scenario, not how long this process took to start on a loaded machine (the client waits for the server).
  process.stderr.write("fake host connecting\n");
  const client = await ComchClient.connect({ device, name: serverName, pe, timeoutMs: 60_000 });
  conn = client.connection;
  connected = true;
  emit({ event: "connected" });
  const dirClassic = (fileInHost: boolean, s = size) =>
    encodeDirection({ fileInHost, fileSize: fileInHost ? s : 0, docaTs: false });
  const dirExt = (fileInHost: boolean) =>
    encodeDirection({ fileInHost, fileSize: fileInHost ? size : 0, docaTs: true });
  switch (scenario) {
    case "truncated":
      await conn.send(Uint8Array.of(1, 0, 0));
      return drainUntilStatus();
    case "wrong-length": {
      const m = new Uint8Array(20);
      m.set(dirClassic(true));
      await conn.send(m);
      return drainUntilStatus();
    }
    case "unknown-type": {
      const m = dirClassic(true);
      new DataView(m.buffer).setUint32(0, 0x77, true);
      await conn.send(m);
      return drainUntilStatus();
    }
    case "bad-bool": {
      const m = dirClassic(true);
      m[4] = 7;
      await conn.send(m);
      return drainUntilStatus();
    }
    case "size-overflow": // a file size no buffer can hold (2^64 - 1), in both modes
    case "size-overflow-ext": {
      const m = encodeDirection({
        fileInHost: true,
        fileSize: (1n << 64n) - 1n,
        docaTs: scenario === "size-overflow-ext",
      });
      await conn.send(m);
      return drainUntilStatus();
    }
    case "silent":
      await sleep(30_000);
      return;
    case "kill-after-connect":
      return crash();
    case "kill-after-direction":
      await conn.send(dirClassic(true));
      return crash();
  }

  // Scenarios that reach the export step (classic sequence unless named ext-*)
  const ext = scenario.startsWith("ext-");
  const hostSends = !scenario.startsWith("recv-");
  await conn.send(ext ? dirExt(hostSends) : dirClassic(hostSends));
  const answer = await recv();
  if (answer.type !== MsgType.DIRECTION) return drainUntilStatus();
  const fileSize = hostSends ? size : Number((answer as { fileSize: bigint }).fileSize);
  if (ext) {
    const params = await recv();
    if (params.type !== MsgType.EXT_PARAMS) return drainUntilStatus();
  }
  const perm = hostSends ? Access.PCI_READ_ONLY : Access.PCI_READ_WRITE;
  switch (scenario) {
    case "desc-len-bigger":
    case "desc-len-smaller":
    case "desc-len-huge": {
      const { memory, desc } = exportRange(size, perm, 0xab);
      const declared = scenario === "desc-len-bigger"
        ? BigInt(desc.length + 1000)
        : scenario === "desc-len-smaller"
        ? 10n
        : (1n << 64n) - 1n;
      await conn.send(withDeclaredLength(encodeExportDescriptor(memory.address, desc), declared));
      return drainUntilStatus();
    }
    case "forged-random": {
      const { memory, desc } = exportRange(size, perm, 0xab);
      await conn.send(encodeExportDescriptor(memory.address, new Uint8Array(randomBytes(desc.length))));
      return drainUntilStatus();
    }
    case "flipped-key": {
      const { memory, desc } = exportRange(size, perm, 0xab);
      const forged = desc.slice();
      forged[24] ^= 0x01; // the 128-bit key starts at byte 24 of the software device's descriptor
      await conn.send(encodeExportDescriptor(memory.address, forged));
      return drainUntilStatus();
    }
    case "grown-range": { // the descriptor claims a longer range than the export's
      const { memory, desc } = exportRange(size, perm, 0xab);
      const forged = desc.slice();
      const v = new DataView(forged.buffer);
      v.setBigUint64(48, v.getBigUint64(48, true) + 1_000_000n, true); // len field
      await conn.send(encodeExportDescriptor(memory.address, forged));
      return drainUntilStatus();
    }
    case "replayed": { // a descriptor whose export is over (the map was stopped and destroyed)
      const memory = NativeMemory.alloc(size);
      keep.push(memory);
      const map = Mmap.create({ memory, permissions: perm, devices: [device] });
      const desc = map.exportPci(device);
      map.close();
      emit({ event: "revoked", address: memory.address, length: size });
      await conn.send(encodeExportDescriptor(memory.address, desc));
      return drainUntilStatus();
    }
    case "small-range":
    case "recv-small-range": { // exports half of the announced file
      const half = Math.max(1, Math.floor(fileSize / 2));
      const { memory, desc } = exportRange(half, perm, 0xab);
      await conn.send(encodeExportDescriptor(memory.address, desc));
      return drainUntilStatus();
    }
    case "addr-below": { // host_addr before the exported range
      const { memory, desc } = exportRange(size, perm, 0xab);
      await conn.send(encodeExportDescriptor(memory.address - 4096, desc));
      return drainUntilStatus();
    }
    case "recv-read-only": { // host receives but exports read-only: the DPU's DMA write must be refused
      const { memory, desc } = exportRange(fileSize, Access.PCI_READ_ONLY, 0x5a);
      await conn.send(encodeExportDescriptor(memory.address, desc));
      await drainUntilStatus();
      emit({ event: "untouched", ok: memory.bytes.every((b) => b === 0x5a) });
      return;
    }
    case "kill-after-dma": { // classic: die once the DPU's DMA read shows in DOCA_SIM_TRACE, before its STATUS
      const { memory, desc } = exportRange(size, perm, 0xab);
      await conn.send(encodeExportDescriptor(memory.address, desc));
      const trace = process.env.DOCA_SIM_TRACE ?? "";
      for (let i = 0; i < 10_000; i++) {
        if (existsSync(trace) && readFileSync(trace, "utf8").includes("verdict=allowed")) break;
        await sleep(0.2);
      }
      return crash();
    }
    case "kill-after-descriptor": {
      const { memory, desc } = exportRange(size, perm, 0xab);
      await conn.send(encodeExportDescriptor(memory.address, desc));
      return crash();
    }
    case "ext-window-outside": { // WINDOW of 4 slots, export of 1
      await conn.send(encodeWindow(4, size));
      const { memory, desc } = exportRange(size, perm, 0xab);
      await conn.send(encodeExportDescriptor(memory.address, desc));
      return drainUntilStatus();
    }
  }
  if (!ext) throw new Error(`unknown scenario ${scenario}`);
  // Extended sequence with one slot holding the whole (small) file
  await conn.send(encodeWindow(1, size));
  const { memory, desc } = exportRange(size, perm, 0xab);
  await conn.send(encodeExportDescriptor(memory.address, desc));
  switch (scenario) {
    case "ext-bad-slot":
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 5, 0, size));
      return drainUntilStatus();
    case "ext-bad-offset":
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, 4096, size));
      return drainUntilStatus();
    case "ext-too-long":
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, 0, size + 1));
      return drainUntilStatus();
    case "ext-kill-during-dma":
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, 0, size));
      return crash();
    case "ext-silent-after-descriptor": // alive, connected, and never announces a chunk
      await sleep(30_000);
      return;
    case "ext-kill-after-checksum": { // an honest copy, then death once the DPU answered our checksum
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, 0, size));
      const done = await recv();
      if (done.type !== MsgType.CHUNK_DONE) return drainUntilStatus();
      await conn.send(
        encodeChecksum(size, new Uint8Array(createHash("sha256").update(memory.bytes.subarray(0, size)).digest())),
      );
      const theirs = await recv();
      if (theirs.type !== MsgType.CHECKSUM) return drainUntilStatus();
      return crash();
    }
    case "ext-kill-before-status":
    case "ext-bad-checksum": {
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, 0, size));
      const done = await recv();
      if (done.type !== MsgType.CHUNK_DONE) return drainUntilStatus();
      if (scenario === "ext-kill-before-status") return crash();
      await conn.send(encodeChecksum(size, new Uint8Array(32).fill(0x11)));
      return drainUntilStatus();
    }
  }
  throw new Error(`unknown scenario ${scenario}`);
}

// ---------------------------------------------------------------- fake DPU (against a real host)

async function fakeDpu(): Promise<void> {
  const rep = device.openRepresentor(HOST_PCI);
  const server = ComchServer.start({ device, rep, name: serverName, pe });
  keep.push({ close: () => void server.close() });
  process.stderr.write("fake DPU listening\n");
  conn = await server.accept({ timeoutMs: 20_000 });
  connected = true;
  emit({ event: "accepted" });
  switch (scenario) {
    case "dpu-kill-after-accept":
      return crash();
    case "dpu-silent":
      await recv();
      await sleep(30_000);
      return;
  }
  const dir = await recv();
  if (dir.type !== MsgType.DIRECTION) throw new Error("expected a direction message");
  const hostSends = dir.fileInHost;
  switch (scenario) {
    case "dpu-truncated":
      await conn.send(Uint8Array.of(1, 0));
      return drainUntilStatus(3000);
    case "dpu-unknown": {
      const m = new Uint8Array(16);
      new DataView(m.buffer).setUint32(0, 0x99, true);
      await conn.send(m);
      return drainUntilStatus(3000);
    }
    case "dpu-kill-after-direction":
      await conn.send(encodeDirection({ fileInHost: hostSends, fileSize: hostSends ? 0 : size }));
      return crash();
    case "dpu-size-overflow":
      await conn.send(encodeDirection({ fileInHost: false, fileSize: (1n << 64n) - 1n, docaTs: true }));
      return drainUntilStatus(3000);
    case "dpu-oob-dma": { // classic: import the host's export and try to touch bytes around it
      await conn.send(encodeDirection({ fileInHost: hostSends, fileSize: hostSends ? 0 : size }));
      const exp = await recv();
      if (exp.type !== MsgType.EXPORT_DESCRIPTOR) throw new Error("expected the export descriptor");
      const remote = Mmap.fromExport(exp.descriptor, device);
      const { address, length } = remote.range;
      const local = NativeMemory.alloc(8192);
      const map = Mmap.create({ memory: local, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
      const inv = new BufInventory(4);
      const dma = new Dma(device, pe);
      const attempts: [string, number, number][] = [
        ["after-end", address + length - 8, 64],
        ["before-start", address - 64, 64],
        ["far-away", address + length + 1_000_000, 16],
      ];
      /** One DMA of `len` bytes from `from`'s `fromAt` to `to`'s `toAt`: "allowed", or the DOCA error that refused it. */
      const attempt = async (from: Mmap, fromAt: number, to: Mmap, toAt: number, len: number): Promise<string> => {
        try {
          const src = inv.bufByData(from, fromAt, len);
          const dst = inv.bufByAddr(to, toAt, len);
          try {
            await dma.memcpy(src, dst);
            return "allowed";
          } finally {
            src.close();
            dst.close();
          }
        } catch (e) {
          return (e as { docaName?: string }).docaName ?? String(e);
        }
      };
      for (const [what, at, len] of attempts) {
        emit({ event: "dma", what, op: "read", outcome: await attempt(remote, at, map, local.address, len) });
      }
      // Write into a read-only export (host sends: PCI_READ_ONLY)
      emit({ event: "dma", what: "write-into-export", op: "write", outcome: await attempt(map, local.address, remote, address, 16) });
      dma.close();
      inv.close();
      map.close();
      local.close();
      remote.close();
      await conn.send(encodeStatus(false));
      await sleep(200);
      return;
    }
  }
  // Extended: the real host receives a file of `size` bytes from us
  await conn.send(encodeDirection({ fileInHost: false, fileSize: size, docaTs: true }));
  await conn.send(encodeExtParams(64, 2 * 1024 * 1024));
  const win = await recv();
  const exp = await recv();
  if (win.type !== MsgType.WINDOW || exp.type !== MsgType.EXPORT_DESCRIPTOR) {
    throw new Error("expected WINDOW and EXPORT_DESCRIPTOR");
  }
  const slotSize = Number(win.slotSize);
  switch (scenario) {
    case "dpu-ext-silent": // alive, connected, and never sends a chunk
      await sleep(30_000);
      return;
    case "dpu-ext-bad-slot":
      await conn.send(encodeChunk(MsgType.CHUNK_READY, win.slotCount + 3, 0, Math.min(size, slotSize)));
      return drainUntilStatus(3000);
    case "dpu-ext-bad-offset":
      await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, 12345, Math.min(size, slotSize)));
      return drainUntilStatus(3000);
    case "dpu-ext-bad-checksum":
    case "dpu-ext-kill-mid": {
      // Send the chunks honestly (no DMA: the host's slot keeps zeros), then lie about the checksum or die.
      let offset = 0;
      while (offset < size) {
        const length = Math.min(slotSize, size - offset);
        await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, offset, length));
        const done = await recv();
        if (done.type !== MsgType.CHUNK_DONE) return drainUntilStatus(3000);
        offset += length;
        if (scenario === "dpu-ext-kill-mid") return crash();
      }
      await recv(); // host's CHECKSUM
      await conn.send(encodeChecksum(size, new Uint8Array(32).fill(0x22)));
      await conn.send(encodeStatus(true));
      await sleep(500);
      return;
    }
  }
  throw new Error(`unknown scenario ${scenario}`);
}

try {
  if (role === "host") await fakeHost();
  else await fakeDpu();
  emit({ event: "done" });
} catch (e) {
  const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (!connected || /^unknown scenario/.test(error.replace(/^\w+: /, ""))) {
    // cannot listen, cannot connect, unknown scenario: fail loudly, never as a scenario that ran
    process.stderr.write(`fake-peer: ${role} ${scenario}: failed before the real side connected: ${error}\n`);
    process.exit(1);
  }
  emit({ event: "error", error });
}
// Leave without tidying (a misbehaving peer does not say goodbye either), but let queued sends flush.
await sleep(100);
process.exit(0);
