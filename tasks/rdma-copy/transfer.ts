/**
 * rdma-copy's two ends over one Link (tasks/rdma/link.ts). The file moves through a bounded window of `slots`
 * chunks: in write mode the receiver exports its window (RDMA_WRITE) and the sender writes chunks into it; in read
 * mode the sender exports its window (RDMA_READ) and the receiver reads them out. Control messages (JSON over RDMA
 * send/receive, in order on the one connection):
 *
 *   S→R OFFER {v, size, chunk, slots, mode, window?}   R→S ACCEPT {window?}
 *   S→R CHUNK {slot, offset, length} (in file order)   R→S FREE {slot}   (the slot may be reused)
 *   S→R DONE {sha256}                                   R→S RECEIPT {sha256} after fsync + rename
 *   either way ABORT {reason}
 *
 * Nothing the peer says is trusted: sizes, slots and offsets are checked against what this side expects, the
 * window it exports is only as large as agreed, the remote window it imports must be that large, and the SHA-256
 * of the bytes is compared on both sides before the receiver commits and before the sender reports success. In write
 * mode the receiver reads each announced slot once, into a private copy, and hashes and commits that copy: the
 * sender can still write its window, so what was verified must be what is written. The window protocol itself is
 * tasks/transfer/window.ts, shared with dma-copy; this file says how chunks move and how the messages look.
 */
import { createHash } from "node:crypto";
import { Buffer } from "node:buffer";
import { Access } from "../../ffi/native/constants.ts";
import { type Buf, BufInventory } from "../../ffi/doca/common/buf.ts";
import { Mmap } from "../../ffi/doca/common/mmap.ts";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import type { Link, Message } from "../rdma/link.ts";
import { ProtocolError } from "../rdma/link.ts";
import { AtomicFile, checkTargetFolder } from "../transfer/atomic-file.ts";
import { refuseNonFileOutput } from "../transfer/output-name.ts";
import { FileReader } from "../transfer/local-file.ts";
import { peerValue } from "../common/peer-words.ts";
import type { ProgressBar } from "../transfer/progress.ts";
import { type Chunk, receiveThroughWindow, sendThroughWindow } from "../transfer/window.ts";

export type CopyMode = "write" | "read";

export const MAX_CHUNK = 64 * 1024 * 1024;
/** Half the receives a Link keeps posted (Channel.RECEIVES = 64): a window of CHUNKs plus DONE always finds one. */
export const MAX_SLOTS = 32;
const MAX_DESCRIPTOR = 16 * 1024;

export interface TransferResult {
  bytes: number;
  sha256: string;
  seconds: number;
  mode: CopyMode;
}

/** The local window: memory, a map (with the access the peer needs), one Buf per slot. */
class Window {
  readonly memory: NativeMemory;
  readonly mmap: Mmap;
  readonly inventory: BufInventory;
  readonly bufs: Buf[] = [];

  constructor(link: Link, readonly slots: number, readonly chunk: number, permissions: number) {
    this.memory = NativeMemory.alloc(slots * chunk);
    try {
      this.mmap = Mmap.create({ memory: this.memory, permissions: Access.LOCAL_READ_WRITE | permissions, devices: [link.rdma.device] });
      this.inventory = new BufInventory(slots);
      for (let k = 0; k < slots; k++) this.bufs.push(this.inventory.bufByAddr(this.mmap, this.address(k), chunk));
    } catch (e) {
      this.close();
      throw e;
    }
  }

  address(slot: number): number {
    return this.memory.address + slot * this.chunk;
  }

  view(slot: number, length: number): Uint8Array {
    return this.memory.bytes.subarray(slot * this.chunk, slot * this.chunk + length);
  }

  /** `size` bytes through this window's slots, as the window protocol (tasks/transfer/window.ts) takes them. */
  carrying(size: number) {
    return { size, slotCount: this.slots, slotSize: this.chunk, view: (slot: number, length: number) => this.view(slot, length) };
  }

  /** What the peer needs to reach this window. */
  describe(link: Link): { desc: string; address: number; length: number } {
    const desc = this.mmap.exportRdma(link.rdma.device);
    return { desc: Buffer.from(desc).toString("base64"), address: this.mmap.range.address, length: this.mmap.range.length };
  }

  close(): void {
    this.inventory?.close();
    this.mmap?.close();
    this.memory.close();
  }
}

/** The peer's window, imported from its description; one Buf per slot over it. */
class RemoteWindow {
  readonly mmap: Mmap;
  readonly inventory: BufInventory;
  readonly bufs: Buf[] = [];

  constructor(link: Link, described: unknown, slots: number, chunk: number) {
    const w = described as { desc?: unknown; address?: unknown; length?: unknown } | undefined;
    if (
      typeof w !== "object" || w === null || typeof w.desc !== "string" || w.desc.length > MAX_DESCRIPTOR ||
      !Number.isSafeInteger(w.address) || !Number.isSafeInteger(w.length) || (w.length as number) < slots * chunk
    ) {
      throw new ProtocolError(`the peer described its window wrongly (need ${slots} × ${chunk} bytes and an exported map)`);
    }
    this.mmap = Mmap.fromExport(new Uint8Array(Buffer.from(w.desc, "base64")), link.rdma.device);
    try {
      // The import says what the exporter registered: it must cover what we will address.
      if (this.mmap.range.address !== w.address || this.mmap.range.length < slots * chunk) {
        throw new ProtocolError("the peer's window description does not match its exported map");
      }
      this.inventory = new BufInventory(slots);
      for (let k = 0; k < slots; k++) this.bufs.push(this.inventory.bufByData(this.mmap, this.mmap.range.address + k * chunk, chunk));
    } catch (e) {
      this.close();
      throw e;
    }
  }

  close(): void {
    this.inventory?.close();
    this.mmap.close();
  }
}

function intIn(m: Message, key: string, min: number, max: number): number {
  const v = m[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new ProtocolError(`the peer's ${m.type} has ${key}=${peerValue(v)} (expected ${min}..${max})`);
  }
  return v;
}

function sha(m: Message): string {
  const v = m.sha256;
  if (typeof v !== "string" || !/^[0-9a-f]{64}$/.test(v)) throw new ProtocolError(`the peer's ${m.type} carries no valid sha256`);
  return v;
}

/** Sends `path` (size known) to the peer: resolves once the receiver confirmed the committed file's SHA-256. */
/**
 * One chunk between our slot and the peer's slot of the same number, by one RDMA task on the link: our slot's bytes
 * written into the peer's ("write"), or the peer's read into ours ("read").
 */
function moveChunk(link: Link, op: "write" | "read", local: Window, remote: RemoteWindow, c: Chunk): Promise<void> {
  const ours = local.bufs[c.slot], theirs = remote.bufs[c.slot];
  const [src, srcAddress, dst, dstAddress] = op === "write"
    ? [ours, local.address(c.slot), theirs, theirs.address]
    : [theirs, theirs.address, ours, local.address(c.slot)];
  src.setData(srcAddress, c.length);
  dst.setData(dstAddress, 0);
  return op === "write" ? link.connection.write(src, dst) : link.connection.read(src, dst);
}

/**
 * `defer` receives what to release once the link is closed: the windows stay registered until the context has
 * stopped, so no task still in flight (after a failure) can reach memory that is gone.
 */
export async function sendFile(
  link: Link,
  path: string,
  size: number,
  o: { mode: CopyMode; chunk: number; slots: number; progress?: ProgressBar; defer: (release: () => void) => void },
): Promise<TransferResult> {
  const started = performance.now();
  const { channel } = link;
  const chunk = Math.max(1, Math.min(o.chunk, size || 1));
  const slots = Math.max(1, Math.min(o.slots, Math.ceil(size / chunk) || 1));
  const local = new Window(link, slots, chunk, o.mode === "read" ? Access.RDMA_READ : 0);
  o.defer(() => local.close());
  using reader = new FileReader(path, size);
  {
    await channel.send({ type: "OFFER", v: 1, size, chunk, slots, mode: o.mode, ...(o.mode === "read" ? { window: local.describe(link) } : {}) }, "offering the file to the receiver");
    const accept = await channel.recv("waiting for the receiver to accept", "ACCEPT");
    const remote = o.mode === "write" ? new RemoteWindow(link, accept.window, slots, chunk) : undefined;
    if (remote) o.defer(() => remote.close());
    const hash = createHash("sha256");
    // The window protocol (tasks/transfer/window.ts): in write mode this side writes each chunk into the receiver's
    // slot of the same number before announcing it; in read mode the receiver reads it from ours.
    await sendThroughWindow({
      ...local.carrying(size),
      reader,
      hash,
      deliver: remote ? (c) => moveChunk(link, "write", local, remote, c) : undefined,
      announce: (c) => channel.send({ type: "CHUNK", slot: c.slot, offset: c.offset, length: c.length }, "handing a chunk to the receiver"),
      nextRelease: async () => ({ slot: intIn(await channel.recv("waiting for the receiver to hand a chunk back", "FREE"), "slot", 0, slots - 1) }),
      badRelease: (r) => new ProtocolError(`the peer freed slot ${r.slot}, which it does not hold`),
      onProgress: (done) => o.progress?.update(done),
    });
    o.progress?.settle("every byte sent; waiting for the receiver to verify and commit the file");
    const digest = hash.digest("hex");
    // the receiver commits once it has our checksum: a stop from here on waits a moment for the checksum to leave
    // and for the receipt (sendFinal, recvFinal)
    await channel.sendFinal({ type: "DONE", sha256: digest }, "sending the file's checksum to the receiver");
    const m = await channel.recvFinal("waiting for the receiver's receipt (fsync + rename)", "RECEIPT");
    if (sha(m) !== digest) throw new ProtocolError(`the receiver committed a file with SHA-256 ${sha(m)}, not ${digest}`);
    return { bytes: size, sha256: digest, seconds: (performance.now() - started) / 1000, mode: o.mode };
  }
}

/**
 * Receives the peer's file into `target`: written under a temporary name, fsync'd and renamed only when the
 * SHA-256 of what arrived equals the sender's; then the receipt goes out. On any failure nothing stays at `target`.
 */
export async function receiveFile(
  link: Link,
  target: string,
  o: {
    maxChunk?: number;
    progress?: (total: number) => ProgressBar | undefined;
    defer: (release: () => void) => void;
    /** A problem that does not fail the copy (the receipt lost after the commit). */
    warn?: (message: string) => void;
  },
): Promise<TransferResult> {
  const { channel } = link;
  const offer = await channel.recv("waiting for the sender's offer", "OFFER");
  const started = performance.now();
  if (offer.v !== 1) throw new ProtocolError(`the sender speaks rdma-copy protocol ${peerValue(offer.v, 20)}, not 1`);
  const size = intIn(offer, "size", 0, Number.MAX_SAFE_INTEGER);
  const chunk = intIn(offer, "chunk", 1, Math.min(MAX_CHUNK, o.maxChunk || MAX_CHUNK));
  const slots = intIn(offer, "slots", 1, MAX_SLOTS);
  const mode = offer.mode;
  if (mode !== "write" && mode !== "read") throw new ProtocolError(`the sender asked for mode ${JSON.stringify(mode)?.slice(0, 20)}`);
  refuseNonFileOutput(target, target, "--receive", "rdma-copy");
  checkTargetFolder(target, size, target, undefined, "--receive");
  const local = new Window(link, slots, chunk, mode === "write" ? Access.RDMA_WRITE : 0);
  o.defer(() => local.close());
  let file: AtomicFile | undefined;
  const progress = o.progress?.(size);
  try {
    const remote = mode === "read" ? new RemoteWindow(link, offer.window, slots, chunk) : undefined;
    if (remote) o.defer(() => remote.close());
    file = AtomicFile.create(target);
    await channel.send({ type: "ACCEPT", ...(mode === "write" ? { window: local.describe(link) } : {}) }, "accepting the sender's file");
    const hash = createHash("sha256");
    // The window protocol (tasks/transfer/window.ts). Write mode: the sender writes our slots, so each is read once
    // into a private copy (what is hashed is what is written). Read mode: we read each announced chunk from the
    // sender's window into our slot (several in flight); a read that fails ends the copy at once.
    await receiveThroughWindow({
      ...local.carrying(size),
      hash,
      file,
      peerWritable: mode === "write",
      async nextAnnouncement(expected) {
        const m = await channel.recv("waiting for the next chunk", "CHUNK");
        const slot = intIn(m, "slot", 0, slots - 1);
        const offset = intIn(m, "offset", expected, expected);
        const length = intIn(m, "length", Math.min(chunk, size - offset), Math.min(chunk, size - offset));
        return { slot, offset, length };
      },
      slotHeld: (c) => new ProtocolError(`the sender announced slot ${c.slot} again before it was freed`),
      fetch: remote ? (c) => moveChunk(link, "read", local, remote, c) : undefined,
      release: (c) => channel.send({ type: "FREE", slot: c.slot }, "handing a chunk back to the sender"),
      onProgress: (done) => progress?.update(done),
    });
    progress?.settle("every byte received; verifying it and writing it to disk");
    const done = await channel.recv("waiting for the sender's checksum", "DONE");
    const digest = hash.digest("hex");
    if (sha(done) !== digest) throw new ProtocolError(`SHA-256 mismatch: the sender hashed ${sha(done)}, the bytes that arrived hash to ${digest}`);
    await file.commit();
    // The file is whole under its name: a sender that stopped or left now misses its receipt, and is told so by
    // its own stop; the copy here succeeded (a warning says the receipt did not reach the sender).
    try {
      await channel.send({ type: "RECEIPT", sha256: digest }, "confirming to the sender that the file is committed");
    } catch (e) {
      o.warn?.(`the file is committed, but its receipt did not reach the sender: ${(e as Error).message}`);
    }
    return { bytes: size, sha256: digest, seconds: (performance.now() - started) / 1000, mode };
  } catch (e) {
    file?.abort();
    throw e;
  } finally {
    progress?.finish();
  }
}
