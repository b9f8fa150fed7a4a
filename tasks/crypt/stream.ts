/**
 * Encrypting and decrypting a file in the format of tasks/crypt/format.ts with DOCA AES-GCM: chunks read in order,
 * a few sealed or opened at once on the device, written in order to a temporary file that is renamed onto the
 * output only when every chunk verified (AtomicFile: an interrupted or failed run leaves no output file).
 */
import { closeSync, fstatSync } from "node:fs";
import { openRegularFile, readFullyAt } from "../common/input-file.ts";
import { AesGcm, ProgressEngine } from "../../mod.ts";
import { openDeviceOf } from "../common/device.ts";
import { interruption } from "../common/interrupt.ts";
import { LoopTurns } from "../common/loop-turns.ts";
import { bytesPerSecond } from "../common/units.ts";
import { checkNewOutput } from "../transfer/output-name.ts";
import { writeOutput } from "../transfer/write-output.ts";
import { AAD_SIZE, chunkAad, chunkIv, HEADER_SIZE, type Header, makeHeader, parseHeader } from "./format.ts";
import { checkOptions, type OptionRules, PATH, PCI_ADDR_OPTION, PROGRESS_OPTION, SIGNAL_OPTION } from "../common/options-check.ts";

export interface CryptOptions {
  input: string;
  output: string;
  key: Uint8Array;
  pciAddr?: string;
  /** encrypt only: plaintext bytes per chunk */
  chunkSize?: number;
  signal?: AbortSignal;
  /** called after each chunk with the input bytes done so far */
  onProgress?: (done: number, total: number) => void;
}

export interface CryptResult {
  input: string;
  output: string;
  inputBytes: number;
  outputBytes: number;
  chunks: number;
  keyBits: number;
  chunkSize: number;
  seconds: number;
  /** the plaintext's size: encrypt's input, decrypt's output (what the summary line reports) */
  plaintextBytes: number;
  /** plaintextBytes over seconds: the rate the summary line prints */
  bytesPerSecond: number;
}

/** Chunks on the device at once. */
const WINDOW = 4;

async function withDevice<T>(options: CryptOptions, header: Header, run: (aes: AesGcm) => Promise<T>): Promise<T> {
  using device = openDeviceOf(options.pciAddr);
  const caps = AesGcm.caps(device);
  if (!caps.encrypt || !caps.decrypt) throw new Error(`AES-GCM is not available: ${AesGcm.unavailableReason() ?? "the device lacks it"}`);
  if (header.chunkSize + AAD_SIZE + header.tagSize > caps.maxBufSize) {
    throw new Error(`${options.input}: a chunk of ${header.chunkSize} bytes exceeds the device's AES-GCM buffer of ${caps.maxBufSize} bytes`);
  }
  using pe = new ProgressEngine();
  await using aes = new AesGcm(device, pe, { maxTasks: WINDOW });
  return await run(aes);
}

/** Runs `jobs` (each making one chunk's output) at most WINDOW at once, handing results to `write` in order. */
async function pipeline(count: number, job: (i: number) => Promise<Uint8Array>, write: (i: number, out: Uint8Array) => void, signal: AbortSignal | undefined, what: string): Promise<void> {
  const pending: Promise<Uint8Array>[] = [];
  let next = 0;
  const turns = new LoopTurns();
  try {
    for (let i = 0; i < count; i++) {
      while (next < count && pending.length < WINDOW) {
        const p = job(next++);
        // handled now: a chunk that fails while the loop gives the event loop its turn (below) is no unhandled
        // rejection (Deno ends the process on one); its error still comes from the await that reaches it
        p.catch(() => {});
        pending.push(p);
      }
      const out = await pending.shift()!;
      await turns.turn(); // the stop's turn of the event loop (common/loop-turns.ts)
      if (signal?.aborted) throw interruption(signal, what);
      write(i, out);
    }
  } finally {
    // whatever is still on the device settles before its context closes
    await Promise.allSettled(pending);
  }
}

/**
 * encryptFile's and decryptFile's options, checked at run time (plain JavaScript callers). The key is its bytes: a
 * string is refused, never read as key bytes nor as a key file's path.
 */
const CRYPT_OPTIONS: OptionRules = {
  input: PATH("-i/--input"),
  output: PATH("-o/--output"),
  key: {
    type: "bytes",
    required: true,
    hint: "the key itself, 16 or 32 bytes; a string (a key file's path, hex text) is not taken as a key: the CLI's " +
      "-k/--key reads a key file, a script reads it itself",
  },
  pciAddr: PCI_ADDR_OPTION,
  chunkSize: { type: "integer", flag: "--chunk-size" },
  signal: SIGNAL_OPTION,
  onProgress: PROGRESS_OPTION,
};

export async function encryptFile(options: CryptOptions): Promise<CryptResult> {
  checkOptions("encryptFile", options, CRYPT_OPTIONS);
  const t0 = performance.now();
  const keyBytes = options.key.length as 16 | 32;
  const header = makeHeader(keyBytes, options.chunkSize ?? 1024 * 1024);
  checkNewOutput(options.output, [options.input], "encrypt"); // before any work
  const fd = openRegularFile(options.input);
  try {
    const total = fstatSync(fd).size;
    const chunks = Math.floor(total / header.chunkSize) + 1; // the last one short (maybe empty)
    let written = 0;
    await writeOutput(options.output, "encrypt", async (out) => {
      out.writeAt(header.bytes, 0);
      written = HEADER_SIZE;
      await withDevice(options, header, async (aes) => {
        using key = aes.key(options.key);
        await pipeline(chunks, (i) => {
          const start = i * header.chunkSize;
          const plain = new Uint8Array(Math.min(header.chunkSize, total - start));
          if (readFullyAt(fd, plain, start) !== plain.length) throw new Error(`${options.input} changed while it was read`);
          return aes.seal(plain, { key, iv: chunkIv(header, i), tagSize: 16, aad: chunkAad(header, i, i === chunks - 1) });
        }, (i, sealed) => {
          out.writeAt(sealed, written);
          written += sealed.length;
          options.onProgress?.(Math.min(total, (i + 1) * header.chunkSize), total);
        }, options.signal, `encrypting ${options.input}`);
      });
    });
    return result(options, total, written, total, chunks, keyBytes, header.chunkSize, t0);
  } finally {
    closeSync(fd);
  }
}

export async function decryptFile(options: CryptOptions): Promise<CryptResult> {
  checkOptions("decryptFile", options, CRYPT_OPTIONS);
  const t0 = performance.now();
  checkNewOutput(options.output, [options.input], "decrypt"); // before any work
  const fd = openRegularFile(options.input);
  try {
    const total = fstatSync(fd).size;
    const head = new Uint8Array(HEADER_SIZE);
    const header = parseHeader(head.subarray(0, readFullyAt(fd, head, 0)), options.input);
    if (header.keyBytes !== options.key.length) {
      throw new Error(`${options.input} was encrypted with a ${header.keyBytes * 8}-bit key; the key given has ${options.key.length * 8} bits`);
    }
    const record = header.chunkSize + header.tagSize;
    const body = total - HEADER_SIZE;
    // every record but the last is full; the last is short (at least a tag): a file cut at a record boundary lacks it
    const chunks = Math.floor(body / record) + 1;
    const lastLength = body - (chunks - 1) * record;
    if (lastLength < header.tagSize) throw new Error(`${options.input} is truncated or damaged: its last record is ${lastLength} bytes`);
    let written = 0;
    await writeOutput(options.output, "decrypt", async (out) => {
      await withDevice(options, header, async (aes) => {
        using key = aes.key(options.key);
        await pipeline(chunks, (i) => {
          const sealed = new Uint8Array(i === chunks - 1 ? lastLength : record);
          if (readFullyAt(fd, sealed, HEADER_SIZE + i * record) !== sealed.length) throw new Error(`${options.input} changed while it was read`);
          return aes.open(sealed, { key, iv: chunkIv(header, i), tagSize: 16, aad: chunkAad(header, i, i === chunks - 1) }).catch((e) => {
            throw new Error(`${options.input}: chunk ${i} does not authenticate (wrong key, or the file was changed, reordered or cut): ${(e as Error).message}`);
          });
        }, (i, plain) => {
          out.writeAt(plain, written);
          written += plain.length;
          options.onProgress?.(HEADER_SIZE + Math.min(body, (i + 1) * record), total);
        }, options.signal, `decrypting ${options.input}`);
      });
    });
    return result(options, total, written, written, chunks, header.keyBytes, header.chunkSize, t0);
  } finally {
    closeSync(fd);
  }
}

function result(o: CryptOptions, inputBytes: number, outputBytes: number, plaintextBytes: number, chunks: number, keyBytes: number, chunkSize: number, t0: number): CryptResult {
  const seconds = (performance.now() - t0) / 1000;
  return {
    input: o.input,
    output: o.output,
    inputBytes,
    outputBytes,
    chunks,
    keyBits: keyBytes * 8,
    chunkSize,
    seconds,
    plaintextBytes,
    bytesPerSecond: bytesPerSecond(plaintextBytes, seconds),
  };
}
