/**
 * LZ4 frames (the lz4 tool's .lz4 format, lz4_Frame_format.md): the header decompress needs to hand DOCA only the
 * blocks (DOCA's LZ4 stream task takes a frame's blocks without the frame), and a streaming xxHash-32 for the frame's
 * content checksum when the frame took more than one task.
 */
export const LZ4_MAGIC = 0x184d2204;

export class Lz4FormatError extends Error {
  override name = "Lz4FormatError";
}

export interface FrameHeader {
  headerLength: number;
  independentBlocks: boolean;
  blockChecksum: boolean;
  contentChecksum: boolean;
  contentSize: bigint | undefined;
  blockMaxSize: number;
}

const BLOCK_MAX: Record<number, number> = { 4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20 };

/** Parses the frame header at the start of `bytes` (the magic included). */
export function parseFrameHeader(bytes: Uint8Array, where: string): FrameHeader {
  if (bytes.length < 7) throw new Lz4FormatError(`${where}: truncated LZ4 frame header`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0, true) !== LZ4_MAGIC) throw new Lz4FormatError(`${where}: not an LZ4 frame (bad magic)`);
  const flg = bytes[4], bd = bytes[5];
  if (flg >> 6 !== 1) throw new Lz4FormatError(`${where}: LZ4 frame version ${flg >> 6} is not 1`);
  if (flg & 0x02) throw new Lz4FormatError(`${where}: reserved LZ4 header bit set`);
  if (flg & 0x01) throw new Lz4FormatError(`${where}: LZ4 frames with a dictionary ID are not supported`);
  const blockMaxSize = BLOCK_MAX[(bd >> 4) & 7];
  if (!blockMaxSize || bd & 0x8f) throw new Lz4FormatError(`${where}: bad LZ4 block descriptor 0x${bd.toString(16)}`);
  let at = 6;
  let contentSize: bigint | undefined;
  if (flg & 0x08) {
    if (bytes.length < at + 9) throw new Lz4FormatError(`${where}: truncated LZ4 frame header`);
    contentSize = v.getBigUint64(at, true);
    at += 8;
  }
  const hc = bytes[at];
  const expected = (xxh32(bytes.subarray(4, at)) >>> 8) & 0xff;
  if (hc !== expected) throw new Lz4FormatError(`${where}: LZ4 header checksum mismatch`);
  return {
    headerLength: at + 1,
    independentBlocks: (flg & 0x20) !== 0,
    blockChecksum: (flg & 0x10) !== 0,
    contentChecksum: (flg & 0x04) !== 0,
    contentSize,
    blockMaxSize,
  };
}

const P1 = 2654435761, P2 = 2246822519, P3 = 3266489917, P4 = 668265263, P5 = 374761393;
const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
const mul = Math.imul;

/** xxHash-32 with seed 0, fed in pieces. */
export class Xxh32 {
  #v = [(P1 + P2) >>> 0, P2, 0, (0 - P1) >>> 0];
  #total = 0;
  #tail = new Uint8Array(16);
  #tailLength = 0;

  update(p: Uint8Array): this {
    this.#total += p.length;
    let i = 0;
    if (this.#tailLength > 0) {
      const take = Math.min(16 - this.#tailLength, p.length);
      this.#tail.set(p.subarray(0, take), this.#tailLength);
      this.#tailLength += take;
      i = take;
      if (this.#tailLength < 16) return this;
      this.#lanes(this.#tail, 0);
      this.#tailLength = 0;
    }
    for (; i + 16 <= p.length; i += 16) this.#lanes(p, i);
    this.#tail.set(p.subarray(i), 0);
    this.#tailLength = p.length - i;
    return this;
  }

  #lanes(p: Uint8Array, i: number): void {
    const v = this.#v;
    for (let l = 0; l < 4; l++) {
      const o = i + 4 * l;
      const lane = (p[o] | (p[o + 1] << 8) | (p[o + 2] << 16) | (p[o + 3] << 24)) >>> 0;
      v[l] = mul(rotl((v[l] + mul(lane, P2)) >>> 0, 13), P1) >>> 0;
    }
  }

  digest(): number {
    const v = this.#v;
    let h = this.#total >= 16 ? (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) >>> 0 : P5;
    h = (h + this.#total) >>> 0;
    const p = this.#tail;
    let i = 0;
    for (; i + 4 <= this.#tailLength; i += 4) {
      const w = (p[i] | (p[i + 1] << 8) | (p[i + 2] << 16) | (p[i + 3] << 24)) >>> 0;
      h = mul(rotl((h + mul(w, P3)) >>> 0, 17), P4) >>> 0;
    }
    for (; i < this.#tailLength; i++) h = mul(rotl((h + mul(p[i], P5)) >>> 0, 11), P1) >>> 0;
    h ^= h >>> 15;
    h = mul(h, P2) >>> 0;
    h ^= h >>> 13;
    h = mul(h, P3) >>> 0;
    return (h ^ (h >>> 16)) >>> 0;
  }
}

export function xxh32(p: Uint8Array): number {
  return new Xxh32().update(p).digest();
}
