/**
 * The last step before a finished temporary file is given its name (AtomicFile.commit, OutputFile.commit): its bytes
 * on disk, then its descriptor closed. Only a file whose fsync succeeded may be named: one that failed is dropped.
 */
import { closeSync, fsyncSync } from "node:fs";

/** fsyncs and closes `fd`; a failed fsync calls `abort` (the temporary file goes) and throws `failure(error)`. */
export function flushAndClose(fd: number, abort: () => void, failure: (error: unknown) => Error): void {
  try {
    fsyncSync(fd);
  } catch (e) {
    abort();
    throw failure(e);
  }
  closeSync(fd);
}
