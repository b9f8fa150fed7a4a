/**
 * dma-copy's messages for the window protocol (tasks/transfer/window.ts): CHUNK_READY announces a chunk in a slot,
 * CHUNK_DONE hands the slot back (docs/PROTOCOL.md, extended sequence step 4). Every field the peer sends is checked
 * here against what must come next.
 */
import type { Messenger } from "../wire/messenger.ts";
import { encodeChunk, MsgType, ProtocolError, safeNumber } from "../wire/protocol.ts";
import type { Chunk } from "../transfer/window.ts";
import { sha256 } from "./session.ts";

/**
 * What both sides give the window protocol: their slots (`slots`' bytes, slot after slot), a fresh SHA-256 of the
 * file (read back from `hash` once the window is done), the progress bar and the chunk messages with `peer`.
 */
export function dmaCopyWindow(
  messenger: Messenger,
  o: {
    peer: "host" | "DPU";
    slots: { readonly bytes: Uint8Array };
    slotCount: number;
    slotSize: number;
    size: number;
    onProgress: (done: number) => void;
  },
) {
  const { slots, slotCount, slotSize, size } = o;
  return {
    size,
    slotCount,
    slotSize,
    view: (slot: number, length: number) => slots.bytes.subarray(slot * slotSize, slot * slotSize + length),
    hash: sha256(),
    onProgress: o.onProgress,
    ...chunkMessages(messenger, { peer: o.peer, slotCount, slotSize, size }),
  };
}

/** A 64-bit field as a number, or -1 when it cannot be one (it then matches no chunk). */
const asNumber = (v: bigint) => (v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : -1);

function chunkMessages(
  messenger: Messenger,
  o: { peer: "host" | "DPU"; slotCount: number; slotSize: number; size: number },
) {
  const { slotCount, slotSize, size } = o;
  return {
    announce: (c: Chunk) => messenger.send(encodeChunk(MsgType.CHUNK_READY, c.slot, c.offset, c.length)),
    release: (c: Chunk) => messenger.send(encodeChunk(MsgType.CHUNK_DONE, c.slot, c.offset, c.length)),
    async nextAnnouncement(expected: number): Promise<Chunk> {
      const ready = await messenger.recv(MsgType.CHUNK_READY, `the next chunk from the ${o.peer}`);
      const length = safeNumber(ready.length, "chunk length");
      if (
        ready.slot >= slotCount || ready.offset !== BigInt(expected) || length === 0 || length > slotSize ||
        expected + length > size
      ) {
        throw new ProtocolError(
          `CHUNK_READY slot ${ready.slot} offset ${ready.offset} length ${length} is out of order or out of range`,
        );
      }
      return { slot: ready.slot, offset: expected, length };
    },
    slotHeld: (c: Chunk) =>
      new ProtocolError(
        `CHUNK_READY slot ${c.slot} offset ${c.offset} length ${c.length} is out of order or out of range (the slot is still in use)`,
      ),
    async nextRelease(): Promise<{ slot: number; offset: number; length: number }> {
      const ack = await messenger.recv(
        MsgType.CHUNK_DONE,
        o.peer === "DPU" ? "the DPU to finish a chunk" : "the host to store a chunk",
      );
      return { slot: ack.slot, offset: asNumber(ack.offset), length: asNumber(ack.length) };
    },
    badRelease: (r: { slot: number; offset?: number; length?: number }) =>
      new ProtocolError(`CHUNK_DONE for slot ${r.slot} offset ${r.offset} does not match a chunk in flight`),
  };
}
