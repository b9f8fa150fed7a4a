/**
 * The host half of DMA Copy (Comch client), built from the steps in NVIDIA's order: export memory
 * (steps/export-mmap.ts), send its descriptor (steps/exchange-descriptor.ts); the DPU runs every DMA task. Classic
 * mode is NVIDIA's sequence with one buffer holding the whole file; extended mode exports a ring of slots once and
 * streams the file through it (docs/PROTOCOL.md). Memory is bounded by this side's own limits (its device's max DMA
 * buffer size, --slots), never by what the DPU announces.
 */
import { dirname } from "node:path";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import { exportMmap } from "../steps/export-mmap.ts";
import { sendDescriptor } from "../steps/exchange-descriptor.ts";
import { type DirectionMsg, encodeChecksum, encodeChunk, encodeStatus, encodeWindow, MsgType, ProtocolError } from "../wire/protocol.ts";
import { AtomicFile, checkFreeSpace, removeStaleTemporaries } from "../transfer/atomic-file.ts";
import { FileReader, type LocalFile } from "../transfer/local-file.ts";
import { PrivateCopies } from "../transfer/private-copy.ts";
import { sameBytes, type SessionContext, safeNumber, sha256, toHex, type TransferResult } from "./session.ts";

/** After our direction message: the DPU's answer decides the mode. */
export async function hostTransfer(ctx: SessionContext, local: LocalFile, answer: DirectionMsg): Promise<TransferResult> {
  if (!local.have && answer.fileInHost) {
    throw new ProtocolError("the DPU expects the file on the host, but the host does not have it");
  }
  if (local.have && !answer.fileInHost) throw new ProtocolError("the DPU claims to have the file too: it must be on one side only");
  const size = local.have ? local.size : safeNumber(answer.fileSize, "file size");
  const extended = answer.docaTs && !ctx.options.classic;
  const maxBuf = ctx.device.info.caps.dmaMaxBufSize;
  if (!local.have && !extended && size > maxBuf) {
    throw new ProtocolError(`the DPU announces ${size} bytes in classic mode, more than one DMA buffer here (${maxBuf} bytes)`);
  }
  if (!local.have) {
    const stale = removeStaleTemporaries(dirname(ctx.options.file));
    for (const name of stale.removed) ctx.log.info(`removed ${name}, the temporary file of a dead run`);
    for (const name of stale.unknown) ctx.log.warn(`${name} looks like the temporary file of an earlier run; remove it if that run is gone`);
    checkFreeSpace(dirname(ctx.options.file), size, ctx.options.file);
  }
  ctx.log.info(`${local.have ? "sending" : "receiving"} ${size} bytes, ${extended ? "doca-ts peer (chunked, verified)" : "classic single-buffer mode"}`);
  return extended ? await extendedHost(ctx, local.have, size) : await classicHost(ctx, local.have, size);
}

async function classicHost(ctx: SessionContext, have: boolean, size: number): Promise<TransferResult> {
  const { device, messenger, options } = ctx;
  const bar = ctx.progress(size);
  // DOCA memory ranges cannot be empty: a 0-byte file still exports one byte nobody copies.
  using memory = NativeMemory.alloc(Math.max(size, 1));
  if (have && size > 0) {
    using reader = new FileReader(options.file);
    reader.readExactly(memory.bytes.subarray(0, size), 0);
  }
  const out = have ? undefined : AtomicFile.create(options.file);
  try {
    using exported = exportMmap({ device, memory, writable: !have, length: Math.max(size, 1) });
    await sendDescriptor(messenger, exported);
    const status = await messenger.recv(MsgType.STATUS, "the DPU's final status");
    if (!status.isSuccess) throw messenger.peerFailure("the DMA copy");
    out?.writeAt(memory.bytes.subarray(0, size), 0);
    await out?.commit();
  } catch (e) {
    out?.abort();
    throw e;
  }
  bar.update(size);
  bar.finish();
  return { role: have ? "send" : "receive", bytes: size, mode: "classic", chunks: size > 0 ? 1 : 0, chunkSize: size, slots: 1 };
}

async function extendedHost(ctx: SessionContext, have: boolean, size: number): Promise<TransferResult> {
  const { device, messenger, options } = ctx;
  const params = await messenger.recv(MsgType.EXT_PARAMS, "the DPU's transfer limits");
  // The DPU's limits can only lower ours: memory is slots (≤ --slots) × slot size (≤ our max DMA buffer).
  const maxChunk = Math.min(safeNumber(params.maxChunk, "max chunk"), device.info.caps.dmaMaxBufSize);
  const slotSize = Math.max(1, Math.min(maxChunk, options.chunkSize ?? Infinity, size));
  const chunks = Math.ceil(size / slotSize);
  const slotCount = Math.max(1, Math.min(options.slots, params.maxSlots, chunks));
  using ring = NativeMemory.alloc(slotCount * slotSize);
  using exported = exportMmap({ device, memory: ring, writable: !have });
  await messenger.send(encodeWindow(slotCount, slotSize));
  await sendDescriptor(messenger, exported);
  ctx.log.debug(`ring: ${slotCount} slots of ${slotSize} bytes at 0x${ring.address.toString(16)}`);

  const hash = sha256();
  const bar = ctx.progress(size);
  const slotView = (slot: number, length: number) => ring.bytes.subarray(slot * slotSize, slot * slotSize + length);
  let out: AtomicFile | undefined;
  try {
    if (have) {
      await sendThroughWindow(ctx, size, slotCount, slotSize, slotView, hash, bar.update.bind(bar));
    } else {
      out = AtomicFile.create(options.file);
      await receiveThroughWindow(ctx, size, slotCount, slotSize, slotView, hash, out, bar.update.bind(bar));
    }
    bar.finish();
    const digest = new Uint8Array(hash.digest());
    await messenger.send(encodeChecksum(size, digest));
    const theirs = await messenger.recv(MsgType.CHECKSUM, "the DPU's checksum");
    const status = await messenger.recv(MsgType.STATUS, "the DPU's final status");
    if (!status.isSuccess) throw messenger.peerFailure("the final status");
    if (theirs.totalBytes !== BigInt(size) || !sameBytes(theirs.digest, digest)) {
      throw new Error(`SHA-256 mismatch: host ${toHex(digest)}, DPU ${toHex(theirs.digest)} (${theirs.totalBytes} bytes)`);
    }
    if (out) {
      // The receiver has the last word: the DPU reports success only once it hears the file is durable here.
      await out.commit();
      await messenger.sendBestEffort(encodeStatus(true), "the copy completed but the host's final status could not reach the DPU side", ctx.log);
    }
    return { role: have ? "send" : "receive", bytes: size, mode: "extended", chunks, chunkSize: slotSize, slots: slotCount, sha256: toHex(digest) };
  } catch (e) {
    out?.abort();
    throw e;
  }
}

type SlotView = (slot: number, length: number) => Uint8Array;

/** Host sends: fill a free slot from the file, announce it, reuse it once the DPU says it has copied it. */
async function sendThroughWindow(
  ctx: SessionContext,
  size: number,
  slotCount: number,
  slotSize: number,
  slotView: SlotView,
  hash: ReturnType<typeof sha256>,
  onProgress: (done: number) => void,
): Promise<void> {
  const { messenger } = ctx;
  const free = Array.from({ length: slotCount }, (_, i) => i);
  const pending = new Map<number, { offset: number; length: number }>();
  using reader = new FileReader(ctx.options.file);
  let offset = 0;
  let done = 0;
  while (offset < size || pending.size > 0) {
    if (offset < size && free.length > 0) {
      const slot = free.shift()!;
      const length = Math.min(slotSize, size - offset);
      const view = slotView(slot, length);
      reader.readExactly(view, offset);
      pending.set(slot, { offset, length });
      const announced = messenger.send(encodeChunk(MsgType.CHUNK_READY, slot, offset, length));
      hash.update(view); // while the DPU fetches it: the slot is only read until its CHUNK_DONE
      await announced;
      offset += length;
      continue;
    }
    const ack = await messenger.recv(MsgType.CHUNK_DONE, "the DPU to finish a chunk");
    const expected = pending.get(ack.slot);
    if (!expected || BigInt(expected.offset) !== ack.offset || BigInt(expected.length) !== ack.length) {
      throw new ProtocolError(`CHUNK_DONE for slot ${ack.slot} offset ${ack.offset} does not match a chunk in flight`);
    }
    pending.delete(ack.slot);
    free.push(ack.slot);
    done += expected.length;
    onProgress(done);
  }
}

/** Host receives: the DPU DMA-writes a slot and announces it; copy it out, hand the slot back, write the copy. */
async function receiveThroughWindow(
  ctx: SessionContext,
  size: number,
  slotCount: number,
  slotSize: number,
  slotView: SlotView,
  hash: ReturnType<typeof sha256>,
  out: AtomicFile,
  onProgress: (done: number) => void,
): Promise<void> {
  const { messenger } = ctx;
  // The DPU can DMA into this window at any time: each announced slot is read once, into a private copy, and that
  // copy is what is hashed and written (tasks/transfer/private-copy.ts). The slot goes back to the DPU right after.
  const copies = new PrivateCopies(slotSize);
  let received = 0;
  try {
    while (received < size) {
      const ready = await messenger.recv(MsgType.CHUNK_READY, "the next chunk from the DPU");
      const length = safeNumber(ready.length, "chunk length");
      if (ready.slot >= slotCount || ready.offset !== BigInt(received) || length === 0 || length > slotSize || received + length > size) {
        throw new ProtocolError(`CHUNK_READY slot ${ready.slot} offset ${ready.offset} length ${length} is out of order or out of range`);
      }
      const mine = await copies.copy(slotView(ready.slot, length));
      await messenger.send(encodeChunk(MsgType.CHUNK_DONE, ready.slot, received, length));
      const written = out.writeAtAsync(mine, received); // overlaps the write with hashing
      hash.update(mine);
      copies.hold(written);
      received += length;
      onProgress(received);
    }
    await copies.drain();
  } finally {
    await copies.settled(); // no write from a copy may reach the file after a failure aborted it
  }
}
