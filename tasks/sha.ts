#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * sha: digests of files computed by DOCA SHA, printed the way sha1sum / sha256sum / sha512sum print them (so
 * `sha256sum -c` reads the output), and --check FILE to verify such a list. A file of more than one part is streamed
 * through a partial hash session (whole blocks per part, the last part final); a smaller one takes one hash task.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { closeSync, fstatSync, readSync } from "node:fs";
import process from "node:process";
import { type Device, ProgressEngine, Sha, type ShaAlgorithmName } from "../mod.ts";
import { positiveInt, UsageError } from "./common/cli.ts";
import { NotRegularFileError, openRegularFile } from "./common/input-file.ts";
import { openDeviceOf } from "./common/device.ts";
import { InterruptedError, interruption, STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printError, printJson, writeData } from "./common/output.ts";
import { isMissingPermission } from "./common/permission.ts";
import { userPath } from "./common/user-path.ts";
import { OutputFile } from "./accel/output-file.ts";
import { Progress } from "./accel/progress.ts";
import { clearStatusLine } from "./common/status-line.ts";
import { Staging } from "./accel/staging.ts";
import { LoopTurns } from "./common/loop-turns.ts";
import { checkedName, listLine, parseListLine, readListLines } from "./accel/checksum-list.ts";
import { parseTaskCommand, taskFlags } from "./common/task-flags.ts";

export const FLAGS = taskFlags(
  {
    algorithm: { type: "string", short: "a" },
    check: { type: "string", short: "c" },
    "part-size": { type: "string" },
  },
  "output", "force", "pci-addr", "json", "version", "help",
);

const HELP = `Usage: sha [-a sha1|sha256|sha512] FILE... [-o LIST] [-f] [--part-size BYTES] [-p PCI] [--json]
       sha [-a ALGORITHM] --check LIST [-p PCI] [--json]

Prints "DIGEST  FILE" per FILE, the digests computed by DOCA SHA, exactly as sha256sum (sha1sum, sha512sum) prints
them, so \`sha256sum -c\` verifies the list. A FILE that cannot be read is named on stderr ("sha: FILE: No such
file or directory") and the others are still hashed and listed, as sha256sum does (exit 1; with --output the
incomplete list is not written). A file larger than one part is streamed through a DOCA partial hash.
  -a, --algorithm NAME    sha1, sha256 (default) or sha512
  -c, --check LIST        read "DIGEST  FILE" lines from LIST (sha256sum's format: " *FILE", escaped names, tag
                          lines, CRLF) and verify each file: prints "FILE: OK", "FILE: FAILED" or "FILE: FAILED
                          open or read" (a name as sha256sum -c prints it; one holding a control character escaped
                          with a leading backslash, \\\\ \\n \\r \\t \\xHH) and goes on; exit 1 if any failed, could not be
                          read, or a line is malformed. LIST must be a regular file
  -o, --output LIST       write the list to LIST instead of stdout (appears only when complete); refused if it
                          exists, unless -f
  -f, --force             replace an existing LIST
      --part-size BYTES   bytes per partial-hash part (default 1048576; rounded down to whole blocks)
  -p, --pci-addr PCI      device (default: the first one found)
      --json              print the results as one JSON object
      --version           print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help              this text
No peer and no waits but the device's tasks (a context start of 10 s at most).
Exit status 0, 1 on any error or failed check, 2 for bad flags, ${STOPPED_STATUSES}.`;

export interface FileDigest {
  file: string;
  digest: string;
  bytes: number;
}

/** One device, engine, SHA context and staging memory for digesting many files. */
export class FileHasher {
  readonly #device: Device;
  readonly #pe: ProgressEngine;
  readonly #sha: Sha;
  readonly #staging: Staging;
  readonly #partSize: number;
  /** one for every file of the run: many small files are a loop of device tasks too */
  readonly #turns = new LoopTurns();

  private constructor(device: Device, pe: ProgressEngine, sha: Sha, partSize: number) {
    this.#device = device;
    this.#pe = pe;
    this.#sha = sha;
    this.#staging = new Staging(device);
    this.#partSize = partSize;
  }

  static async open(pciAddr?: string, partSize = 1 << 20): Promise<FileHasher> {
    const device = openDeviceOf(pciAddr);
    const pe = new ProgressEngine();
    try {
      const sha = await Sha.open(device, pe, { maxTasks: 1, maxSessions: 1 });
      const block = 128; // a multiple of every algorithm's block size
      const part = Math.max(block, Math.floor(Math.min(partSize, sha.caps.maxSrcBufSize) / block) * block);
      return new FileHasher(device, pe, sha, part);
    } catch (e) {
      pe.close();
      device.close();
      throw e;
    }
  }

  get device(): string {
    return this.#device.info.pciAddr;
  }

  /** The hex digest of a file. */
  async digest(path: string, algorithm: ShaAlgorithmName, signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<FileDigest> {
    const fd = openRegularFile(path);
    try {
      const total = fstatSync(fd).size;
      const { src, dst, inventory } = this.#staging;
      const length = this.#sha.caps.digestLength[algorithm];
      src.ensure(this.#partSize);
      const read = (position: number) => {
        let done = 0;
        while (done < this.#partSize) {
          const n = readSync(fd, src.bytes, done, this.#partSize - done, position + done);
          if (n === 0) break;
          done += n;
        }
        return done;
      };
      const out = dst.room(inventory, 64);
      try {
        await this.#turns.turn();
        if (signal?.aborted) throw interruption(signal, `hashing ${path}`);
        let n = read(0);
        if (n < this.#partSize) {
          // One part: a hash task (DOCA leaves a partial session's first part being its final one undefined)
          const s = src.data(inventory, n);
          try {
            await this.#sha.hash(algorithm, s, out);
          } finally {
            s.closeSync();
          }
        } else {
          using session = this.#sha.partial(algorithm, out);
          let position = 0;
          while (true) {
            await this.#turns.turn(); // the stop's turn of the event loop (common/loop-turns.ts)
            if (signal?.aborted) throw interruption(signal, `hashing ${path}`);
            const s = src.data(inventory, n);
            // The last part is the one after which nothing is left (a whole part when the size is a multiple)
            const next = position + n;
            const last = n < this.#partSize || next === total;
            try {
              if (last) await session.final(s);
              else await session.update(s);
            } finally {
              s.closeSync();
            }
            onProgress?.(next, total);
            if (last) break;
            position = next;
            n = read(position);
            if (n === 0) throw new Error(`${path} shrank while it was read`);
          }
        }
        const hex = Array.from(dst.bytes.subarray(0, length), (b) => b.toString(16).padStart(2, "0")).join("");
        return { file: path, digest: hex, bytes: total };
      } finally {
        out.closeSync();
      }
    } finally {
      closeSync(fd);
    }
  }

  async close(): Promise<void> {
    this.#staging[Symbol.dispose]();
    await this.#sha.close();
    this.#pe.close();
    this.#device.close();
  }
}

export { listLine, parseListLine };

function algorithmOf(value: string | undefined): ShaAlgorithmName {
  const name = value ?? "sha256";
  if (name !== "sha1" && name !== "sha256" && name !== "sha512") {
    throw new UsageError(`--algorithm: expected sha1, sha256 or sha512, got ${JSON.stringify(name)}`);
  }
  return name;
}

const HEX_LENGTH: Record<ShaAlgorithmName, number> = { sha1: 40, sha256: 64, sha512: 128 };

async function main(argv: string[]): Promise<number> {
  const command = parseTaskCommand(argv, FLAGS, HELP, "sha", { positionals: true });
  if (command === undefined) return 0;
  const { values, positionals } = command;
  const algorithm = algorithmOf(values.algorithm);
  const partSize = values["part-size"] === undefined ? undefined : positiveInt(values["part-size"], "--part-size", 2 ** 30);
  if (values.check !== undefined && positionals.length > 0) throw new UsageError("--check takes the files from its list: give no FILE");
  if (values.check !== undefined && values.output !== undefined) throw new UsageError("--output lists digests: not with --check");
  if (values.check === undefined && positionals.length === 0) throw new UsageError("expected at least one FILE (or --check LIST)");
  if (values.force && values.output === undefined) throw new UsageError("--force replaces the --output file: give --output");
  // a taken --output name is said before any hashing, not after it
  if (values.output !== undefined) {
    const inputs = positionals.map((name) => ({ path: userPath(name), shownAs: name }));
    OutputFile.checkFree(userPath(values.output), values.output, values.force, undefined, inputs);
  }
  const signal = stopOnSignals();
  const hasher = await FileHasher.open(values["pci-addr"], partSize);
  try {
    if (values.check !== undefined) return await check(hasher, algorithm, values.check, values.json === true, signal);
    const progress = new Progress(values.json ? undefined : "sha");
    const results: FileDigest[] = [];
    // As sha256sum: a file that cannot be read is named on stderr and the others are still hashed (exit 1 at the end)
    const unreadable: { file: string; reason: string }[] = [];
    try {
      for (const name of positionals) {
        try {
          results.push({ ...(await hasher.digest(userPath(name), algorithm, signal, (d, t) => progress.update(d, t))), file: name });
        } catch (e) {
          if (e instanceof InterruptedError || isMissingPermission(e) || !isFileProblem(e)) throw e; // the device's failure ends the run
          const reason = e instanceof NotRegularFileError ? e.message : whyUnreadable(e);
          unreadable.push({ file: name, reason });
          if (!values.json) {
            clearStatusLine(); // the message starts on a clean line
            printError(e instanceof NotRegularFileError ? `sha: ${reason}` : `sha: ${checkedName(name)}: ${reason}`);
          }
        }
      }
    } finally {
      progress.end();
    }
    if (unreadable.length > 0 && values.output !== undefined) {
      // --output appears only when complete: an incomplete list is not written
      printError(`sha: ${values.output} not written: ${unreadable.length} file${unreadable.length > 1 ? "s" : ""} could not be read`);
      return 1;
    }
    const text = results.map((r) => listLine(r.digest, r.file) + "\n").join("");
    if (values.output !== undefined) {
      const out = OutputFile.create(userPath(values.output), values.output, values.force, "sha");
      try {
        out.write(new TextEncoder().encode(text));
        out.commit();
      } catch (e) {
        out.abort();
        throw e;
      }
    }
    if (values.json) printJson({ device: hasher.device, algorithm, files: results, unreadable });
    else if (values.output === undefined && results.length > 0) writeData(text); // raw: sha256sum's own escaping, byte for byte
    return unreadable.length > 0 ? 1 : 0;
  } finally {
    await hasher.close();
  }
}

/** An error of opening or reading the file itself (not of the device): the others are still hashed. */
function isFileProblem(e: unknown): boolean {
  if (e instanceof NotRegularFileError) return true;
  return ((e as Error).cause as NodeJS.ErrnoException | undefined)?.code !== undefined || (e as NodeJS.ErrnoException).code !== undefined;
}

/** Why a listed file could not be hashed, without repeating its (possibly hostile) name. */
function whyUnreadable(e: unknown): string {
  if (e instanceof NotRegularFileError) return "not a regular file";
  const code = ((e as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "No such file or directory";
  if (code === "EACCES") return "Permission denied";
  return code ?? "read error";
}

async function check(hasher: FileHasher, algorithm: ShaAlgorithmName, list: string, json: boolean, signal: AbortSignal): Promise<number> {
  const results: { file: string; status: "OK" | "FAILED" | "UNREADABLE" }[] = [];
  let malformed = 0;
  // Line by line (bounded memory); the list itself must be a regular file (a FIFO would block, /dev/zero never ends)
  for (const line of readListLines(userPath(list), list)) {
    if (signal.aborted) throw interruption(signal, `checking ${list}`);
    if (line.text === undefined || line.text.trim() === "") {
      if (line.text === undefined) malformed++;
      continue;
    }
    const entry = parseListLine(line.text, HEX_LENGTH[algorithm], algorithm);
    if (!entry) {
      malformed++;
      continue;
    }
    let status: "OK" | "FAILED" | "UNREADABLE";
    if (line.problem === "not UTF-8") status = "UNREADABLE"; // the name cannot be spelled to the file system as text
    else {
      try {
        const d = await hasher.digest(userPath(entry.name), algorithm, signal);
        status = d.digest === entry.digest ? "OK" : "FAILED";
      } catch (e) {
        if (e instanceof InterruptedError || isMissingPermission(e)) throw e;
        if (!json) printError(`sha: ${checkedName(entry.name)}: ${whyUnreadable(e)}`);
        status = "UNREADABLE";
      }
    }
    results.push({ file: entry.name, status });
    if (!json) print(`${checkedName(entry.name)}: ${status === "UNREADABLE" ? "FAILED open or read" : status}`);
  }
  const failed = results.filter((r) => r.status === "FAILED").length;
  const unreadable = results.filter((r) => r.status === "UNREADABLE").length;
  if (json) printJson({ device: hasher.device, algorithm, files: results, malformedLines: malformed });
  else {
    if (malformed) printError(`sha: WARNING: ${malformed} line${malformed > 1 ? "s are" : " is"} improperly formatted (not ${algorithm})`);
    if (unreadable) printError(`sha: WARNING: ${unreadable} listed file${unreadable > 1 ? "s" : ""} could not be read`);
    if (failed) printError(`sha: WARNING: ${failed} computed checksum${failed > 1 ? "s" : ""} did NOT match`);
  }
  return failed || unreadable || malformed || results.length === 0 ? 1 : 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
