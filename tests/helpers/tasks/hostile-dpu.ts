/**
 * A doca-ts-speaking DPU that attacks the host (issue 9 §3), against a real `dma-copy --side host`:
 *   reason-spam   answers the direction, then sends a FAILURE_REASON every 100 ms for 60 s and never anything else
 *   escape        refuses with a FAILURE_REASON full of terminal escapes, CR and a forged "error:" line
 *   huge          announces an 8 GiB file and a 1 GiB max chunk; reports the WINDOW the host answers with
 *   repeat        answers the direction, then repeats its DIRECTION answer every 100 ms for 60 s
 *   rewrite       sends a file honestly (extended sequence, its SHA-256 in CHECKSUM), but after announcing one
 *                 chunk keeps DMA-writing the slot's first 4 KiB, foreign and honest bytes in turn, until the host
 *                 hands the slot back: a host that reads its window twice (to hash, to write) may commit what it
 *                 did not check
 * Prints one JSON line on stdout: {window?: {slotCount, slotSize}, sent, rewrites?, sha256?, final?}.
 *
 *   args: MODE
 */
import process from "node:process";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { Access, BufInventory, type ComchConnection, Dma, Mmap, NativeMemory } from "../../../mod.ts";
import { acceptHost } from "./scripted-peer.ts";
import {
  decodeMessage,
  encodeChecksum,
  encodeChunk,
  encodeDirection,
  encodeExtParams,
  encodeFailureReason,
  encodeStatus,
  type Msg,
  MsgType,
} from "../../../tasks/wire/protocol.ts";
import { importDescriptor } from "../../../tasks/steps/exchange-descriptor.ts";

const [mode] = process.argv.slice(2);
const { device, pe, conn } = await acceptHost("dma copy server", "hostile DPU listening");
const out: { window?: { slotCount: number; slotSize: string }; sent: number; error?: string; rewrites?: number; sha256?: string; final?: string } = {
  sent: 0,
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const dir = decodeMessage(await conn.recv({ timeoutMs: 30_000 }));
  if (dir.type !== MsgType.DIRECTION) throw new Error("expected DIRECTION");
  if (mode === "escape") {
    await conn.send(encodeFailureReason("\x1b[2J\x1b[31mEVIL\rerror: the copy succeeded\n\u202eforged"));
    await conn.send(encodeStatus(false));
  } else if (mode === "rewrite") {
    await rewriteAfterAnnouncing(conn);
  } else if (mode === "huge") {
    await conn.send(encodeDirection({ fileInHost: false, fileSize: 8n << 30n, docaTs: true }));
    await conn.send(encodeExtParams(1000, 1n << 30n));
    const win = decodeMessage(await conn.recv({ timeoutMs: 30_000 }));
    if (win.type === MsgType.WINDOW) out.window = { slotCount: win.slotCount, slotSize: String(win.slotSize) };
  } else {
    const answer = encodeDirection({ fileInHost: false, fileSize: 1000, docaTs: true });
    await conn.send(answer);
    const spam = mode === "reason-spam" ? encodeFailureReason("still thinking") : answer;
    const until = Date.now() + 60_000;
    while (Date.now() < until && conn.connected) {
      await conn.send(spam);
      out.sent++;
      await sleep(100);
    }
  }
} catch (e) {
  out.error = String(e);
}
process.stdout.write(JSON.stringify(out) + "\n");
await sleep(200);

process.exit(0);

/** The rewrite mode: CHUNKS chunks of CHUNK bytes through the host's window; the attacked chunk is ATTACKED. */
async function rewriteAfterAnnouncing(conn: ComchConnection): Promise<void> {
  const CHUNK = 1024 * 1024, CHUNKS = 4, ATTACKED = 1, HEAD = 4096;
  const honest = Uint8Array.from({ length: CHUNK * CHUNKS }, (_, i) => (i * 13 + 5) & 0xff);
  const next = async (what: string): Promise<Msg> => decodeMessage(await conn.recv({ timeoutMs: 30_000 }).catch((e) => Promise.reject(new Error(`${what}: ${e}`))));
  await conn.send(encodeDirection({ fileInHost: false, fileSize: honest.length, docaTs: true }));
  await conn.send(encodeExtParams(64, CHUNK));
  const win = await next("window");
  const desc = await next("descriptor");
  if (win.type !== MsgType.WINDOW || desc.type !== MsgType.EXPORT_DESCRIPTOR) throw new Error("expected WINDOW and EXPORT_DESCRIPTOR");
  if (Number(win.slotSize) !== CHUNK) throw new Error(`the host chose slots of ${win.slotSize} bytes, not ${CHUNK}`);
  using remote = importDescriptor(device, { address: Number(desc.hostAddr), descriptor: desc.descriptor }, win.slotCount * CHUNK);
  // [0, CHUNK): the chunk being sent; then HEAD foreign bytes
  using memory = NativeMemory.alloc(CHUNK + HEAD);
  memory.bytes.fill(0xee, CHUNK);
  using map = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(8);
  using dma = new Dma(device, pe, { maxTasks: 4 });
  const slot = 0; // one slot: the host hands it back before the next chunk
  const chunkBuf = inventory.bufByData(map, memory.address, CHUNK);
  const honestHead = inventory.bufByData(map, memory.address, HEAD);
  const foreignHead = inventory.bufByData(map, memory.address + CHUNK, HEAD);
  const slotBuf = inventory.bufByAddr(remote, Number(desc.hostAddr) + slot * CHUNK, CHUNK);
  const headBuf = inventory.bufByAddr(remote, Number(desc.hostAddr) + slot * CHUNK, HEAD);
  const into = (dst: typeof slotBuf) => (dst.setData(dst.address, 0), dst);
  let rewrites = 0;
  for (let k = 0; k < CHUNKS; k++) {
    memory.bytes.set(honest.subarray(k * CHUNK, (k + 1) * CHUNK));
    await dma.memcpy(chunkBuf, into(slotBuf));
    await conn.send(encodeChunk(MsgType.CHUNK_READY, slot, k * CHUNK, CHUNK));
    let handedBack = false;
    const done = next("chunk done").then((m) => {
      handedBack = true;
      if (m.type !== MsgType.CHUNK_DONE) throw new Error(`expected CHUNK_DONE, got ${m.type}`);
    });
    done.catch(() => void (handedBack = true));
    while (k === ATTACKED && !handedBack) {
      await dma.memcpy(rewrites % 2 === 0 ? foreignHead : honestHead, into(headBuf));
      rewrites++;
    }
    await done;
  }
  const theirs = await next("the host's checksum");
  if (theirs.type !== MsgType.CHECKSUM) throw new Error(`expected CHECKSUM, got ${theirs.type}`);
  const digest = new Uint8Array(createHash("sha256").update(honest).digest());
  await conn.send(encodeChecksum(honest.length, digest));
  await conn.send(encodeStatus(true));
  for (;;) {
    const m = await next("the host's final status");
    if (m.type === MsgType.STATUS) {
      out.final = m.isSuccess ? "success" : "failure";
      break;
    }
  }
  out.rewrites = rewrites;
  out.sha256 = Buffer.from(digest).toString("hex");
}
