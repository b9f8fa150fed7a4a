/**
 * Opening a file a task reads (its input, a key file, a check list, a manifest) without ever blocking: open(2) of a
 * FIFO with no writer waits forever, and while it waits no JavaScript runs, so SIGINT/SIGTERM handlers cannot act.
 * O_NONBLOCK makes that open return at once (it changes nothing for a regular file's reads); fstat then says what the
 * name really is, and anything but a regular file is refused with a message that says so.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import process from "node:process";
import { isMissingPermission, rethrowMissingPermission } from "./permission.ts";
import { userPath } from "./user-path.ts";

const NONBLOCKING_READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** "a FIFO (named pipe)", "a folder", ...: what a non-regular file is, for messages. */
export function describeKind(stat: Stats): string {
  if (stat.isFIFO()) return "a pipe or FIFO";
  if (stat.isDirectory()) return "a folder";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * Opens `path` for reading without blocking and returns its descriptor, or throws naming `shownAs` when it cannot be
 * opened or is not a regular file (`why`: what the task needs a regular file for, said in the message).
 */
export function openRegularFile(path: string, shownAs = path, why = "it is read by offset and its size must be known"): number {
  let fd: number;
  try {
    fd = openSync(path, NONBLOCKING_READ);
  } catch (e) {
    rethrowMissingPermission(e);
    const code = (e as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code ?? (e as Error).message;
    throw new Error(`cannot open ${shownAs}: ${reason}`, { cause: e });
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(`${shownAs} is ${describeKind(stat)}: only a regular file is accepted (${why}); save the stream to a file first`);
  }
  return fd;
}

/** A name that is not a regular file (a pipe, a device, a folder). */
export class NotRegularFileError extends Error {
  override name = "NotRegularFileError";
}

/**
 * The whole content of a small regular file (a manifest, a key), refusing one larger than `maxBytes` before reading
 * it: /dev/zero or a huge file under that name must not fill the memory.
 */
export function readSmallRegularFile(path: string, maxBytes: number, shownAs = path): Uint8Array {
  const fd = openRegularFile(path, shownAs, "a small file is expected here");
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) throw new Error(`${shownAs} is ${size} bytes: more than the ${maxBytes} bytes such a file can hold`);
    const bytes = new Uint8Array(size);
    let done = 0;
    while (done < size) {
      const n = readSync(fd, bytes, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return bytes.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

/** Reads into `buffer` from `position` until it is full or the file ends; returns how many bytes were read. */
export function readFullyAt(fd: number, buffer: Uint8Array, position: number): number {
  let got = 0;
  while (got < buffer.length) {
    const n = readSync(fd, buffer, got, buffer.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/**
 * A file a flag names (`flag`, as --help spells it), read whole: `given` is resolved as every path the user gives
 * (user-path.ts: relative to the folder the command ran from), and a file that cannot be read is one line in the
 * tasks' words, "FLAG: cannot open PATH: no such file" (never the runtime's raw ENOENT/EISDIR text).
 */
export function readFlagFile(flag: string, given: string, maxBytes: number, env: Record<string, string | undefined> = process.env): { path: string; bytes: Uint8Array } {
  const path = userPath(given, env);
  try {
    return { path, bytes: readSmallRegularFile(path, maxBytes) };
  } catch (e) {
    if (isMissingPermission(e)) throw e;
    throw new Error(`${flag}: ${(e as Error).message}`, { cause: e });
  }
}
