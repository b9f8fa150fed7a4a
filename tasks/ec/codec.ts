/**
 * ec-encode / ec-recover: a file cut into N data blocks plus M redundancy blocks with DOCA erasure coding, and
 * rebuilt from any N of them.
 *
 * Layout: the file is read in stripes of N blocks of `blockSize` bytes (a multiple of 64, at most the device's max
 * block size; the last stripe zero-padded); block file k (k < N: data block k, else redundancy block k - N) is the
 * concatenation of block k of every stripe. The folder holds block-000 … block-(N+M-1) and manifest.json:
 *   { format: "doca-ts-ec", version: 1, matrix: "cauchy" | "vandermonde", dataBlocks, redundancyBlocks, blockSize,
 *     stripes, fileSize, sha256 (of the original), blocks: [{ index, file, sha256 }] }
 * Recovery checks each block file's SHA-256: a missing, short or changed block counts as lost. With at most M lost
 * it rebuilds the file stripe by stripe (DOCA recover tasks) and checks the original's SHA-256 before the output
 * appears (temporary file, then rename). The encode folder also appears only when complete.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { EC_BLOCK_ALIGN, ErasureCoding, type MatrixType, ProgressEngine } from "../../mod.ts";
import { openDeviceOf } from "../common/device.ts";
import { UsageError } from "../common/cli.ts";
import { LoopTurns } from "../common/loop-turns.ts";
import { bytesPerSecond } from "../common/units.ts";
import { interruption, onForcedExit } from "../common/interrupt.ts";
import { openRegularFile, readFullyAt, readSmallRegularFile } from "../common/input-file.ts";
import { checkTargetFolder, sweepStaleTemporaries, temporaryName, wordingFor } from "../transfer/atomic-file.ts";
import { checkNewOutput } from "../transfer/output-name.ts";
import { writeOutput } from "../transfer/write-output.ts";
import { rethrowMissingPermission } from "../common/permission.ts";
import { checkOptions, DEVICE_FILE_OPTIONS, type OptionRules, PATH } from "../common/options-check.ts";
import { writeFailure } from "../common/write-failure.ts";

export const MANIFEST = "manifest.json";
const FORMAT = "doca-ts-ec";

export interface Manifest {
  format: string;
  version: number;
  matrix: MatrixType;
  dataBlocks: number;
  redundancyBlocks: number;
  blockSize: number;
  stripes: number;
  fileSize: number;
  sha256: string;
  blocks: { index: number; file: string; sha256: string }[];
}

export interface EncodeOptions {
  input: string;
  outputDir: string;
  dataBlocks: number;
  redundancyBlocks: number;
  matrix?: MatrixType;
  /** bytes per block per stripe; default: the whole file in one stripe when it fits the device, else the max */
  blockSize?: number;
  pciAddr?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

export interface RecoverOptions {
  inputDir: string;
  output: string;
  pciAddr?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

const blockName = (k: number) => `block-${String(k).padStart(3, "0")}`;
const sha = () => createHash("sha256");

function roundUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** ecEncode's and ecRecover's options, checked at run time (plain JavaScript callers). */
const ENCODE_OPTIONS: OptionRules = {
  input: PATH("-i/--input"),
  outputDir: PATH("-o/--output"),
  dataBlocks: { type: "integer", required: true, flag: "-n/--data-blocks" },
  redundancyBlocks: { type: "integer", required: true, flag: "-m/--redundancy-blocks" },
  matrix: { type: ["cauchy", "vandermonde"], flag: "--matrix" },
  blockSize: { type: "integer", flag: "--block-size" },
  ...DEVICE_FILE_OPTIONS,
};
const RECOVER_OPTIONS: OptionRules = {
  inputDir: PATH("-i/--input"),
  output: PATH("-o/--output"),
  ...DEVICE_FILE_OPTIONS,
};

/** The time a run took, and the file's bytes over it (`bytesPerSecond`, the rate ec-encode's and ec-recover's lines print). */
export interface EcTiming {
  seconds: number;
  bytesPerSecond: number;
}

function timing(fileSize: number, t0: number): EcTiming {
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, bytesPerSecond: bytesPerSecond(fileSize, seconds) };
}

export async function ecEncode(o: EncodeOptions): Promise<Manifest & EcTiming> {
  checkOptions("ecEncode", o, ENCODE_OPTIONS);
  const t0 = performance.now();
  const n = o.dataBlocks, m = o.redundancyBlocks;
  // taken (a dangling symbolic link too), a missing or read-only folder: said before any work
  checkTargetFolder(o.outputDir, undefined, o.outputDir, wordingFor("ec-encode"));
  using device = openDeviceOf(o.pciAddr);
  const caps = ErasureCoding.caps(device);
  if (!caps.create) throw new Error("this DOCA or device has no erasure coding (libdoca_erasure_coding)");
  const fd = openRegularFile(o.input);
  // the folder is built under a temporary name beside the target and renamed when complete
  sweepStaleTemporaries(dirname(o.outputDir), "ec-encode");
  const temp = join(dirname(o.outputDir), temporaryName(o.outputDir)); // .DIR.doca-ts-PID-RANDOM.part: swept if killed
  const forget = onForcedExit(() => rmSync(temp, { recursive: true, force: true }));
  try {
    const fileSize = fstatSync(fd).size;
    const blockSize = o.blockSize ?? Math.min(caps.maxBlockSize, Math.max(EC_BLOCK_ALIGN, roundUp(Math.ceil(fileSize / n), EC_BLOCK_ALIGN)));
    if (blockSize % EC_BLOCK_ALIGN !== 0 || blockSize > caps.maxBlockSize) {
      throw new UsageError(`--block-size: ${blockSize} must be a multiple of ${EC_BLOCK_ALIGN} up to ${caps.maxBlockSize} (this device's max block size)`);
    }
    const stripes = Math.max(1, Math.ceil(fileSize / (n * blockSize)));
    mkdirSync(temp, { mode: 0o755 });
    const fds = Array.from({ length: n + m }, (_, k) => openSync(join(temp, blockName(k)), "wx", 0o644));
    const hashes = Array.from({ length: n + m }, sha);
    const whole = sha();
    try {
      using pe = new ProgressEngine();
      await using ec = new ErasureCoding(device, pe, { maxTasks: 4 });
      using coding = ec.matrix(o.matrix ?? "cauchy", n, m);
      const stripe = new Uint8Array(n * blockSize);
      const turns = new LoopTurns();
      for (let s = 0; s < stripes; s++) {
        // A task's completion can resolve within the same turn: give the event loop a turn every few ms, so a
        // signal stops the encode instead of waiting for its end (common/loop-turns.ts)
        await turns.turn();
        if (o.signal?.aborted) throw interruption(o.signal, `encoding ${o.input}`);
        stripe.fill(0);
        const got = readFullyAt(fd, stripe, s * n * blockSize);
        whole.update(stripe.subarray(0, got));
        const parity = await ec.encode(coding, stripe);
        for (let k = 0; k < n + m; k++) {
          const block = k < n ? stripe.subarray(k * blockSize, (k + 1) * blockSize) : parity.subarray((k - n) * blockSize, (k - n + 1) * blockSize);
          try {
            writeSync(fds[k], block);
          } catch (e) {
            throw writeFailure(e, o.outputDir, `writing ${blockName(k)}`, "nothing was left under that name");
          }
          hashes[k].update(block);
        }
        o.onProgress?.(Math.min(fileSize, (s + 1) * n * blockSize), fileSize);
      }
    } finally {
      for (const f of fds) closeSync(f);
    }
    const manifest: Manifest = {
      format: FORMAT,
      version: 1,
      matrix: o.matrix ?? "cauchy",
      dataBlocks: n,
      redundancyBlocks: m,
      blockSize,
      stripes,
      fileSize,
      sha256: whole.digest("hex"),
      blocks: hashes.map((h, index) => ({ index, file: blockName(index), sha256: h.digest("hex") })),
    };
    try {
      writeFileSync(join(temp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { flag: "wx" });
    } catch (e) {
      throw writeFailure(e, o.outputDir, `writing ${MANIFEST}`, "nothing was left under that name");
    }
    if (existsSync(o.outputDir)) throw new Error(`${o.outputDir} appeared meanwhile: not replacing it`);
    renameSync(temp, o.outputDir);
    return { ...manifest, ...timing(manifest.fileSize, t0) };
  } catch (e) {
    rmSync(temp, { recursive: true, force: true });
    throw e;
  } finally {
    forget();
    closeSync(fd);
  }
}

/** A manifest is a few KiB even for 256 blocks: a larger file (or /dev/zero behind a link) is refused unread. */
export const MANIFEST_MAX_BYTES = 16 * 2 ** 20;

/** What is wrong with a parsed manifest (the field and why), or undefined when every field holds. */
function manifestProblem(m: Manifest): string | undefined {
  if (m === null || typeof m !== "object" || Array.isArray(m)) return "it is not a JSON object";
  const int = (v: unknown, min: number, max: number) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
  const shown = (v: unknown) => JSON.stringify(v) ?? String(v);
  if (m.format !== FORMAT) return `"format" is ${shown(m.format)}, not "${FORMAT}"`;
  if (m.version !== 1) return `"version" ${shown(m.version)} is not supported (only 1)`;
  if (m.matrix !== "cauchy" && m.matrix !== "vandermonde") return `"matrix" ${shown(m.matrix)} is neither "cauchy" nor "vandermonde"`;
  if (!int(m.dataBlocks, 1, 255)) return `"dataBlocks" ${shown(m.dataBlocks)} is not a whole number from 1 to 255`;
  if (!int(m.redundancyBlocks, 1, 255)) return `"redundancyBlocks" ${shown(m.redundancyBlocks)} is not a whole number from 1 to 255`;
  if (m.dataBlocks + m.redundancyBlocks > 256) return `"dataBlocks" + "redundancyBlocks" is ${m.dataBlocks + m.redundancyBlocks}, more than 256`;
  if (!int(m.blockSize, EC_BLOCK_ALIGN, 2 ** 30) || m.blockSize % EC_BLOCK_ALIGN !== 0) {
    return `"blockSize" ${shown(m.blockSize)} is not a multiple of ${EC_BLOCK_ALIGN} up to 1 GiB`;
  }
  if (!int(m.fileSize, 0, Number.MAX_SAFE_INTEGER)) return `"fileSize" ${shown(m.fileSize)} is not a whole number of bytes`;
  // ec-encode writes as many stripes as the file needs (one for an empty file): any other count is not its geometry
  const stripes = Math.max(1, Math.ceil(m.fileSize / (m.dataBlocks * m.blockSize)));
  if (m.stripes !== stripes) {
    return `"stripes" ${shown(m.stripes)} does not fit the geometry: a file of ${m.fileSize} bytes in ${m.dataBlocks} data blocks ` +
      `of ${m.blockSize} bytes takes ${stripes} stripe${stripes === 1 ? "" : "s"}`;
  }
  if (typeof m.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(m.sha256)) return `"sha256" is not 64 lowercase hex digits`;
  if (!Array.isArray(m.blocks)) return `"blocks" is not a list`;
  const count = m.dataBlocks + m.redundancyBlocks;
  if (m.blocks.length !== count) return `"blocks" lists ${m.blocks.length} blocks, not dataBlocks + redundancyBlocks = ${count}`;
  const files = new Map<unknown, number>(), indexes = new Map<unknown, number>();
  for (const [k, b] of m.blocks.entries()) {
    const entry = `"blocks"[${k}]`;
    if (b === null || typeof b !== "object") return `${entry} is not an object`;
    if (indexes.has(b.index)) return `${entry} repeats the index ${shown(b.index)} of "blocks"[${indexes.get(b.index)}]`;
    indexes.set(b.index, k);
    if (files.has(b.file)) return `${entry} repeats the file ${shown(b.file)} of "blocks"[${files.get(b.file)}]`;
    files.set(b.file, k);
    if (b.index !== k) return `${entry} has index ${shown(b.index)}: the blocks are listed in order, so it must be ${k}`;
    if (typeof b.file === "string" && (b.file.includes("/") || b.file === ".." || b.file === ".")) {
      return `${entry}'s file ${shown(b.file)} is a path, not a name inside the folder (a manifest never points outside it)`;
    }
    if (b.file !== blockName(k)) return `${entry}'s file ${shown(b.file)} is not ${shown(blockName(k))}, its name in ec-encode's layout`;
    if (typeof b.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(b.sha256)) return `${entry}'s "sha256" is not 64 lowercase hex digits`;
  }
  return undefined;
}

/** The manifest of a folder, every field checked (an Error naming what is wrong). */
export function readManifest(dir: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(readSmallRegularFile(join(dir, MANIFEST), MANIFEST_MAX_BYTES)));
  } catch (e) {
    rethrowMissingPermission(e);
    throw new Error(`cannot read ${join(dir, MANIFEST)}: ${(e as Error).message}`);
  }
  const why = manifestProblem(m);
  if (why !== undefined) throw new Error(`${join(dir, MANIFEST)} is not a valid ${FORMAT} manifest: ${why}`);
  return m;
}

/** SHA-256 of a block file; "missing" when it cannot be opened; its size when that is not its expected length. */
function blockDigest(path: string, length: number): string | "missing" | number {
  let fd: number;
  try {
    fd = openRegularFile(path);
  } catch {
    return "missing";
  }
  try {
    const size = fstatSync(fd).size;
    if (size !== length) return size;
    const h = sha(), buf = new Uint8Array(1 << 20);
    for (let at = 0; at < length;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, length - at), at);
      if (n === 0) return at;
      h.update(buf.subarray(0, n));
      at += n;
    }
    return h.digest("hex");
  } finally {
    closeSync(fd);
  }
}

/** The files of an ec-encode folder ec-recover reads: manifest.json and block-NNN (none when it cannot be listed). */
function ecInputs(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((name) => name === MANIFEST || /^block-\d{3,}$/.test(name)).map((name) => join(dir, name));
}

export async function ecRecover(o: RecoverOptions): Promise<{ manifest: Manifest; lost: number[]; recovered: boolean } & EcTiming> {
  checkOptions("ecRecover", o, RECOVER_OPTIONS);
  const t0 = performance.now();
  // the manifest and the block files are its inputs: an output among them is refused first (usage error)
  checkNewOutput(o.output, ecInputs(o.inputDir), "ec-recover"); // before the blocks are read
  const man = readManifest(o.inputDir);
  const n = man.dataBlocks, m = man.redundancyBlocks, bs = man.blockSize;
  const length = man.stripes * bs;
  const found = man.blocks.map((b) => blockDigest(join(o.inputDir, b.file), length));
  const lost = man.blocks.filter((b, k) => found[k] !== b.sha256).map((b) => b.index);
  const sizes = [...new Set(found.filter((f) => typeof f === "number"))];
  if (lost.length > m && sizes.length === 1 && found.every((f) => typeof f === "number" || f === "missing")) {
    // Every block present has one same length, not the one the manifest gives: its geometry is what is wrong
    throw new Error(`${join(o.inputDir, MANIFEST)} does not fit its blocks: "stripes" ${man.stripes} × "blockSize" ${bs} makes ` +
      `every block ${length} bytes, but the blocks present hold ${sizes[0]} bytes each (the manifest was changed, or belongs ` +
      `to other blocks)`);
  }
  if (lost.length > m) {
    throw new Error(`${lost.length} of ${n + m} blocks are missing or damaged (${lost.map(blockName).join(", ")}); at most ${m} can be rebuilt`);
  }
  const lostData = lost.filter((k) => k < n);
  const fds = new Map<number, number>();
  try {
    await writeOutput(o.output, "ec-recover", async (out) => {
      const whole = sha();
      const wanted = [...Array(n + m).keys()].filter((k) => !lost.includes(k)).slice(0, n);
      for (const k of wanted) fds.set(k, openRegularFile(join(o.inputDir, blockName(k))));
      const run = async (recover: (available: Uint8Array) => Promise<Uint8Array>) => {
        const available = new Uint8Array(n * bs);
        const stripe = new Uint8Array(n * bs);
        const turns = new LoopTurns();
        for (let s = 0; s < man.stripes; s++) {
          await turns.turn(); // as in the encode: signals get a turn
          if (o.signal?.aborted) throw interruption(o.signal, `rebuilding ${o.output}`);
          wanted.forEach((k, i) => {
            if (readFullyAt(fds.get(k)!, available.subarray(i * bs, (i + 1) * bs), s * bs) !== bs) throw new Error(`${blockName(k)} changed while it was read`);
          });
          if (lostData.length === 0) stripe.set(available);
          else {
            const rebuilt = await recover(available);
            // the available data blocks in place, the rebuilt ones where they were lost
            wanted.forEach((k, i) => k < n && stripe.set(available.subarray(i * bs, (i + 1) * bs), k * bs));
            lost.forEach((k, i) => k < n && stripe.set(rebuilt.subarray(i * bs, (i + 1) * bs), k * bs));
          }
          const keep = Math.min(n * bs, man.fileSize - s * n * bs);
          const part = stripe.subarray(0, Math.max(0, keep));
          out.writeAt(part, s * n * bs);
          whole.update(part);
          o.onProgress?.(Math.min(man.fileSize, (s + 1) * n * bs), man.fileSize);
        }
      };
      if (lostData.length === 0) {
        await run(() => Promise.reject(new Error("unreachable")));
      } else {
        using device = openDeviceOf(o.pciAddr);
        if (!ErasureCoding.caps(device).recover) throw new Error("this DOCA or device has no erasure coding (libdoca_erasure_coding)");
        using pe = new ProgressEngine();
        await using ec = new ErasureCoding(device, pe, { maxTasks: 4 });
        using coding = ec.matrix(man.matrix, n, m);
        using rec = coding.recoverMatrix(lost);
        await run((available) => ec.recoverBlocks(rec, available));
      }
      const digest = whole.digest("hex");
      if (digest !== man.sha256) throw new Error(`the rebuilt file's SHA-256 ${digest} is not the original's ${man.sha256}`);
    });
  } finally {
    for (const f of fds.values()) closeSync(f);
  }
  return { manifest: man, lost, recovered: lostData.length > 0, ...timing(man.fileSize, t0) };
}
