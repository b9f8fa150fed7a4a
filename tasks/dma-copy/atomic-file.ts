/**
 * A file that appears under its final name only when complete: written to a temporary file in the same folder
 * (same file system, so rename is atomic), fsync'd, then renamed. abort() removes the temporary file, so a failed
 * copy leaves nothing under the target name.
 */
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, write, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import process from "node:process";

export class AtomicFile {
  readonly target: string;
  readonly tempPath: string;
  #fd: number | undefined;

  private constructor(target: string, tempPath: string, fd: number) {
    this.target = target;
    this.tempPath = tempPath;
    this.#fd = fd;
  }

  /** Creates the temporary file; fails (EEXIST) rather than clobbering anything. */
  static create(target: string): AtomicFile {
    const suffix = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const tempPath = join(dirname(target), `.${basename(target)}.doca-ts-${suffix}.part`);
    const fd = openSync(tempPath, "wx", 0o644);
    return new AtomicFile(target, tempPath, fd);
  }

  /** Writes all of `bytes` at `position` (loops over short writes). */
  writeAt(bytes: Uint8Array, position: number): void {
    const fd = this.#open();
    let done = 0;
    while (done < bytes.length) {
      done += writeSync(fd, bytes, done, bytes.length - done, position + done);
    }
  }

  /**
   * Like writeAt, on the runtime's I/O thread pool, so the caller can hash the same bytes meanwhile. `bytes` must
   * stay unchanged until the promise settles.
   */
  async writeAtAsync(bytes: Uint8Array, position: number): Promise<void> {
    const fd = this.#open();
    let done = 0;
    while (done < bytes.length) {
      done += await new Promise<number>((resolve, reject) =>
        write(fd, bytes, done, bytes.length - done, position + done, (err, n) => (err ? reject(err) : resolve(n)))
      );
    }
  }

  /** fsync + rename onto the target. */
  commit(): void {
    const fd = this.#open();
    fsyncSync(fd);
    closeSync(fd);
    this.#fd = undefined;
    renameSync(this.tempPath, this.target);
    // Make the rename itself durable where the platform allows opening a folder.
    try {
      const dir = openSync(dirname(this.target), "r");
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
    } catch {
      // not fatal: the data is on disk, only the directory entry may lag
    }
  }

  /** Drops the temporary file; safe to call at any time, any number of times. */
  abort(): void {
    if (this.#fd !== undefined) {
      try {
        closeSync(this.#fd);
      } catch { /* already closed */ }
      this.#fd = undefined;
      try {
        unlinkSync(this.tempPath);
      } catch { /* already gone */ }
    }
  }

  #open(): number {
    if (this.#fd === undefined) throw new Error(`${this.tempPath} is already committed or aborted`);
    return this.#fd;
  }
}
