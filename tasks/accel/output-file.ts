/**
 * The output of compress, decompress and sha --output: written to a hidden temporary file beside the target, which
 * gets the target's name only when complete (fsync, then link/rename without replacing anything). A failure, a stop or
 * a forced exit removes the temporary file: a failed run leaves nothing behind.
 */
import { closeSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { onForcedExit } from "../common/interrupt.ts";
import { flushAndClose } from "../transfer/flush-to-disk.ts";
import { publishWithoutReplacing, refuseNonFile, sweepStaleTemporaries, takenAs, temporaryName, type TargetWording, wordingFor } from "../transfer/atomic-file.ts";
import { rethrowMissingPermission } from "../common/permission.ts";
import { type NamedInput, refuseOutputIsInput } from "../common/same-file.ts";
import { writeFailure } from "../common/write-failure.ts";
import { checkOptions, type OptionRules, PATH } from "../common/options-check.ts";

/**
 * The options that start those of a task turning one input file into one output file it may replace (compressFile,
 * decompressFile); each task adds its own after them.
 */
export const FILE_TO_FILE_OPTIONS: OptionRules = {
  input: PATH(),
  output: PATH("-o/--output"),
  force: { type: "boolean", flag: "-f/--force" },
};

/**
 * The start of such a task: its options checked (`fn` names it), then its output's name, taken or one of its inputs,
 * said before any work.
 */
export function checkFileToFile(fn: string, options: { input: string; output: string; force?: boolean }, rules: OptionRules): void {
  checkOptions(fn, options, rules);
  OutputFile.checkFree(options.output, options.output, options.force, undefined, [options.input]);
}

export class OutputFile {
  readonly target: string;
  readonly tempPath: string;
  /** The target as the user wrote it, for messages. */
  readonly shownAs: string;
  #fd: number | undefined;
  #length = 0;
  readonly #replace: boolean;
  #wording: TargetWording = wordingFor("this task");
  readonly #unregister: () => void;

  private constructor(target: string, tempPath: string, fd: number, replace: boolean, shownAs = target) {
    this.target = target;
    this.shownAs = shownAs;
    this.tempPath = tempPath;
    this.#fd = fd;
    this.#replace = replace;
    this.#unregister = onForcedExit(() => this.abort());
  }

  /**
   * Throws when `target` is taken (unless `replace`): the check a task makes before its work, create() makes again. A
   * folder or a special file is a usage error naming `flag` even with --force: only a regular file is replaced; so is
   * a target that is one of the task's `inputs` (it would be destroyed as it is read).
   */
  static checkFree(target: string, shownAs = target, replace = false, flag = "-o/--output", inputs: (string | NamedInput)[] = []): void {
    refuseOutputIsInput(target, inputs, shownAs, flag);
    const taken = takenAs(target);
    refuseNonFile(taken, shownAs, flag);
    if (taken !== undefined && !replace) throw new Error(`${shownAs} exists (${taken}): refusing to replace it (use --force to replace it)`);
  }

  /**
   * Creates the temporary file; an existing target (a dangling symbolic link too) is an error unless `replace`
   * (--force). `task` words the messages. Called before any work, so a taken name is said at once.
   */
  static create(target: string, shownAs: string, replace = false, task = "this task"): OutputFile {
    OutputFile.checkFree(target, shownAs, replace);
    sweepStaleTemporaries(dirname(target), task); // a killed run's leftovers go, as dma-copy's
    const tempPath = join(dirname(target), temporaryName(target));
    let fd: number;
    try {
      fd = openSync(tempPath, "wx", 0o644);
    } catch (e) {
      rethrowMissingPermission(e);
      const code = (e as NodeJS.ErrnoException).code;
      throw new Error(`cannot create ${shownAs}${code ? ` (${code})` : ""}`);
    }
    const file = new OutputFile(target, tempPath, fd, replace, shownAs);
    file.#wording = wordingFor(task);
    return file;
  }

  /**
   * Writes `content` as the whole of `target`, replacing a regular file there (the steps' --out, --receive, --read,
   * which always overwrote): through a temporary file renamed into place, so a folder, a FIFO or a device under the
   * name is a usage error naming `flag` (writeFileSync opened a FIFO and waited for a reader beyond Ctrl-C), a
   * failed write names the file, and nothing half-written is left under the name.
   */
  static writeWhole(target: string, shownAs: string, content: Uint8Array | string, task: string, flag: string): void {
    OutputFile.checkFree(target, shownAs, true, flag);
    const out = OutputFile.create(target, shownAs, true, task);
    try {
      out.write(typeof content === "string" ? new TextEncoder().encode(content) : content);
      out.commit();
    } catch (e) {
      out.abort();
      throw e;
    }
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  /** Appends every byte of each part. */
  write(...parts: Uint8Array[]): void {
    if (this.#fd === undefined) throw new Error(`${this.target}: the output is closed`);
    try {
      for (const bytes of parts) {
        let done = 0;
        while (done < bytes.length) done += writeSync(this.#fd, bytes, done, bytes.length - done, this.#length + done);
        this.#length += bytes.length;
      }
    } catch (e) {
      throw this.#failure(e, "writing");
    }
  }

  /** Makes the file durable under its name. */
  commit(): void {
    const fd = this.#fd;
    if (fd === undefined) throw new Error(`${this.target}: the output is closed`);
    flushAndClose(fd, () => this.abort(), (e) => this.#failure(e, "flushing to disk"));
    this.#fd = undefined;
    try {
      if (this.#replace) renameSync(this.tempPath, this.target);
      else publishWithoutReplacing(this.tempPath, this.target, this.#wording);
    } catch (e) {
      this.#remove();
      throw this.#failure(e, "giving it its name");
    } finally {
      this.#unregister();
    }
  }

  /** Drops the temporary file (idempotent; safe in a forced exit). */
  abort(): void {
    if (this.#fd !== undefined) {
      try {
        closeSync(this.#fd);
      } catch { /* closed */ }
      this.#fd = undefined;
    }
    this.#remove();
    this.#unregister();
  }

  /** An error of writing the output, naming it as the user wrote it (ENOSPC: "the file system is full"). */
  #failure(error: unknown, doing: string): Error {
    return writeFailure(error, this.shownAs, doing, "nothing was written under that name");
  }

  #remove(): void {
    try {
      unlinkSync(this.tempPath);
    } catch { /* gone already */ }
  }
}
