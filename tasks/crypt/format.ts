/**
 * The file format of `encrypt` / `decrypt` (AES-GCM on DOCA) and its key files.
 *
 * File = header (28 bytes) then records. Header: magic "DOCATSGC" (8 bytes), version 1 (u8), key bits 128 or 256
 * (u8 / 8: 16 or 32), tag length 16 (u8), reserved 0 (u8), chunk size (u32 big-endian, 4 KiB to 1 MiB), IV base
 * (12 random bytes). Record i = AES-GCM of plaintext chunk i: ciphertext then tag. Every chunk but the last holds
 * exactly `chunk size` bytes; the last holds fewer (0 when the file is a whole number of chunks), so a file ends in
 * exactly one short record. Chunk i is sealed with
 *   IV  = IV base XOR (i as a u64 big-endian in its last 8 bytes)   (distinct for every chunk of a file)
 *   AAD = header ‖ i (u64 big-endian) ‖ final (u8: 1 for the last chunk, else 0)
 * so a changed header, a chunk moved, repeated or dropped, or a file cut after any record fails authentication.
 *
 * Key file: the key as hex (32 or 64 characters, one optional newline), readable by its owner only: a key file
 * readable or writable by group or others is refused. `--generate-key FILE` creates one with mode 0600.
 */
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync, type Stats, statSync, writeSync } from "node:fs";
import { describeKind, openRegularFile } from "../common/input-file.ts";
import { rethrowMissingPermission } from "../common/permission.ts";
import { UsageError } from "../common/cli.ts";

export const MAGIC = new TextEncoder().encode("DOCATSGC");
export const VERSION = 1;
export const HEADER_SIZE = 28;
export const TAG_SIZE = 16;
export const DEFAULT_CHUNK = 1024 * 1024;
export const MIN_CHUNK = 4096;
export const MAX_CHUNK = 1024 * 1024;
/** AAD bytes per chunk: the header, the index, the final flag. */
export const AAD_SIZE = HEADER_SIZE + 8 + 1;

export interface Header {
  keyBytes: 16 | 32;
  tagSize: number;
  chunkSize: number;
  ivBase: Uint8Array;
  bytes: Uint8Array;
}

export function makeHeader(keyBytes: 16 | 32, chunkSize: number, ivBase: Uint8Array = randomBytes(12)): Header {
  const bytes = new Uint8Array(HEADER_SIZE);
  bytes.set(MAGIC, 0);
  bytes[8] = VERSION;
  bytes[9] = keyBytes;
  bytes[10] = TAG_SIZE;
  bytes[11] = 0;
  new DataView(bytes.buffer).setUint32(12, chunkSize);
  bytes.set(ivBase, 16);
  return { keyBytes, tagSize: TAG_SIZE, chunkSize, ivBase: bytes.slice(16, 28), bytes };
}

/**
 * The header of encrypted file `file`, or an Error naming the file and what is wrong (not an encrypted file, another
 * version...): every input error of an accelerator task names its file.
 */
export function parseHeader(bytes: Uint8Array, file: string): Header {
  if (bytes.length < HEADER_SIZE) {
    throw new Error(`${file} is not an encrypted file: ${bytes.length} bytes, shorter than the ${HEADER_SIZE}-byte header`);
  }
  if (Buffer.compare(bytes.subarray(0, 8), MAGIC) !== 0) throw new Error(`${file} is not an encrypted file of doca-ts (no DOCATSGC magic)`);
  if (bytes[8] !== VERSION) throw new Error(`${file}: format version ${bytes[8]} is not supported (only ${VERSION})`);
  const keyBytes = bytes[9];
  if (keyBytes !== 16 && keyBytes !== 32) throw new Error(`${file}: bad header: key size ${keyBytes} bytes`);
  if (bytes[10] !== TAG_SIZE || bytes[11] !== 0) throw new Error(`${file}: bad header: tag length ${bytes[10]}`);
  const chunkSize = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12);
  if (chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK) throw new Error(`${file}: bad header: chunk size ${chunkSize}`);
  return { keyBytes, tagSize: TAG_SIZE, chunkSize, ivBase: bytes.slice(16, 28), bytes: bytes.slice(0, HEADER_SIZE) };
}

export function chunkIv(header: Header, index: number): Uint8Array {
  const iv = header.ivBase.slice();
  const view = new DataView(iv.buffer);
  view.setBigUint64(4, view.getBigUint64(4) ^ BigInt(index));
  return iv;
}

export function chunkAad(header: Header, index: number, final: boolean): Uint8Array {
  const aad = new Uint8Array(AAD_SIZE);
  aad.set(header.bytes, 0);
  new DataView(aad.buffer).setBigUint64(HEADER_SIZE, BigInt(index));
  aad[HEADER_SIZE + 8] = final ? 1 : 0;
  return aad;
}

/**
 * Reads a key file, refusing one that group or others may read or write, and anything but a regular file: its type
 * and mode are checked before it is opened (a FIFO would block the open, and with it every stop handler), and again
 * on the open descriptor (the name could be swapped in between).
 */
export function readKeyFile(path: string, flag: string): Uint8Array {
  let stat;
  try {
    stat = statSync(path);
  } catch (e) {
    rethrowMissingPermission(e);
    throw new UsageError(`${flag}: cannot open ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  checkKeyStat(stat, path, flag);
  let fd: number;
  try {
    fd = openRegularFile(path, path, "a key is a small private file");
  } catch (e) {
    rethrowMissingPermission(e);
    throw new UsageError(`${flag}: ${(e as Error).message}`);
  }
  try {
    checkKeyStat(fstatSync(fd), path, flag);
    const bytes = new Uint8Array(256);
    let length = 0;
    for (let n; length < bytes.length && (n = readSync(fd, bytes, length, bytes.length - length, length)) > 0;) length += n;
    const text = new TextDecoder().decode(bytes.subarray(0, length)).replace(/\r?\n$/, "");
    if (!/^([0-9a-fA-F]{32}|[0-9a-fA-F]{64})$/.test(text)) {
      throw new UsageError(`${flag}: ${path} must hold a 128- or 256-bit key as 32 or 64 hex digits`);
    }
    return new Uint8Array(Buffer.from(text, "hex"));
  } finally {
    closeSync(fd);
  }
}

function checkKeyStat(stat: Stats, path: string, flag: string): void {
  if (!stat.isFile()) throw new UsageError(`${flag}: ${path} is ${describeKind(stat)}: a key file must be a regular file`);
  const mode = stat.mode & 0o777;
  if (mode & 0o077) {
    throw new UsageError(
      `${flag}: ${path} is readable or writable by others (mode ${mode.toString(8).padStart(3, "0")}); ` +
        `a key must be private: chmod 600 ${path}`,
    );
  }
}

/** Creates FILE (never replacing one) with mode 0600 holding a fresh random key as hex. */
export function generateKeyFile(path: string, bits: 128 | 256): void {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    rethrowMissingPermission(e);
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`--generate-key: cannot create ${path}${code === "EEXIST" ? " (it exists: a key is never overwritten)" : `: ${(e as Error).message}`}`);
  }
  try {
    writeSync(fd, `${Buffer.from(randomBytes(bits / 8)).toString("hex")}\n`);
  } finally {
    closeSync(fd);
  }
}
