/**
 * Reference checksums for the compress tests, written from their specifications (independent of the device, which
 * uses zlib's and its own): CRC-32 (ISO-HDLC, zlib's crc32), Adler-32 (RFC 1950), xxHash-32 (seed 0, the LZ4 frame's).
 */
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function adler32(bytes: Uint8Array): number {
  let a = 1, b = 0;
  for (let i = 0; i < bytes.length; i++) {
    a = (a + bytes[i]) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const P1 = 2654435761, P2 = 2246822519, P3 = 3266489917, P4 = 668265263, P5 = 374761393;
const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
const mul = (a: number, b: number) => Math.imul(a, b) >>> 0;

export function xxh32(p: Uint8Array): number {
  const view = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const len = p.length;
  let i = 0, h: number;
  if (len >= 16) {
    const v = [(P1 + P2) >>> 0, P2, 0, (0 - P1) >>> 0];
    for (; i + 16 <= len; i += 16) {
      for (let l = 0; l < 4; l++) v[l] = mul(rotl((v[l] + mul(view.getUint32(i + 4 * l, true), P2)) >>> 0, 13), P1);
    }
    h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) >>> 0;
  } else {
    h = P5;
  }
  h = (h + len) >>> 0;
  for (; i + 4 <= len; i += 4) h = mul(rotl((h + mul(view.getUint32(i, true), P3)) >>> 0, 17), P4);
  for (; i < len; i++) h = mul(rotl((h + mul(p[i], P5)) >>> 0, 11), P1);
  h ^= h >>> 15;
  h = mul(h, P2);
  h ^= h >>> 13;
  h = mul(h, P3);
  return (h ^ (h >>> 16)) >>> 0;
}
