/**
 * The DPU half of DMA Copy (Comch server), built from the steps in NVIDIA's order: receive the host's export
 * descriptor and import it (steps/exchange-descriptor.ts), then DMA tasks polled through the progress engine
 * (steps/dma-transfer.ts). Classic mode answers exactly like NVIDIA's application (one DMA task, size ≤ one DMA
 * buffer); extended mode moves the file through the host's window of slots with several DMA tasks in flight
 * (docs/PROTOCOL.md). Whichever side receives has the last word: the DPU sends its final STATUS(true) only after
 * committing a received file, and when it sends, succeeds only once the host's final STATUS says it committed.
 */
import { dirname } from "node:path";
import { type Buf, BufInventory } from "../../ffi/doca/common/buf.ts";
import { Access } from "../../ffi/native/constants.ts";
import { Dma } from "../../ffi/doca/dma/dma.ts";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import { Mmap } from "../../ffi/doca/common/mmap.ts";
import { raceAbort } from "../common/interrupt.ts";
import { type DescriptorMsg, importDescriptor, receiveDescriptor } from "../steps/exchange-descriptor.ts";
import { dmaTransfer, type TransferEnd } from "../steps/dma-transfer.ts";
import { AtomicFile, checkTargetFolder, removeStaleTemporaries } from "../transfer/atomic-file.ts";
import { FileReader, type LocalFile } from "../transfer/local-file.ts";
import {
  type DirectionMsg,
  encodeChecksum,
  encodeChunk,
  encodeDirection,
  encodeExtParams,
  encodeStatus,
  MsgType,
  ProtocolError,
} from "../wire/protocol.ts";
import {
  FailureLatch,
  sameBytes,
  type SessionContext,
  safeNumber,
  sha256,
  toHex,
  type TransferResult,
} from "./session.ts";

/** Most slots a DPU serves (bounds its memory: slots × chunk size). */
export const MAX_SLOTS = 64;

/** An error the DPU reports to the host before giving up; its message is the reason sent along. */
export class RefusedError extends Error {
  override name = "RefusedError";
}

/** Checks the host's direction message, answers it, and runs the copy. */
export async function dpuTransfer(ctx: SessionContext, local: LocalFile, dir: DirectionMsg): Promise<TransferResult> {
  const { messenger, options, device } = ctx;
  if (local.have && dir.fileInHost) throw new RefusedError(`the file exists on both the host and the DPU (DPU: ${options.file})`);
  if (!local.have && !dir.fileInHost) throw new RefusedError(`the file exists on neither the host nor the DPU (DPU: ${options.file})`);
  const size = local.have ? local.size : safeNumber(dir.fileSize, "file size");
  const maxBuf = Dma.caps(device).maxBufSize;
  const extended = dir.docaTs && !options.classic;
  if (!extended && size > maxBuf) {
    const who = options.classic
      ? "classic mode (--classic on this DPU side)"
      : "the host is NVIDIA's doca_dma_copy, doca-ts with --classic, or a peer without the doca-ts extension; its protocol";
    throw new RefusedError(`${who} supports at most ${maxBuf} bytes (one DMA buffer); the file has ${size} bytes`);
  }
  // Create the target before agreeing to receive: a bad path or a full disk fails here, before the host exports.
  let out: AtomicFile | undefined;
  if (!local.have) {
    const stale = removeStaleTemporaries(dirname(options.file));
    for (const name of stale.removed) ctx.log.info(`removed ${name}, the temporary file of a dead run`);
    for (const name of stale.unknown) ctx.log.warn(`${name} looks like the temporary file of an earlier run; remove it if that run is gone`);
    checkTargetFolder(options.file, size);
    out = AtomicFile.create(options.file);
  }
  try {
    await messenger.send(encodeDirection({ fileInHost: !local.have, fileSize: local.have ? size : 0, docaTs: extended }));
    ctx.log.info(`${local.have ? "sending" : "receiving"} ${size} bytes, ${extended ? "doca-ts peer (chunked, verified)" : "classic single-buffer mode"}`);
    return extended ? await extendedDpu(ctx, out, size, maxBuf) : await classicDpu(ctx, out, size);
  } catch (e) {
    out?.abort();
    throw e;
  }
}

/** importDescriptor; a host that stopped (revoking its export) right after sending it is reported by its reason. */
async function importHostExport(ctx: SessionContext, received: DescriptorMsg, length: number): Promise<Mmap> {
  try {
    return importDescriptor(ctx.device, received, length);
  } catch (e) {
    throw (await ctx.messenger.failureOnTheWay()) ?? e;
  }
}

/** `out` is the file being received, or undefined when this side sends. */
async function classicDpu(ctx: SessionContext, out: AtomicFile | undefined, size: number): Promise<TransferResult> {
  const { device, messenger, options, pe } = ctx;
  const have = out === undefined;
  const received = await receiveDescriptor(messenger, "the host's export descriptor");
  const hostAddr = received.address;
  const bar = ctx.progress(size);
  using remote = await importHostExport(ctx, received, size);
  if (size > 0) {
    using memory = NativeMemory.alloc(size);
    using map = Mmap.create({
      memory,
      permissions: have ? Access.LOCAL_READ_ONLY : Access.LOCAL_READ_WRITE,
      devices: [device],
    });
    using inventory = new BufInventory(2);
    using dma = new Dma(device, pe, { maxTasks: 1 });
    const localEnd = { mmap: map, address: memory.address };
    const remoteEnd = { mmap: remote, address: hostAddr };
    const copy = (from: TransferEnd, to: TransferEnd) =>
      raceAbort(guardDma(ctx, dmaTransfer({ dma, pe, inventory, from, to, length: size }), 0), ctx.signal, "the DMA copy ran");
    if (have) {
      using reader = new FileReader(options.file);
      reader.readExactly(memory.bytes, 0);
      await copy(localEnd, remoteEnd);
    } else {
      await copy(remoteEnd, localEnd);
      out.writeAt(memory.bytes, 0);
    }
  }
  await out?.commit();
  // Classic has no receipt from the host: when the DPU sends, this status is its last word (docs/PROTOCOL.md).
  await sendFinalStatus(ctx);
  bar.update(size);
  bar.finish();
  return { role: have ? "send" : "receive", bytes: size, mode: "classic", chunks: size > 0 ? 1 : 0, chunkSize: size, slots: 1 };
}

async function extendedDpu(ctx: SessionContext, out: AtomicFile | undefined, size: number, maxBuf: number): Promise<TransferResult> {
  const { device, messenger, options, pe } = ctx;
  const have = out === undefined;
  const maxChunk = Math.min(maxBuf, options.chunkSize ?? Infinity);
  await messenger.send(encodeExtParams(MAX_SLOTS, maxChunk));
  const win = await messenger.recv(MsgType.WINDOW, "the host's window geometry");
  const slotSize = safeNumber(win.slotSize, "slot size");
  if (slotSize > maxChunk || win.slotCount > MAX_SLOTS) {
    throw new ProtocolError(`window of ${win.slotCount} × ${slotSize} bytes exceeds the limits sent (${MAX_SLOTS} × ${maxChunk})`);
  }
  const slotCount = win.slotCount;
  const received = await receiveDescriptor(messenger, "the host's export descriptor");
  const hostAddr = received.address;
  using remote = await importHostExport(ctx, received, slotCount * slotSize);

  using memory = NativeMemory.alloc(slotCount * slotSize);
  using map = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(2 * slotCount);
  using dma = new Dma(device, pe, { maxTasks: slotCount });
  // One pair of Bufs per slot for the whole copy (each DMA only sets their data range); a task's Promise settles
  // through the engine's own pump, so nothing here polls.
  const localBufs: Buf[] = [], remoteBufs: Buf[] = [];
  for (let slot = 0; slot < slotCount; slot++) {
    localBufs.push(inventory.bufByData(map, memory.address + slot * slotSize, slotSize));
    remoteBufs.push(inventory.bufByData(remote, hostAddr + slot * slotSize, slotSize));
  }
  const move = (from: Buf, to: Buf, length: number): Promise<void> => {
    from.setData(from.address, length);
    to.setData(to.address, 0);
    return dma.memcpy(from, to);
  };
  const lanes: Lanes = {
    view: (slot, length) => memory.bytes.subarray(slot * slotSize, slot * slotSize + length),
    fetch: (slot, length, offset) => guardDma(ctx, move(remoteBufs[slot], localBufs[slot], length), offset),
    deliver: (slot, length, offset) => guardDma(ctx, move(localBufs[slot], remoteBufs[slot], length), offset),
  };
  const hash = sha256();
  const bar = ctx.progress(size);
  if (out === undefined) {
    await dpuSend(ctx, size, slotCount, slotSize, lanes, hash, bar.update.bind(bar));
  } else {
    await dpuReceive(ctx, size, slotCount, slotSize, lanes, hash, out, bar.update.bind(bar));
  }
  bar.finish();
  const digest = new Uint8Array(hash.digest());
  const theirs = await messenger.recv(MsgType.CHECKSUM, "the host's checksum");
  await messenger.send(encodeChecksum(size, digest));
  if (theirs.totalBytes !== BigInt(size) || !sameBytes(theirs.digest, digest)) {
    throw new RefusedError(`SHA-256 mismatch: DPU ${toHex(digest)}, host ${toHex(theirs.digest)} (${theirs.totalBytes} bytes)`);
  }
  if (out) {
    await out.commit();
    await sendFinalStatus(ctx);
  } else {
    // We sent: the host commits its file, then answers with its own final STATUS. Only that is success.
    await messenger.send(encodeStatus(true));
    const receipt = await messenger.recv(MsgType.STATUS, "the host side to commit the file (its final status)");
    if (!receipt.isSuccess) throw messenger.peerFailure("the host side to commit the file");
  }
  return { role: have ? "send" : "receive", bytes: size, mode: "extended", chunks: Math.ceil(size / slotSize), chunkSize: slotSize, slots: slotCount, sha256: toHex(digest) };
}

/**
 * The receiver's last message, once the file is durable under its name (or, in classic mode, the DPU's status after
 * sending). If the host vanishes now, the file is whole: say so and succeed rather than report a failed copy.
 */
async function sendFinalStatus(ctx: SessionContext): Promise<void> {
  await ctx.messenger.sendBestEffort(encodeStatus(true), "the copy completed but the final status could not reach the host side", ctx.log);
}

/**
 * A failed DMA task usually means the host went away (its memory is gone): say so in the one peer-loss shape when
 * the connection confirms it within a moment; otherwise report the DMA failure itself.
 */
async function guardDma(ctx: SessionContext, copy: Promise<void>, offset: number): Promise<void> {
  try {
    await copy;
  } catch (e) {
    if (e instanceof Error && e.name === "InterruptedError") throw e;
    const what = `the DMA of the chunk at byte ${offset} ran`;
    // The host that stops says why before it revokes its memory: its reason, already queued, is the better report.
    const explained = await ctx.messenger.lostOrFailed(what, e);
    if (explained.name === "PeerFailedError") throw explained;
    const channel = ctx.messenger.channel;
    for (let i = 0; i < 20 && channel.connected !== false; i++) await new Promise((r) => setTimeout(r, 10));
    if (channel.connected === false) throw explained;
    throw new Error(`DMA of the chunk at byte ${offset} failed: ${(e as Error).message}`, { cause: e });
  }
}

/** The DPU's slots: its own memory, and one DMA each way between a local slot and the host's slot of that number. */
interface Lanes {
  view(slot: number, length: number): Uint8Array;
  /** host slot → local slot */
  fetch(slot: number, length: number, offset: number): Promise<void>;
  /** local slot → host slot */
  deliver(slot: number, length: number, offset: number): Promise<void>;
}

/**
 * DPU receives: for each announced slot, DMA it from the host into our slot now (several in flight), then — in
 * announcement order, so the file and hash stay sequential — write it out and hand the slot back.
 */
async function dpuReceive(
  ctx: SessionContext,
  size: number,
  slotCount: number,
  slotSize: number,
  lanes: Lanes,
  hash: ReturnType<typeof sha256>,
  out: AtomicFile,
  onProgress: (done: number) => void,
): Promise<void> {
  const { messenger } = ctx;
  const failure = new FailureLatch();
  let announced = 0;
  let written = 0;
  let inOrder: Promise<void> = Promise.resolve();
  while (announced < size) {
    const ready = await failure.race(messenger.recv(MsgType.CHUNK_READY, "the next chunk from the host"));
    const length = safeNumber(ready.length, "chunk length");
    const { slot } = ready;
    const offset = announced;
    if (slot >= slotCount || ready.offset !== BigInt(offset) || length === 0 || length > slotSize || offset + length > size) {
      throw new ProtocolError(`CHUNK_READY slot ${slot} offset ${ready.offset} length ${length} is out of order or out of range`);
    }
    announced += length;
    const copied = lanes.fetch(slot, length, offset);
    copied.catch(() => {}); // reported through the ordered chain below
    inOrder = inOrder.then(async () => {
      await copied;
      const view = lanes.view(slot, length);
      const stored = out.writeAtAsync(view, offset); // overlaps the write with hashing
      hash.update(view);
      await stored;
      await messenger.send(encodeChunk(MsgType.CHUNK_DONE, slot, offset, length));
      written += length;
      onProgress(written);
    });
    inOrder.catch((e) => failure.fail(e));
  }
  await inOrder;
}

/** DPU sends: read a chunk into a free slot, DMA it into the host's slot, announce it (in file order). */
async function dpuSend(
  ctx: SessionContext,
  size: number,
  slotCount: number,
  slotSize: number,
  lanes: Lanes,
  hash: ReturnType<typeof sha256>,
  onProgress: (done: number) => void,
): Promise<void> {
  const { messenger } = ctx;
  const failure = new FailureLatch();
  const free = Array.from({ length: slotCount }, (_, i) => i);
  const pending = new Map<number, { offset: number; length: number }>();
  using reader = new FileReader(ctx.options.file);
  let offset = 0;
  let acked = 0;
  let inOrder: Promise<void> = Promise.resolve();
  while (offset < size || pending.size > 0) {
    if (offset < size && free.length > 0) {
      const slot = free.shift()!;
      const length = Math.min(slotSize, size - offset);
      const at = offset;
      const view = lanes.view(slot, length);
      reader.readExactly(view, at);
      pending.set(slot, { offset: at, length });
      offset += length;
      const copied = lanes.deliver(slot, length, at);
      copied.catch(() => {});
      hash.update(view); // while the DMA moves it: the slot is only read until the host hands it back
      inOrder = inOrder.then(async () => {
        await copied;
        await messenger.send(encodeChunk(MsgType.CHUNK_READY, slot, at, length));
      });
      inOrder.catch((e) => failure.fail(e));
      continue;
    }
    const ack = await failure.race(messenger.recv(MsgType.CHUNK_DONE, "the host to store a chunk"));
    const expected = pending.get(ack.slot);
    if (!expected || BigInt(expected.offset) !== ack.offset || BigInt(expected.length) !== ack.length) {
      throw new ProtocolError(`CHUNK_DONE for slot ${ack.slot} offset ${ack.offset} does not match a chunk in flight`);
    }
    pending.delete(ack.slot);
    free.push(ack.slot);
    acked += expected.length;
    onProgress(acked);
  }
  await inOrder;
  if (failure.error) throw failure.error;
}
