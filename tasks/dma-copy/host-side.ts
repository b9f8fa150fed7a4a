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
import { type DirectionMsg, encodeChecksum, encodeStatus, encodeWindow, MsgType, ProtocolError } from "../wire/protocol.ts";
import { AtomicFile, keptNotice, checkFreeSpace, removedNotice, removeStaleTemporaries, unjudgedNotice } from "../transfer/atomic-file.ts";
import { FileReader, type LocalFile } from "../transfer/local-file.ts";
import { receiveThroughWindow, sendThroughWindow } from "../transfer/window.ts";
import { dmaCopyWindow } from "./window-messages.ts";
import { sameBytes, type SessionContext, safeNumber, toHex, type TransferResult } from "./session.ts";

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
    const stale = removeStaleTemporaries(dirname(ctx.options.file), ctx.options.file);
    for (const name of stale.removed) ctx.log.info(removedNotice(name));
    for (const name of stale.unknown) ctx.log.warn(unjudgedNotice(name));
    for (const { name, kind } of stale.kept) ctx.log.warn(keptNotice(name, kind));
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
    using reader = new FileReader(options.file, size);
    reader.readExactly(memory.bytes.subarray(0, size), 0);
    reader.assertUnchanged();
  }
  const out = have ? undefined : AtomicFile.create(options.file);
  try {
    using exported = exportMmap({ device, memory, writable: !have, length: Math.max(size, 1) });
    await sendDescriptor(messenger, exported);
    // Sending, the DPU commits and then answers: a stop now waits a moment for that answer (a copy that completed
    // is reported as completed); receiving, nothing is committed here yet
    const status = have ? await messenger.recvFinal(MsgType.STATUS, "the DPU's final status") : await messenger.recv(MsgType.STATUS, "the DPU's final status");
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

  const bar = ctx.progress(size);
  // The window protocol (tasks/transfer/window.ts): the DPU runs every DMA, so this side only reads the file into a
  // slot and announces it (sending), or takes each slot the DPU filled (receiving: the DPU can write the window,
  // so each slot is read once into a private copy).
  const window = dmaCopyWindow(messenger, { peer: "DPU", slots: ring, slotCount, slotSize, size, onProgress: bar.update.bind(bar) });
  let out: AtomicFile | undefined;
  try {
    if (have) {
      using reader = new FileReader(options.file, size);
      await sendThroughWindow({ ...window, reader });
    } else {
      out = AtomicFile.create(options.file);
      await receiveThroughWindow({ ...window, file: out, peerWritable: true });
    }
    bar.settle(have ? "every byte sent; waiting for the DPU side to verify and commit the file" : "every byte received; verifying it and writing it to disk");
    const digest = new Uint8Array(window.hash.digest());
    await messenger.send(encodeChecksum(size, digest));
    // Sending, the DPU commits once it has both checksums: a stop from here on waits a moment for its final status
    const theirs = have ? await messenger.recvFinal(MsgType.CHECKSUM, "the DPU's checksum") : await messenger.recv(MsgType.CHECKSUM, "the DPU's checksum");
    const status = have ? await messenger.recvFinal(MsgType.STATUS, "the DPU's final status") : await messenger.recv(MsgType.STATUS, "the DPU's final status");
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
  } finally {
    bar.finish();
  }
}
