/**
 * The gzip container (RFC 1952) around DOCA's raw deflate. compress writes one member per chunk: a 10-byte header with
 * FEXTRA holding one subfield "DC" (5 bytes: the member's compressed length, so decompress can cut the file into
 * members without inflating it, then a flags byte whose bit 0 marks the last member, so a file cut at a member
 * boundary is known to be incomplete; gunzip ignores subfields it does not know, as BGZF's readers rely on), the raw
 * deflate from the device, then CRC-32 and ISIZE. gunzip reads the concatenated members as one stream. Members of
 * earlier versions carry a 4-byte "DC" (no flags): read as before, without the end check.
 * decompress reads those, and any single-member gzip file (its deflate data runs up to the 8-byte trailer, which
 * ends the file or is followed by zero padding only).
 */
const FTEXT = 1, FHCRC = 2, FEXTRA = 4, FNAME = 8, FCOMMENT = 16;

/** Bit 0 of the "DC" subfield's flags byte: this member is the file's last. */
export const DC_LAST_MEMBER = 1;

/** Header of one member carrying `compressedLength` and whether it is the last (OS 255: unknown, MTIME 0: none). */
export function memberHeader(compressedLength: number, last: boolean): Uint8Array {
  const h = new Uint8Array(10 + 2 + 9);
  const v = new DataView(h.buffer);
  h.set([0x1f, 0x8b, 8, FEXTRA, 0, 0, 0, 0, 0, 255]);
  v.setUint16(10, 9, true); // XLEN: one subfield of 4 + 5 bytes
  h.set([0x44, 0x43], 12); // SI1 SI2 = "DC"
  v.setUint16(14, 5, true);
  v.setUint32(16, compressedLength, true);
  h[20] = last ? DC_LAST_MEMBER : 0;
  return h;
}

/** CRC-32 and ISIZE (the uncompressed length modulo 2^32). */
export function memberTrailer(crc32: number, length: number): Uint8Array {
  const t = new Uint8Array(8);
  const v = new DataView(t.buffer);
  v.setUint32(0, crc32 >>> 0, true);
  v.setUint32(4, length % 2 ** 32, true);
  return t;
}

/** What a member's header says: its length and, for our own members, the compressed length. */
export interface MemberHeader {
  headerLength: number;
  compressedLength: number | undefined;
  /** true/false from a 5-byte "DC" subfield; undefined for other members (a plain gzip's, an older compress's). */
  last: boolean | undefined;
}

export class GzipFormatError extends Error {
  override name = "GzipFormatError";
}

/** Parses a member header at the start of `bytes` (which holds at least what is left of the file, up to 64 KiB). */
export function parseMemberHeader(bytes: Uint8Array, where: string): MemberHeader {
  if (bytes.length < 10 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) throw new GzipFormatError(`${where}: not a gzip member (bad magic)`);
  if (bytes[2] !== 8) throw new GzipFormatError(`${where}: compression method ${bytes[2]} is not deflate`);
  const flags = bytes[3];
  if (flags & 0xe0) throw new GzipFormatError(`${where}: reserved header flags set`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 10;
  let compressedLength: number | undefined;
  let last: boolean | undefined;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new GzipFormatError(`${where}: truncated gzip header`);
  };
  if (flags & FEXTRA) {
    need(2);
    const xlen = v.getUint16(at, true);
    at += 2;
    need(xlen);
    const end = at + xlen;
    for (let p = at; p + 4 <= end;) {
      const len = v.getUint16(p + 2, true);
      if (bytes[p] === 0x44 && bytes[p + 1] === 0x43 && (len === 4 || len === 5) && p + 4 + len <= end) {
        compressedLength = v.getUint32(p + 4, true);
        if (len === 5) last = (bytes[p + 8] & DC_LAST_MEMBER) !== 0;
      }
      p += 4 + len;
    }
    at = end;
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    while (true) {
      need(1);
      if (bytes[at++] === 0) break;
    }
  }
  if (flags & FHCRC) {
    need(2);
    // the low 16 bits of the CRC-32 of the header bytes before it (RFC 1952 2.3.1), as gzip -t checks
    const expected = v.getUint16(at, true);
    const actual = crc32(bytes.subarray(0, at)) & 0xffff;
    if (expected !== actual) throw new GzipFormatError(`${where}: header CRC mismatch (header 0x${actual.toString(16)}, FHCRC 0x${expected.toString(16)})`);
    at += 2;
  }
  void FTEXT;
  return { headerLength: at, compressedLength, last };
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE, as gzip) of a few bytes: only headers pass here, the data's CRC comes from the device. */
export function crc32(bytes: Uint8Array): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The raw deflate stream of an empty input (one final fixed-Huffman block holding only the end code). */
export const EMPTY_DEFLATE = new Uint8Array([0x03, 0x00]);
