#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * decompress: a gzip file (compress's members, or any single-member gzip) or an LZ4 frame file (the lz4 tool's .lz4)
 * back to its content, the inflating done by DOCA Compress. Every member's CRC-32 and length, every frame's content
 * checksum and size are checked; a corrupt input fails with exit 1 and leaves no output.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { closeSync, fstatSync, readSync } from "node:fs";
import process from "node:process";
import { Compress, DocaError, ProgressEngine } from "../mod.ts";
import { UsageError } from "./common/cli.ts";
import { openRegularFile } from "./common/input-file.ts";
import { openDeviceOf } from "./common/device.ts";
import { interruption, STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { LoopTurns } from "./common/loop-turns.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { userPath } from "./common/user-path.ts";
import { bytesPerSecond, formatBytes, formatRate } from "./common/units.ts";
import { GzipFormatError, parseMemberHeader } from "./accel/gzip.ts";
import { LZ4_MAGIC, Lz4FormatError, parseFrameHeader, Xxh32 } from "./accel/lz4-frame.ts";
import { checkFileToFile, FILE_TO_FILE_OPTIONS, OutputFile } from "./accel/output-file.ts";
import { Progress } from "./accel/progress.ts";
import { Staging } from "./accel/staging.ts";
import { parseTaskCommand, taskFlags } from "./common/task-flags.ts";
import { DEVICE_FILE_OPTIONS, type OptionRules } from "./common/options-check.ts";

export const FLAGS = taskFlags({}, "output", "force", "pci-addr", "json", "version", "help");

const HELP = `Usage: decompress FILE [-o OUTPUT] [-f] [-p PCI] [--json]

Decompresses FILE with DOCA Compress: gzip (compress's output, or any single-member gzip file: gzip, pigz -p1) or
LZ4 frames (the lz4 tool's .lz4, blocks of 64 KiB to 4 MiB, with or without block and content checksums). Each gzip
member's CRC-32 and length, each LZ4 frame's content checksum and size are verified. The output appears under its
name only when complete and verified; a corrupt input fails and leaves nothing behind.
  -o, --output FILE   where to write (default FILE without its .gz / .lz4 suffix); refused if it exists, unless -f
  -f, --force         replace an existing output file
  -p, --pci-addr PCI  device (default: the first one found)
      --json          print the result as one JSON object
      --version       print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help          this text
Limits: a gzip member, and an LZ4 frame of dependent blocks, must each fit one device task (its max buffer size);
multi-member gzip files other than compress's are refused. No peer and no waits but the device's tasks.
Exit status 0, 1 on any error (corrupt or truncated
input, unknown format), 2 for bad flags, ${STOPPED_STATUSES}.`;

export interface DecompressFileOptions {
  input: string;
  output: string;
  force?: boolean;
  pciAddr?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export interface DecompressFileResult {
  device: string;
  format: "gzip" | "lz4";
  input: string;
  output: string;
  inputBytes: number;
  outputBytes: number;
  tasks: number;
  seconds: number;
  /** outputBytes (the uncompressed data) over seconds: the rate the summary line prints */
  bytesPerSecond: number;
}

/** Corrupt, truncated or unsupported input: the message names the file and what is wrong. */
export class CorruptInputError extends Error {
  override name = "CorruptInputError";
}

/** Reads `length` bytes at `position` (fewer at the end of the file). */
function readAt(fd: number, position: number, length: number, into?: Uint8Array): Uint8Array {
  const buf = into ?? new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

/** decompressFile's options, checked at run time (plain JavaScript callers). */
const DECOMPRESS_OPTIONS: OptionRules = {
  ...FILE_TO_FILE_OPTIONS,
  ...DEVICE_FILE_OPTIONS,
};

export async function decompressFile(options: DecompressFileOptions): Promise<DecompressFileResult> {
  const t0 = performance.now();
  checkFileToFile("decompressFile", options, DECOMPRESS_OPTIONS);
  const fd = openRegularFile(options.input);
  let out: OutputFile | undefined;
  try {
    const size = fstatSync(fd).size;
    const magic = readAt(fd, 0, 4);
    const isGzip = magic.length >= 2 && magic[0] === 0x1f && magic[1] === 0x8b;
    const word = magic.length === 4 ? new DataView(magic.buffer, magic.byteOffset).getUint32(0, true) : 0;
    // a frame, or a skippable frame before one (skipped, as the lz4 tool does)
    const isLz4 = word === LZ4_MAGIC || (magic.length === 4 && (word & 0xfffffff0) === 0x184d2a50);
    if (!isGzip && !isLz4) throw new CorruptInputError(`${options.input}: neither gzip nor an LZ4 frame (unknown magic)`);
    using device = openDeviceOf(options.pciAddr);
    using pe = new ProgressEngine();
    await using compress = await Compress.open(device, pe, { maxTasks: 2 });
    using staging = new Staging(device);
    out = OutputFile.create(options.output, options.output, options.force, "decompress");
    const ctx: Ctx = { fd, size, compress, staging, out, options, tasks: 0, turns: new LoopTurns() };
    if (isGzip) await gunzip(ctx);
    else await unlz4(ctx);
    out.commit();
    const seconds = (performance.now() - t0) / 1000;
    return {
      device: device.info.pciAddr,
      format: isGzip ? "gzip" : "lz4",
      input: options.input,
      output: options.output,
      inputBytes: size,
      outputBytes: out.length,
      tasks: ctx.tasks,
      seconds,
      bytesPerSecond: bytesPerSecond(out.length, seconds),
    };
  } catch (e) {
    out?.abort();
    if (e instanceof GzipFormatError || e instanceof Lz4FormatError) throw new CorruptInputError(e.message);
    if (e instanceof DocaError) throw new CorruptInputError(`${options.input}: the device refused the data: ${e.message}`);
    throw e;
  } finally {
    closeSync(fd);
  }
}

interface Ctx {
  fd: number;
  size: number;
  compress: Compress;
  staging: Staging;
  out: OutputFile;
  options: DecompressFileOptions;
  tasks: number;
  turns: LoopTurns;
}

async function checkStop(ctx: Ctx): Promise<void> {
  await ctx.turns.turn(); // the stop's turn of the event loop (common/loop-turns.ts)
  const signal = ctx.options.signal;
  if (signal?.aborted) throw interruption(signal, `decompressing ${ctx.options.input}`);
}

/** One device task over `length` source bytes at `position`, with `room` bytes of output; writes the output. */
async function inflateRange(ctx: Ctx, position: number, length: number, room: number, kind: "deflate" | "lz4", lz4?: { blockChecksum: boolean; independentBlocks: boolean }) {
  const max = ctx.compress.caps.maxBufSize;
  if (length > max || room > max) {
    throw new CorruptInputError(`${ctx.options.input}: a piece of ${formatBytes(Math.max(length, room))} exceeds the device's max buffer size (${formatBytes(max)})`);
  }
  const { staging } = ctx;
  staging.src.ensure(length);
  const got = readAt(ctx.fd, position, length, staging.src.bytes.subarray(0, length));
  if (got.length < length) throw new CorruptInputError(`${ctx.options.input}: truncated (ends inside a compressed piece)`);
  const src = staging.src.data(staging.inventory, length);
  const dst = staging.dst.room(staging.inventory, room);
  try {
    const r = kind === "deflate" ? await ctx.compress.decompressDeflate(src, dst) : await ctx.compress.decompressLz4Stream(src, dst, lz4);
    ctx.tasks++;
    const bytes = staging.dst.bytes.subarray(0, r.length);
    return { r, bytes };
  } finally {
    src.closeSync();
    dst.closeSync();
  }
}

/** Said when a plain (not compress's) gzip file fails: it may hold several members, which are not supported. */
const MULTI_MEMBER_NOTE = "multi-member gzip files other than compress's are not supported";

async function gunzip(ctx: Ctx): Promise<void> {
  let at = 0;
  let first = true;
  let lastSeen: boolean | undefined; // compress's 5-byte "DC" members say which one is last; older ones do not
  while (at < ctx.size) {
    await checkStop(ctx);
    if (lastSeen) {
      // after the last member only zero padding may follow (gunzip accepts it: tape blocks, dd)
      if (readAt(ctx.fd, at, ctx.size - at > 65536 ? 65536 : ctx.size - at).every((b) => b === 0)) {
        at = Math.min(ctx.size, at + 65536);
        continue;
      }
      throw new GzipFormatError(`${ctx.options.input} at byte ${at}: data after the last member`);
    }
    const head = readAt(ctx.fd, at, Math.min(65536, ctx.size - at));
    const where = `${ctx.options.input} at byte ${at}`;
    if (!first && head.every((b) => b === 0)) {
      at += head.length; // zero padding after the members, as gunzip accepts it
      continue;
    }
    const h = parseMemberHeader(head, where);
    const dataAt = at + h.headerLength;
    let clen: number;
    if (h.compressedLength === undefined) {
      // Not one of compress's members: a plain gzip file is one member, whose end only inflating finds
      if (!first) throw new GzipFormatError(`${where}: a second gzip member without its compressed length (${MULTI_MEMBER_NOTE})`);
      clen = await inflatePlainMember(ctx, dataAt, where);
    } else {
      clen = h.compressedLength;
      if (h.last !== undefined) lastSeen = h.last;
      if (dataAt + clen + 8 > ctx.size) throw new GzipFormatError(`${where}: truncated gzip member`);
      ctx.out.write(await inflateMember(ctx, dataAt, clen, where, ""));
    }
    at = dataAt + clen + 8;
    first = false;
    ctx.options.onProgress?.(at, ctx.size);
  }
  if (lastSeen === false) {
    throw new GzipFormatError(`${ctx.options.input}: truncated: it ends after a member that is not the last (the last member is missing)`);
  }
}

/**
 * Inflates the member whose deflate data starts at `dataAt` and ends 8 bytes (CRC-32, ISIZE) before `dataAt + clen + 8`,
 * checking length and CRC against its trailer; returns the bytes.
 */
async function inflateMember(ctx: Ctx, dataAt: number, clen: number, where: string, note: string): Promise<Uint8Array> {
  const trailer = readAt(ctx.fd, dataAt + clen, 8);
  const tv = new DataView(trailer.buffer, trailer.byteOffset, 8);
  const crc = tv.getUint32(0, true), isize = tv.getUint32(4, true);
  if (isize === 0) {
    if (clen !== 2) throw new GzipFormatError(`${where}: a member of 0 bytes with ${clen} bytes of deflate data${note}`);
    return new Uint8Array(0);
  }
  const max = ctx.compress.caps.maxBufSize;
  if (isize > max || clen > max) {
    throw new GzipFormatError(`${where}: the member is larger than one device task takes (${formatBytes(max)}): it claims ` +
      `${formatBytes(isize)} (${formatBytes(clen)} compressed); if it is not that large, the file is truncated or corrupt`);
  }
  let inflated;
  try {
    inflated = await inflateRange(ctx, dataAt, clen, isize, "deflate");
  } catch (e) {
    if (note && e instanceof DocaError) throw new GzipFormatError(`${where}: the device refused the data: ${e.message}${note}`);
    throw e;
  }
  const { r, bytes } = inflated;
  if (r.length !== isize) throw new GzipFormatError(`${where}: ${r.length} bytes inflated, the trailer says ${isize}${note}`);
  if (r.crc32 !== crc) throw new GzipFormatError(`${where}: CRC-32 mismatch (data 0x${r.crc32.toString(16)}, trailer 0x${crc.toString(16)})${note}`);
  return bytes;
}

/** Deflate never expands data by more than 1032 to 1: a trailer claiming more is not the member's trailer. */
const DEFLATE_MAX_RATIO = 1032;

/**
 * A plain gzip file's one member: its deflate data runs up to its 8-byte trailer, which ends the file or is followed
 * by zero padding only (gunzip accepts that: tape blocks, dd). The trailer is not all zeros (ISIZE 0 is the empty
 * member, 2 bytes of deflate), so it ends within 8 bytes after the file's last non-zero byte: at most 8 places to
 * try, the file's end first. Writes the bytes; returns the member's deflate length.
 */
async function inflatePlainMember(ctx: Ctx, dataAt: number, where: string): Promise<number> {
  const note = ` (if it holds several gzip members: ${MULTI_MEMBER_NOTE})`;
  const lastNonZero = lastNonZeroByte(ctx, dataAt);
  const ends = [ctx.size];
  for (let end = lastNonZero + 1; end <= Math.min(lastNonZero + 8, ctx.size - 1); end++) ends.push(end);
  if (dataAt + 10 > lastNonZero && dataAt + 10 < ctx.size) ends.push(dataAt + 10); // the empty member, then zeros
  let firstError: unknown;
  for (const end of ends) {
    const clen = end - 8 - dataAt;
    if (clen < 0) continue;
    try {
      ctx.out.write(await inflateMember(ctx, dataAt, clen, where, note));
      return clen;
    } catch (e) {
      if (!(e instanceof GzipFormatError) && !(e instanceof DocaError)) throw e;
      firstError ??= e;
    }
  }
  if (firstError === undefined) throw new GzipFormatError(`${where}: truncated gzip member`);
  // The file's last 8 bytes claim more than its deflate data could hold: they are not the member's trailer (bytes
  // after the member, or a cut inside it: which one, only the inflate's end would tell, and the device does not say)
  const tail = readAt(ctx.fd, ctx.size - 8, 8);
  const tv = new DataView(tail.buffer, tail.byteOffset, 8);
  const crc = tv.getUint32(0, true), isize = tv.getUint32(4, true);
  const clen = ctx.size - 8 - dataAt;
  const bound = clen * DEFLATE_MAX_RATIO + DEFLATE_MAX_RATIO;
  if (isize > bound) {
    // The data may still be the whole member under a trailer whose size field alone was changed: the CRC-32 tells
    const whole = await inflateRange(ctx, dataAt, clen, Math.min(bound, ctx.compress.caps.maxBufSize), "deflate").catch(() => undefined);
    if (whole && whole.r.crc32 === crc) {
      throw new GzipFormatError(`${where}: the trailer's size field does not match the data: it says ${isize} bytes, the data ` +
        `inflates to ${whole.r.length} (its CRC-32 matches the trailer's)`);
    }
    throw new GzipFormatError(`${where}: its last 8 bytes are no gzip trailer (their size field says ${isize} bytes, more than ` +
      `${clen} bytes of deflate data can hold): trailing bytes after the last member (only zero padding may follow it, as ` +
      `gunzip accepts), or the file is truncated or corrupt`);
  }
  throw firstError;
}

/** The offset of the file's last non-zero byte at or after `from`, or from - 1 when there is none. */
function lastNonZeroByte(ctx: Ctx, from: number): number {
  for (let end = ctx.size; end > from;) {
    const start = Math.max(from, end - 65536);
    const bytes = readAt(ctx.fd, start, end - start);
    for (let i = bytes.length - 1; i >= 0; i--) if (bytes[i] !== 0) return start + i;
    end = start;
  }
  return from - 1;
}

async function unlz4(ctx: Ctx): Promise<void> {
  let at = 0;
  while (at < ctx.size) {
    await checkStop(ctx);
    const where = `${ctx.options.input} at byte ${at}`;
    const magicBytes = readAt(ctx.fd, at, 8);
    if (magicBytes.length < 4) throw new Lz4FormatError(`${where}: trailing garbage after the last frame`);
    const mv = new DataView(magicBytes.buffer, magicBytes.byteOffset, magicBytes.length);
    const magic = mv.getUint32(0, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (magicBytes.length < 8) throw new Lz4FormatError(`${where}: truncated skippable frame`);
      at += 8 + mv.getUint32(4, true);
      continue;
    }
    const h = parseFrameHeader(readAt(ctx.fd, at, 19), where);
    at += h.headerLength;
    const hash = new Xxh32();
    let produced = 0n;
    // Blocks are gathered into one task while they fit its max size; dependent blocks must all go in one task
    // (each may refer to the 64 KiB before it, which the device only sees within a task).
    const max = ctx.compress.caps.maxBufSize;
    let groupStart = at, groupRoom = 0, groupBlocks = 0;
    const flush = async (end: number) => {
      if (groupBlocks === 0) return;
      const { r, bytes } = await inflateRange(ctx, groupStart, end - groupStart, groupRoom, "lz4", {
        blockChecksum: h.blockChecksum,
        independentBlocks: h.independentBlocks,
      });
      if (h.contentChecksum) hash.update(bytes);
      produced += BigInt(r.length);
      ctx.out.write(bytes);
      groupStart = end;
      groupRoom = 0;
      groupBlocks = 0;
      ctx.options.onProgress?.(end, ctx.size);
    };
    while (true) {
      await checkStop(ctx);
      const word = readAt(ctx.fd, at, 4);
      if (word.length < 4) throw new Lz4FormatError(`${ctx.options.input}: truncated LZ4 frame (no end mark)`);
      const value = new DataView(word.buffer, word.byteOffset, 4).getUint32(0, true);
      if (value === 0) break;
      const blockLength = 4 + (value & 0x7fffffff) + (h.blockChecksum ? 4 : 0);
      if ((value & 0x7fffffff) > h.blockMaxSize) throw new Lz4FormatError(`${where}: a block larger than the frame's block size`);
      if (at + blockLength > ctx.size) throw new Lz4FormatError(`${ctx.options.input}: truncated LZ4 block at byte ${at}`);
      if (h.independentBlocks && groupBlocks > 0 && (at + blockLength - groupStart > max || groupRoom + h.blockMaxSize > max)) await flush(at);
      groupRoom += h.blockMaxSize;
      groupBlocks++;
      at += blockLength;
    }
    await flush(at);
    at += 4; // end mark
    if (h.contentChecksum) {
      const sum = readAt(ctx.fd, at, 4);
      if (sum.length < 4) throw new Lz4FormatError(`${ctx.options.input}: truncated LZ4 content checksum`);
      const expected = new DataView(sum.buffer, sum.byteOffset, 4).getUint32(0, true);
      if (hash.digest() !== expected) throw new Lz4FormatError(`${where}: LZ4 content checksum mismatch`);
      at += 4;
    }
    if (h.contentSize !== undefined && h.contentSize !== produced) {
      throw new Lz4FormatError(`${where}: ${produced} bytes decompressed, the frame says ${h.contentSize}`);
    }
  }
}

function defaultOutput(input: string): string {
  for (const suffix of [".gz", ".lz4", ".tgz"]) {
    if (input.endsWith(suffix) && input.length > suffix.length) return input.slice(0, -suffix.length) + (suffix === ".tgz" ? ".tar" : "");
  }
  throw new UsageError(`cannot derive the output name from ${JSON.stringify(input)} (no .gz or .lz4 suffix): give -o`);
}

async function main(argv: string[]): Promise<number> {
  const command = parseTaskCommand(argv, FLAGS, HELP, "decompress", { positionals: true });
  if (command === undefined) return 0;
  const { values, positionals } = command;
  if (positionals.length !== 1) throw new UsageError(`expected one FILE to decompress, got ${positionals.length}`);
  const input = userPath(positionals[0]);
  const output = userPath(values.output ?? defaultOutput(positionals[0]));
  const progress = new Progress(values.json ? undefined : "decompress");
  const result = await decompressFile({
    input,
    output,
    force: values.force,
    pciAddr: values["pci-addr"],
    signal: stopOnSignals(),
    onProgress: (done, total) => progress.update(done, total),
  }).finally(() => progress.end());
  if (values.json) printJson(result);
  else {
    print(`decompress: ${positionals[0]}: ${result.format}, ${formatBytes(result.inputBytes)} → ${formatBytes(result.outputBytes)}, ` +
      `${result.tasks} task(s) on ${result.device}, ${formatRate(result.outputBytes, result.seconds)}`);
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
