#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * compress: a file into a gzip-compatible file, the deflate done by DOCA Compress (raw deflate from the device,
 * wrapped in gzip members by tasks/accel/gzip.ts). gunzip (and `decompress`) read the result.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { closeSync, fstatSync, readSync } from "node:fs";
import process from "node:process";
import { Compress, ProgressEngine } from "../mod.ts";
import { positiveInt, UsageError } from "./common/cli.ts";
import { openDeviceOf } from "./common/device.ts";
import { openRegularFile } from "./common/input-file.ts";
import { interruption, STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { LoopTurns } from "./common/loop-turns.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { userPath } from "./common/user-path.ts";
import { bytesPerSecond, formatBytes, formatRate } from "./common/units.ts";
import { EMPTY_DEFLATE, memberHeader, memberTrailer } from "./accel/gzip.ts";
import { checkFileToFile, FILE_TO_FILE_OPTIONS, OutputFile } from "./accel/output-file.ts";
import { Progress } from "./accel/progress.ts";
import { Staging } from "./accel/staging.ts";
import { parseTaskCommand, taskFlags } from "./common/task-flags.ts";
import { DEVICE_FILE_OPTIONS, type OptionRules } from "./common/options-check.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags({}, "output", "force", "chunk-size", "pci-addr", "json", "version", "help");

const HELP = `Usage: compress FILE [-o OUTPUT] [-f] [--chunk-size BYTES] [-p PCI] [--json]

Compresses FILE with DOCA Compress (deflate) into a gzip-compatible file that gunzip reads: one gzip member per
chunk, each the device's raw deflate with a gzip header and the CRC-32 the device computed. The output appears under
its name only when complete (a hidden temporary file beside it until then); a failure or a stop removes it.
DOCA has no LZ4 compress task: LZ4 is decompress-only (see decompress).
  -o, --output FILE       where to write (default FILE.gz); an existing file is refused unless -f
  -f, --force             replace an existing output file
      --chunk-size BYTES  input bytes per deflate task (default 1048576; at most the device's max buffer size)
  -p, --pci-addr PCI      device (default: the first one found)
      --json              print the result as one JSON object
      --version           print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help              this text
No peer and no waits but the device's tasks (a context start of 10 s at most).
Exit status 0, 1 on any error (unreadable input, device without deflate), 2 for bad flags, ${STOPPED_STATUSES}.`;

export interface CompressFileOptions {
  input: string;
  output: string;
  force?: boolean;
  chunkSize?: number;
  pciAddr?: string;
  signal?: AbortSignal;
  /** Called after each chunk with the input bytes done so far. */
  onProgress?: (done: number, total: number) => void;
}

export interface CompressFileResult {
  device: string;
  input: string;
  output: string;
  inputBytes: number;
  outputBytes: number;
  members: number;
  seconds: number;
  /** inputBytes (the uncompressed data) over seconds: the rate the summary line prints */
  bytesPerSecond: number;
}

/** compressFile's options, checked at run time (plain JavaScript callers). */
const COMPRESS_OPTIONS: OptionRules = {
  ...FILE_TO_FILE_OPTIONS,
  chunkSize: { type: "integer", flag: "--chunk-size" },
  ...DEVICE_FILE_OPTIONS,
};

/** Compresses options.input into options.output (gzip members of device deflate). */
export async function compressFile(options: CompressFileOptions): Promise<CompressFileResult> {
  const t0 = performance.now();
  checkFileToFile("compressFile", options, COMPRESS_OPTIONS);
  using device = openDeviceOf(options.pciAddr);
  using pe = new ProgressEngine();
  await using compress = await Compress.open(device, pe, { maxTasks: 2 });
  if (!compress.caps.compressDeflate) throw new Error(`device ${device.info.pciAddr} cannot deflate (${compress.caps.missingReason ?? "no compress deflate task"})`);
  if (options.chunkSize !== undefined && options.chunkSize > compress.caps.maxBufSize) {
    // said, not clamped: the user asked for a size this device cannot take
    throw new UsageError(`--chunk-size ${options.chunkSize} is more than device ${device.info.pciAddr} takes in one task (${compress.caps.maxBufSize} bytes)`);
  }
  const chunk = Math.min(options.chunkSize ?? 1 << 20, compress.caps.maxBufSize);
  using staging = new Staging(device);
  const fd = openRegularFile(options.input);
  let out: OutputFile | undefined;
  try {
    const total = fstatSync(fd).size;
    out = OutputFile.create(options.output, options.output, options.force, "compress");
    let done = 0, members = 0;
    staging.src.ensure(chunk);
    // Deflate output can exceed its input a little (stored blocks): room for that, as zlib's deflateBound says.
    const room = chunk + (chunk >> 10) + 1024;
    staging.dst.ensure(room);
    const turns = new LoopTurns();
    while (true) {
      await turns.turn(); // the stop's turn of the event loop (common/loop-turns.ts)
      if (options.signal?.aborted) throw interruption(options.signal, `compressing ${options.input}`);
      const n = readSync(fd, staging.src.bytes, 0, chunk, done);
      if (n === 0 && done > 0) break;
      if (n === 0) {
        // An empty file: one member holding the empty deflate stream (no device task has nothing to read).
        out.write(memberHeader(EMPTY_DEFLATE.length, true), EMPTY_DEFLATE, memberTrailer(0, 0));
        members++;
        break;
      }
      // the member that reaches the size the file had at the start is marked last: a copy cut short is detected
      const last = n < chunk || done + n >= total;
      const src = staging.src.data(staging.inventory, n);
      const dst = staging.dst.room(staging.inventory, room);
      try {
        const r = await compress.compressDeflate(src, dst);
        out.write(memberHeader(r.length, last), staging.dst.bytes.subarray(0, r.length), memberTrailer(r.crc32, n));
      } finally {
        src.closeSync();
        dst.closeSync();
      }
      members++;
      done += n;
      options.onProgress?.(done, total);
      if (last) break;
    }
    out.commit();
    const seconds = (performance.now() - t0) / 1000;
    return {
      device: device.info.pciAddr,
      input: options.input,
      output: options.output,
      inputBytes: done,
      outputBytes: out.length,
      members,
      seconds,
      bytesPerSecond: bytesPerSecond(done, seconds),
    };
  } catch (e) {
    out?.abort();
    throw e;
  } finally {
    closeSync(fd);
  }
}

async function main(argv: string[]): Promise<number> {
  const command = parseTaskCommand(argv, FLAGS, HELP, "compress", { positionals: true });
  if (command === undefined) return 0;
  const { values, positionals } = command;
  if (positionals.length !== 1) throw new UsageError(`expected one FILE to compress, got ${positionals.length}`);
  const chunkSize = values["chunk-size"] === undefined ? undefined : positiveInt(values["chunk-size"], "--chunk-size", 2 ** 31);
  const input = userPath(positionals[0]);
  const output = userPath(values.output ?? `${positionals[0]}.gz`);
  const signal = stopOnSignals();
  const progress = new Progress(values.json ? undefined : "compress");
  const result = await compressFile({
    input,
    output,
    force: values.force,
    chunkSize,
    pciAddr: values["pci-addr"],
    signal,
    onProgress: (done, total) => progress.update(done, total),
  }).finally(() => progress.end());
  if (values.json) printJson(result);
  else {
    const ratio = result.inputBytes ? ((100 * result.outputBytes) / result.inputBytes).toFixed(1) : "-";
    print(`compress: ${positionals[0]}: ${formatBytes(result.inputBytes)} → ${formatBytes(result.outputBytes)} (${ratio} %), ` +
      `${result.members} deflate task(s) on ${result.device}, ${formatRate(result.inputBytes, result.seconds)}`);
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
