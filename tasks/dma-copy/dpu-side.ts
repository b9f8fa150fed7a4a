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
import { InterruptedError, raceAbort } from "../common/interrupt.ts";
import { PeerFailedError } from "../wire/messenger.ts";
import { type DescriptorMsg, importDescriptor, receiveDescriptor } from "../steps/exchange-descriptor.ts";
import { dmaTransfer, type TransferEnd } from "../steps/dma-transfer.ts";
import { AtomicFile, keptNotice, checkTargetFolder, removedNotice, removeStaleTemporaries, unjudgedNotice } from "../transfer/atomic-file.ts";
import { refuseNonFileOutput } from "../transfer/output-name.ts";
import { receiveThroughWindow, sendThroughWindow } from "../transfer/window.ts";
import { dmaCopyWindow } from "./window-messages.ts";
import { FileReader, type LocalFile } from "../transfer/local-file.ts";
import {
  type DirectionMsg,
  encodeChecksum,
  encodeDirection,
  encodeExtParams,
  encodeStatus,
  MsgType,
  ProtocolError,
} from "../wire/protocol.ts";
import {
  sameBytes,
  type SessionContext,
  safeNumber,
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
    const stale = removeStaleTemporaries(dirname(options.file), options.file);
    for (const name of stale.removed) ctx.log.info(removedNotice(name));
    for (const name of stale.unknown) ctx.log.warn(unjudgedNotice(name));
    for (const { name, kind } of stale.kept) ctx.log.warn(keptNotice(name, kind));
    refuseNonFileOutput(options.file, options.file, "-f/--file", "dma-copy");
    checkTargetFolder(options.file, size, options.file, undefined, "-f/--file");
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
      using reader = new FileReader(options.file, size);
      reader.readExactly(memory.bytes, 0);
      reader.assertUnchanged();
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
  const win = await messenger.recv(MsgType.WINDOW, "the layout of the host's buffers");
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
  const bar = ctx.progress(size);
  // The window protocol (tasks/transfer/window.ts): this side runs every DMA, between its local slot and the host's
  // slot of the same number. Its local slots are not exported: only its own DMA fills them.
  const window = dmaCopyWindow(messenger, { peer: "host", slots: memory, slotCount, slotSize, size, onProgress: bar.update.bind(bar) });
  if (out === undefined) {
    using reader = new FileReader(options.file, size);
    await sendThroughWindow({
      ...window,
      reader,
      deliver: (c) => guardDma(ctx, move(localBufs[c.slot], remoteBufs[c.slot], c.length), c.offset),
    });
  } else {
    await receiveThroughWindow({
      ...window,
      file: out,
      peerWritable: false,
      fetch: (c) => guardDma(ctx, move(remoteBufs[c.slot], localBufs[c.slot], c.length), c.offset),
    });
  }
  bar.settle(out ? "every byte received; verifying it and writing it to disk" : "every byte sent; waiting for the host side to verify and commit the file");
  try {
    return await finishExtended(ctx, out, have, size, slotSize, slotCount, new Uint8Array(window.hash.digest()));
  } finally {
    bar.finish();
  }
}

/** The extended copy's end, once every byte moved: both checksums, then the receiver's commit and its final status. */
async function finishExtended(
  ctx: SessionContext,
  out: AtomicFile | undefined,
  have: boolean,
  size: number,
  slotSize: number,
  slotCount: number,
  digest: Uint8Array,
): Promise<TransferResult> {
  const { messenger } = ctx;
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
    // the host commits once it has our status: a stop now waits a moment for its answer (see recvFinal)
    const receipt = await messenger.recvFinal(MsgType.STATUS, "the host side to commit the file (its final status)");
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
    if (e instanceof InterruptedError) throw e;
    const what = `the DMA of the chunk at byte ${offset} ran`;
    // The host that stops says why before it revokes its memory: its reason, already queued, is the better report.
    const explained = await ctx.messenger.lostOrFailed(what, e);
    if (explained instanceof PeerFailedError) throw explained;
    const channel = ctx.messenger.channel;
    for (let i = 0; i < 20 && channel.connected !== false; i++) await new Promise((r) => setTimeout(r, 10));
    if (channel.connected === false) throw explained;
    throw new Error(`DMA of the chunk at byte ${offset} failed: ${(e as Error).message}`, { cause: e });
  }
}
