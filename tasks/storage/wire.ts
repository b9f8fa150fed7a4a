/**
 * The wire of NVIDIA's storage reference application (DOCA 3.3 applications/storage), as its programs send it: control
 * messages (between the host's initiator and the DPU over Comch, between the DPU and the storage target over TCP) and
 * the 64-byte io messages of the data path. Written from the format, not from NVIDIA's code: every integer is
 * big-endian; a control message is a u32 length (of what follows) then type, message id, correlation id (u32 each)
 * and the type's payload; byte strings are a u32 length then the bytes.
 */

export const MessageType = {
  error_response: 0,
  query_storage_request: 1,
  query_storage_response: 2,
  init_storage_request: 3,
  init_storage_response: 4,
  create_rdma_connection_request: 5,
  create_rdma_connection_response: 6,
  start_storage_request: 7,
  start_storage_response: 8,
  stop_storage_request: 9,
  stop_storage_response: 10,
  shutdown_request: 11,
  shutdown_response: 12,
} as const;
export type MessageTypeName = keyof typeof MessageType;
const NAMES = Object.fromEntries(Object.entries(MessageType).map(([k, v]) => [v, k])) as Record<number, MessageTypeName>;

export const RdmaRole = { io_data: 0, io_control: 1 } as const;

/** Payloads by type (types without one carry nothing). */
export type Payload =
  | { kind: "error"; code: number; message: string }
  | { kind: "storage"; totalSize: bigint; blockSize: number }
  | { kind: "init"; transactionCount: number; coreCount: number; mmapExport: Uint8Array }
  | { kind: "rdma"; contextIdx: number; role: number; details: Uint8Array }
  | { kind: "none" };

export interface ControlMessage {
  type: MessageTypeName;
  id: number;
  correlation: number;
  payload: Payload;
}

/** The biggest control message accepted (the largest NVIDIA sends is an init request with an export descriptor). */
export const MAX_CONTROL_MESSAGE = 64 * 1024;

function payloadKind(type: MessageTypeName): Payload["kind"] {
  switch (type) {
    case "error_response":
      return "error";
    case "query_storage_response":
      return "storage";
    case "init_storage_request":
      return "init";
    case "create_rdma_connection_request":
    case "create_rdma_connection_response":
      return "rdma";
    default:
      return "none";
  }
}

/** The bytes of one message, its length prefix included. */
export function encode(msg: ControlMessage): Uint8Array {
  const want = payloadKind(msg.type);
  if (msg.payload.kind !== want) throw new TypeError(`${msg.type} carries a ${want} payload, not ${msg.payload.kind}`);
  const parts: number[] = [];
  const u32 = (v: number) => parts.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
  const bytes = (b: Uint8Array) => {
    u32(b.length);
    for (const x of b) parts.push(x);
  };
  u32(MessageType[msg.type]);
  u32(msg.id >>> 0);
  u32(msg.correlation >>> 0);
  const p = msg.payload;
  if (p.kind === "error") {
    u32(p.code >>> 0);
    bytes(new TextEncoder().encode(p.message));
  } else if (p.kind === "storage") {
    u32(Number(p.totalSize >> 32n));
    u32(Number(p.totalSize & 0xffffffffn));
    u32(p.blockSize);
  } else if (p.kind === "init") {
    u32(p.transactionCount);
    u32(p.coreCount);
    bytes(p.mmapExport);
  } else if (p.kind === "rdma") {
    u32(p.contextIdx);
    u32(p.role);
    bytes(p.details);
  }
  const out = new Uint8Array(4 + parts.length);
  new DataView(out.buffer).setUint32(0, parts.length);
  out.set(parts, 4);
  return out;
}

/** Thrown for bytes that are not a message of this protocol (the peer is then dropped, never trusted further). */
export class WireError extends Error {
  override name = "WireError";
}

/** Decodes one message body (without its length prefix). */
export function decode(body: Uint8Array): ControlMessage {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let at = 0;
  const u32 = () => {
    if (at + 4 > body.length) throw new WireError(`control message cut short at byte ${at} of ${body.length}`);
    const v = view.getUint32(at);
    at += 4;
    return v;
  };
  const bytes = () => {
    const n = u32();
    if (at + n > body.length) throw new WireError(`a field of ${n} bytes runs past the message's ${body.length}`);
    const b = body.slice(at, at + n);
    at += n;
    return b;
  };
  const code = u32();
  const type = NAMES[code];
  if (type === undefined) throw new WireError(`unknown control message type ${code}`);
  const id = u32(), correlation = u32();
  let payload: Payload = { kind: "none" };
  switch (payloadKind(type)) {
    case "error":
      payload = { kind: "error", code: u32(), message: new TextDecoder().decode(bytes()) };
      break;
    case "storage": {
      const hi = u32(), lo = u32();
      payload = { kind: "storage", totalSize: (BigInt(hi) << 32n) | BigInt(lo), blockSize: u32() };
      break;
    }
    case "init":
      payload = { kind: "init", transactionCount: u32(), coreCount: u32(), mmapExport: bytes() };
      break;
    case "rdma":
      payload = { kind: "rdma", contextIdx: u32(), role: u32(), details: bytes() };
      break;
  }
  if (at !== body.length) throw new WireError(`${type}: ${body.length - at} bytes left over`);
  return { type, id, correlation, payload };
}

/** Splits a byte stream (TCP, or Comch messages appended) into messages. */
export class Framer {
  #pending = new Uint8Array(0);

  /** Bytes of a message begun and not yet complete (a peer that stops here is stalling mid-message). */
  get pendingBytes(): number {
    return this.#pending.length;
  }

  /** Appends bytes; returns the whole messages now complete, in order. */
  push(chunk: Uint8Array): ControlMessage[] {
    const joined = new Uint8Array(this.#pending.length + chunk.length);
    joined.set(this.#pending);
    joined.set(chunk, this.#pending.length);
    const out: ControlMessage[] = [];
    let at = 0;
    while (joined.length - at >= 4) {
      const size = new DataView(joined.buffer, at, 4).getUint32(0);
      if (size > MAX_CONTROL_MESSAGE) throw new WireError(`a control message of ${size} bytes (at most ${MAX_CONTROL_MESSAGE})`);
      if (joined.length - at - 4 < size) break;
      out.push(decode(joined.subarray(at + 4, at + 4 + size)));
      at += 4 + size;
    }
    this.#pending = joined.slice(at);
    return out;
  }
}

/** io messages: 64 bytes; type u32 @0 (0 result, 1 read, 2 write), user data u64 @8, result u32 @16, io size u32 @20,
 * requester offset u64 @24, storage offset u64 @32 (big-endian, as NVIDIA's io_message layout). */
export const IO_MESSAGE_SIZE = 64;
export const IoType = { result: 0, read: 1, write: 2 } as const;

/** Turns a request into its answer in place: type result, result DOCA_SUCCESS (what the DPU relay reports). */
export function markResult(io: Uint8Array): void {
  const view = new DataView(io.buffer, io.byteOffset, io.byteLength);
  view.setUint32(0, IoType.result);
  view.setUint32(16, 0);
}
