/**
 * The local end of a copy: does this side have the file (then it sends), and sequential reads straight into
 * native memory views. Like NVIDIA's application, "has the file" means it exists and is readable here.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { rethrowMissingPermission } from "../common/permission.ts";
import { UsageError } from "../common/cli.ts";
import { describeKind } from "../common/input-file.ts";

export type LocalFile = { have: true; size: number } | { have: false };

/** `flag`: the flag that named the file, for the usage error a folder or special file under its name is. */
export function probeLocalFile(path: string, flag = "-f/--file"): LocalFile {
  let stat;
  try {
    stat = statSync(path);
  } catch (e) {
    rethrowMissingPermission(e); // Deno without --allow-read: not "the file is absent"
    return { have: false };
  }
  if (!stat.isFile()) throw notAFileToCopy(flag, path, stat);
  // Opening is the readability test (Deno's accessSync needs --allow-sys for the uid).
  try {
    closeSync(openSync(path, "r"));
  } catch (e) {
    rethrowMissingPermission(e);
    throw new Error(`${path} exists but is not readable: refusing to overwrite it`);
  }
  return { have: true, size: stat.size };
}

/**
 * The file a copy sends changed while it was read (written in place, grown, or its size no longer the one offered):
 * the bytes sent are of no version of it, so the sender fails before its checksum leaves and the receiver commits
 * nothing. A verified checksum alone would not tell: it covers exactly the mix that was sent.
 */
export class SourceChangedError extends Error {}

/**
 * The usage error of a copy (dma-copy's -f, rdma-copy's --send) given a name that is no regular file, in one wording
 * for both: "-f/--file: PATH is a folder: a copy sends or receives a regular file".
 */
export function notAFileToCopy(flag: string, path: string, stat: Stats): UsageError {
  return new UsageError(`${flag}: ${path} is ${describeKind(stat)}: a copy sends or receives a regular file`);
}

export class FileReader implements Disposable {
  readonly #fd: number;
  readonly #opened: Stats;
  readonly path: string;
  /** `expectedSize`: the size offered to the peer (a file already different from it is refused at once). */
  constructor(path: string, expectedSize?: number) {
    this.path = path;
    this.#fd = openSync(path, "r");
    this.#opened = fstatSync(this.#fd);
    if (expectedSize !== undefined && this.#opened.size !== expectedSize) {
      closeSync(this.#fd);
      throw new SourceChangedError(`${path} changed before it was read: ${this.#opened.size} bytes, not the ${expectedSize} offered; nothing was sent`);
    }
  }

  /**
   * After the last read, before the checksum leaves: the file's size, modification and change times are the ones it
   * had when it was opened, or SourceChangedError.
   */
  assertUnchanged(): void {
    const now = fstatSync(this.#fd), then = this.#opened;
    const how = now.size !== then.size ? `its size went from ${then.size} to ${now.size} bytes` : now.mtimeMs !== then.mtimeMs || now.ctimeMs !== then.ctimeMs ? "it was written to" : undefined;
    if (how) throw new SourceChangedError(`${this.path} changed while it was copied (${how}): the copy would match no version of it, so nothing is committed; copy it again once it is no longer written`);
  }

  /** Fills `into` from `position`; a file that shrank underneath us is an error, never silent zeros. */
  readExactly(into: Uint8Array, position: number): void {
    let done = 0;
    while (done < into.length) {
      const n = readSync(this.#fd, into, done, into.length - done, position + done);
      if (n === 0) throw new Error(`${this.path}: unexpected end of file at byte ${position + done} (did it change during the copy?)`);
      done += n;
    }
  }

  close(): void {
    closeSync(this.#fd);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
