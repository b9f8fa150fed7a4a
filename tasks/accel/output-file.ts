/**
 * The output of compress, decompress and sha --output: written to a hidden temporary file beside the target, which
 * gets the target's name only when complete (fsync, then link/rename without replacing anything). A failure, a stop or
 * a forced exit removes the temporary file: a failed run leaves nothing behind.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { onForcedExit } from "../common/interrupt.ts";
import { publishWithoutReplacing, temporaryName } from "../transfer/atomic-file.ts";

export class OutputFile {
  readonly target: string;
  readonly tempPath: string;
  #fd: number | undefined;
  #length = 0;
  readonly #replace: boolean;
  readonly #unregister: () => void;

  private constructor(target: string, tempPath: string, fd: number, replace: boolean) {
    this.target = target;
    this.tempPath = tempPath;
    this.#fd = fd;
    this.#replace = replace;
    this.#unregister = onForcedExit(() => this.abort());
  }

  /** Creates the temporary file; an existing target is an error unless `replace` (--force). */
  static create(target: string, shownAs: string, replace = false): OutputFile {
    if (!replace && existsSync(target)) throw new Error(`${shownAs} exists (use --force to replace it)`);
    const tempPath = join(dirname(target), temporaryName(target));
    let fd: number;
    try {
      fd = openSync(tempPath, "wx", 0o644);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new Error(`cannot create ${shownAs}${code ? ` (${code})` : ""}`);
    }
    return new OutputFile(target, tempPath, fd, replace);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  /** Appends every byte of each part. */
  write(...parts: Uint8Array[]): void {
    if (this.#fd === undefined) throw new Error(`${this.target}: the output is closed`);
    for (const bytes of parts) {
      let done = 0;
      while (done < bytes.length) done += writeSync(this.#fd, bytes, done, bytes.length - done, this.#length + done);
      this.#length += bytes.length;
    }
  }

  /** Makes the file durable under its name. */
  commit(): void {
    const fd = this.#fd;
    if (fd === undefined) throw new Error(`${this.target}: the output is closed`);
    fsyncSync(fd);
    closeSync(fd);
    this.#fd = undefined;
    try {
      if (this.#replace) renameSync(this.tempPath, this.target);
      else publishWithoutReplacing(this.tempPath, this.target);
    } catch (e) {
      this.#remove();
      throw e;
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

  #remove(): void {
    try {
      unlinkSync(this.tempPath);
    } catch { /* gone already */ }
  }
}
