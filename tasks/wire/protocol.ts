/**
 * Wire messages of the DMA Copy application: NVIDIA's three (DOCA 3.3 applications/dma_copy, sent as raw C structs:
 * little-endian u32 type, C alignment, 64-bit sizes/addresses big-endian) and doca-ts's extension for files larger
 * than one DMA buffer (types >= 0x100, only ever sent to a peer that marked itself as doca-ts). docs/PROTOCOL.md
 * describes every byte. Decoders are strict: any length, type or field that does not add up is a ProtocolError, and
 * nothing is read past the end of the received bytes.
 */
import { TextDecoder, TextEncoder } from "node:util";

export const MsgType = {
  DIRECTION: 1,
  EXPORT_DESCRIPTOR: 2,
  STATUS: 3,
  // doca-ts extension
  EXT_PARAMS: 0x100,
  WINDOW: 0x101,
  CHUNK_READY: 0x102,
  CHUNK_DONE: 0x103,
  CHECKSUM: 0x104,
  FAILURE_REASON: 0x105,
} as const;
export type MsgTypeValue = typeof MsgType[keyof typeof MsgType];

const TYPE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(MsgType).map(([k, v]) => [v, k]));

export function msgTypeName(type: number): string {
  return TYPE_NAMES[type] ?? `unknown type ${type}`;
}

/** What sending a message of `type` does, in the words of files and peers (an interruption says "while …" this). */
const SENDING: Record<number, string> = {
  [MsgType.DIRECTION]: "telling the peer which way the file goes",
  [MsgType.EXPORT_DESCRIPTOR]: "handing the host's memory to the DPU",
  [MsgType.STATUS]: "telling the peer how the copy ended",
  [MsgType.EXT_PARAMS]: "telling the host how large a chunk may be",
  [MsgType.WINDOW]: "telling the DPU the layout of the host's buffers",
  [MsgType.CHUNK_READY]: "handing a chunk to the receiver",
  [MsgType.CHUNK_DONE]: "handing a chunk back to the sender",
  [MsgType.CHECKSUM]: "sending the file's checksum",
  [MsgType.FAILURE_REASON]: "telling the peer why the copy failed",
};

export function sendingWhat(type: number): string {
  return SENDING[type] ?? `sending a message of ${msgTypeName(type)} to the peer`;
}

/** Sizes of the fixed C structs (x86-64 and aarch64 alignment: u64 fields on 8-byte boundaries). */
export const DIRECTION_SIZE = 16;
export const EXPORT_HEADER_SIZE = 24;
export const STATUS_SIZE = 8;
export const EXT_PARAMS_SIZE = 16;
export const WINDOW_SIZE = 16;
export const CHUNK_SIZE = 24;
export const CHECKSUM_SIZE = 48;
export const FAILURE_REASON_HEADER_SIZE = 8;

/**
 * doca-ts marks its direction messages in the struct padding (bytes 5..7), which NVIDIA's application zero-fills
 * and never reads: "dt" plus the extension version. Version 2 added the receiver's final STATUS (the sender
 * succeeds only once the receiver has committed the file); a version-1 peer is treated like NVIDIA's application.
 */
export const EXTENSION_VERSION = 2;
export const DOCA_TS_MAGIC: Uint8Array = Uint8Array.of(0x64, 0x74, EXTENSION_VERSION);
export const CHECKSUM_SHA256 = 1;

export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/** A wire u64 as a JS number, or ProtocolError if it cannot be one. */
export function safeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new ProtocolError(`${what} ${value} is beyond 2^53`);
  return Number(value);
}

export interface DirectionMsg {
  type: typeof MsgType.DIRECTION;
  fileInHost: boolean;
  fileSize: bigint;
  /** The sender marked the padding with DOCA_TS_MAGIC: it speaks the extension. */
  docaTs: boolean;
}
export interface ExportDescriptorMsg {
  type: typeof MsgType.EXPORT_DESCRIPTOR;
  hostAddr: bigint;
  descriptor: Uint8Array;
}
export interface StatusMsg {
  type: typeof MsgType.STATUS;
  isSuccess: boolean;
}
/** DPU → host after its direction answer: the largest chunk one DMA task may move, and how many slots it serves. */
export interface ExtParamsMsg {
  type: typeof MsgType.EXT_PARAMS;
  maxSlots: number;
  maxChunk: bigint;
}
/** Host → DPU just before EXPORT_DESCRIPTOR: the exported range is slotCount slots of slotSize bytes. */
export interface WindowMsg {
  type: typeof MsgType.WINDOW;
  slotCount: number;
  slotSize: bigint;
}
interface ChunkFields {
  slot: number;
  offset: bigint;
  length: bigint;
}
/** The slot's bytes [offset, offset + length) of the file are in place (written by its producer). */
export interface ChunkReadyMsg extends ChunkFields {
  type: typeof MsgType.CHUNK_READY;
}
/** The consumer is done with the slot: it may be refilled. Echoes the chunk it acknowledges. */
export interface ChunkDoneMsg extends ChunkFields {
  type: typeof MsgType.CHUNK_DONE;
}
export type ChunkMsg = ChunkReadyMsg | ChunkDoneMsg;
export interface ChecksumMsg {
  type: typeof MsgType.CHECKSUM;
  algorithm: number;
  totalBytes: bigint;
  digest: Uint8Array;
}
export interface FailureReasonMsg {
  type: typeof MsgType.FAILURE_REASON;
  text: string;
}
export type Msg =
  | DirectionMsg
  | ExportDescriptorMsg
  | StatusMsg
  | ExtParamsMsg
  | WindowMsg
  | ChunkMsg
  | ChecksumMsg
  | FailureReasonMsg;

const U64_MAX = (1n << 64n) - 1n;

function frame(size: number, type: number): { bytes: Uint8Array; view: DataView } {
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, type, true);
  return { bytes, view };
}

function u64(value: bigint | number, what: string): bigint {
  const v = BigInt(value);
  if (v < 0n || v > U64_MAX) throw new RangeError(`${what} out of u64 range: ${value}`);
  return v;
}

function u32(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new RangeError(`${what} out of u32 range: ${value}`);
  return value;
}

export function encodeDirection(opts: { fileInHost: boolean; fileSize?: bigint | number; docaTs?: boolean }): Uint8Array {
  const { bytes, view } = frame(DIRECTION_SIZE, MsgType.DIRECTION);
  bytes[4] = opts.fileInHost ? 1 : 0;
  if (opts.docaTs) bytes.set(DOCA_TS_MAGIC, 5);
  view.setBigUint64(8, u64(opts.fileSize ?? 0, "file size"), false);
  return bytes;
}

export function encodeExportDescriptor(hostAddr: bigint | number, descriptor: Uint8Array): Uint8Array {
  const { bytes, view } = frame(EXPORT_HEADER_SIZE + descriptor.length, MsgType.EXPORT_DESCRIPTOR);
  view.setBigUint64(8, u64(hostAddr, "host address"), false);
  view.setBigUint64(16, BigInt(descriptor.length), false);
  bytes.set(descriptor, EXPORT_HEADER_SIZE);
  return bytes;
}

export function encodeStatus(isSuccess: boolean): Uint8Array {
  const { bytes } = frame(STATUS_SIZE, MsgType.STATUS);
  bytes[4] = isSuccess ? 1 : 0;
  return bytes;
}

export function encodeExtParams(maxSlots: number, maxChunk: bigint | number): Uint8Array {
  const { bytes, view } = frame(EXT_PARAMS_SIZE, MsgType.EXT_PARAMS);
  view.setUint32(4, u32(maxSlots, "slot count"), false);
  view.setBigUint64(8, u64(maxChunk, "max chunk"), false);
  return bytes;
}

export function encodeWindow(slotCount: number, slotSize: bigint | number): Uint8Array {
  const { bytes, view } = frame(WINDOW_SIZE, MsgType.WINDOW);
  view.setUint32(4, u32(slotCount, "slot count"), false);
  view.setBigUint64(8, u64(slotSize, "slot size"), false);
  return bytes;
}

export function encodeChunk(
  type: typeof MsgType.CHUNK_READY | typeof MsgType.CHUNK_DONE,
  slot: number,
  offset: bigint | number,
  length: bigint | number,
): Uint8Array {
  const { bytes, view } = frame(CHUNK_SIZE, type);
  view.setUint32(4, u32(slot, "slot"), false);
  view.setBigUint64(8, u64(offset, "offset"), false);
  view.setBigUint64(16, u64(length, "length"), false);
  return bytes;
}

export function encodeChecksum(totalBytes: bigint | number, digest: Uint8Array): Uint8Array {
  if (digest.length !== 32) throw new RangeError(`SHA-256 digest must be 32 bytes, got ${digest.length}`);
  const { bytes, view } = frame(CHECKSUM_SIZE, MsgType.CHECKSUM);
  view.setUint32(4, CHECKSUM_SHA256, false);
  view.setBigUint64(8, u64(totalBytes, "total bytes"), false);
  bytes.set(digest, 16);
  return bytes;
}

/** A reason text, cut (on a UTF-8 boundary) to fit maxMsgSize. */
export function encodeFailureReason(text: string, maxMsgSize = 4080): Uint8Array {
  let body = new TextEncoder().encode(text || "failure");
  const room = maxMsgSize - FAILURE_REASON_HEADER_SIZE;
  if (body.length > room) {
    let cut = room;
    while (cut > 0 && (body[cut] & 0xc0) === 0x80) cut--; // never split a multi-byte character
    body = body.subarray(0, cut);
  }
  const { bytes } = frame(FAILURE_REASON_HEADER_SIZE + body.length, MsgType.FAILURE_REASON);
  bytes.set(body, FAILURE_REASON_HEADER_SIZE);
  return bytes;
}

function expectLength(bytes: Uint8Array, size: number, type: number): void {
  if (bytes.length !== size) {
    throw new ProtocolError(`${msgTypeName(type)} message must be ${size} bytes, got ${bytes.length}`);
  }
}

/** The body EXT_PARAMS and WINDOW share: a slot count (u32 at 4) and a size (u64 at 8), big-endian, neither zero. */
function slotsAndSize(view: DataView, zeroError: string): [number, bigint] {
  const slots = view.getUint32(4, false);
  const size = view.getBigUint64(8, false);
  if (slots === 0 || size === 0n) throw new ProtocolError(zeroError);
  return [slots, size];
}

function bool(byte: number, what: string): boolean {
  if (byte > 1) throw new ProtocolError(`${what} must be 0 or 1, got ${byte}`);
  return byte === 1;
}

/** Decodes one received message; throws ProtocolError on anything malformed or unknown. */
export function decodeMessage(bytes: Uint8Array): Msg {
  if (bytes.length < 4) throw new ProtocolError(`message too short for its type field: ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = view.getUint32(0, true);
  switch (type) {
    case MsgType.DIRECTION: {
      expectLength(bytes, DIRECTION_SIZE, type);
      const docaTs = bytes[5] === DOCA_TS_MAGIC[0] && bytes[6] === DOCA_TS_MAGIC[1] && bytes[7] === DOCA_TS_MAGIC[2];
      return { type, fileInHost: bool(bytes[4], "file_in_host"), fileSize: view.getBigUint64(8, false), docaTs };
    }
    case MsgType.EXPORT_DESCRIPTOR: {
      if (bytes.length <= EXPORT_HEADER_SIZE) {
        throw new ProtocolError(`EXPORT_DESCRIPTOR message needs more than ${EXPORT_HEADER_SIZE} bytes, got ${bytes.length}`);
      }
      const declared = view.getBigUint64(16, false);
      const actual = BigInt(bytes.length - EXPORT_HEADER_SIZE);
      if (declared !== actual) {
        throw new ProtocolError(`EXPORT_DESCRIPTOR declares a ${declared}-byte descriptor but carries ${actual} bytes`);
      }
      return { type, hostAddr: view.getBigUint64(8, false), descriptor: bytes.slice(EXPORT_HEADER_SIZE) };
    }
    case MsgType.STATUS:
      expectLength(bytes, STATUS_SIZE, type);
      return { type, isSuccess: bool(bytes[4], "is_success") };
    case MsgType.EXT_PARAMS: {
      expectLength(bytes, EXT_PARAMS_SIZE, type);
      const [maxSlots, maxChunk] = slotsAndSize(view, "EXT_PARAMS with zero slots or zero chunk size");
      return { type, maxSlots, maxChunk };
    }
    case MsgType.WINDOW: {
      expectLength(bytes, WINDOW_SIZE, type);
      const [slotCount, slotSize] = slotsAndSize(view, "WINDOW with zero slots or zero slot size");
      return { type, slotCount, slotSize };
    }
    case MsgType.CHUNK_READY:
    case MsgType.CHUNK_DONE:
      expectLength(bytes, CHUNK_SIZE, type);
      return { type, slot: view.getUint32(4, false), offset: view.getBigUint64(8, false), length: view.getBigUint64(16, false) } as ChunkMsg;
    case MsgType.CHECKSUM: {
      expectLength(bytes, CHECKSUM_SIZE, type);
      const algorithm = view.getUint32(4, false);
      if (algorithm !== CHECKSUM_SHA256) throw new ProtocolError(`CHECKSUM with unknown algorithm ${algorithm}`);
      return { type, algorithm, totalBytes: view.getBigUint64(8, false), digest: bytes.slice(16, 48) };
    }
    case MsgType.FAILURE_REASON: {
      if (bytes.length <= FAILURE_REASON_HEADER_SIZE) throw new ProtocolError("FAILURE_REASON without text");
      const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(FAILURE_REASON_HEADER_SIZE));
      return { type, text };
    }
    default:
      throw new ProtocolError(`unknown message type ${type} (${bytes.length} bytes)`);
  }
}

/** Type-narrowing expectation: the message, or a ProtocolError naming what arrived instead. */
export function expectType<T extends Msg["type"]>(msg: Msg, type: T): Extract<Msg, { type: T }> {
  if (msg.type !== type) {
    throw new ProtocolError(`expected ${msgTypeName(type)}, got ${msgTypeName(msg.type)}`);
  }
  return msg as Extract<Msg, { type: T }>;
}
