/**
 * A file that appears under its final name only when complete: written to a temporary file in the same folder
 * (same file system, so rename is atomic), fsync'd, then renamed. abort() removes the temporary file, so a failed
 * or interrupted copy leaves nothing under the target name. A run killed outright (SIGKILL, power loss) leaves its
 * temporary file behind: its name carries the pid, and removeStaleTemporaries() lets a later run remove the ones
 * whose process is gone.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  statfsSync,
  statSync,
  unlinkSync,
  write,
  writeSync,
} from "node:fs";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { onForcedExit } from "../common/interrupt.ts";
import { rethrowMissingPermission } from "../common/permission.ts";

/** Longest file name (bytes) on Linux file systems. */
const NAME_MAX = 255;
const SUFFIX = /^\..*\.doca-ts-(\d+)-[0-9a-z]+\.part$/;

/**
 * `.NAME.doca-ts-PID-RANDOM.part`, within NAME_MAX bytes: a long NAME is cut (on a character boundary) and a short
 * hash of the whole name keeps different long names apart.
 */
export function temporaryName(target: string, pid = process.pid, random = Math.random().toString(36).slice(2, 10)): string {
  const name = basename(target);
  const tail = `.doca-ts-${pid}-${random}.part`;
  const whole = `.${name}${tail}`;
  if (Buffer.byteLength(whole) <= NAME_MAX) return whole;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 12);
  const room = NAME_MAX - Buffer.byteLength(`.~${hash}${tail}`);
  let cut = "";
  for (const ch of name) {
    if (Buffer.byteLength(cut + ch) > room) break;
    cut += ch;
  }
  return `.${cut}~${hash}${tail}`;
}

/**
 * Checks the folder `target` will be created in, naming the user's path: it exists, is a folder, is writable (a
 * probe file is created and removed) and, when `bytes` is known, has room for them.
 */
export function checkTargetFolder(target: string, bytes?: number, shownAs = target): void {
  const dir = dirname(target);
  let stat;
  try {
    stat = statSync(dir);
  } catch (e) {
    rethrowMissingPermission(e);
    throw new Error(`cannot create ${shownAs}: its folder ${dir} does not exist`);
  }
  if (!stat.isDirectory()) throw new Error(`cannot create ${shownAs}: ${dir} is not a folder`);
  const probe = join(dir, temporaryName(target));
  try {
    closeSync(openSync(probe, "wx", 0o600));
    unlinkSync(probe);
  } catch (e) {
    rethrowMissingPermission(e);
    throw new Error(`cannot create ${shownAs}: the folder ${dir} is not writable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (bytes !== undefined) checkFreeSpace(dir, bytes, shownAs);
}

export function checkFreeSpace(dir: string, bytes: number, shownAs: string): void {
  let free: number;
  try {
    const s = statfsSync(dir);
    free = Number(s.bavail) * Number(s.bsize);
  } catch (e) {
    // Deno without --allow-sys must not skip the check quietly: the task's flags grant it, so say which is missing.
    rethrowMissingPermission(e);
    return; // the runtime or file system cannot tell: the write itself will fail with ENOSPC
  }
  if (bytes > free) {
    throw new Error(`cannot create ${shownAs}: it needs ${bytes} bytes and its folder ${dir} has ${free} bytes free`);
  }
}

/**
 * true / false, or undefined when this process may not tell. Deno needs --allow-run for this signal-0 probe (the deno
 * task and the shebang of dma-copy grant it); without it the permission error propagates, naming the flag.
 */
function processAlive(pid: number): boolean | undefined {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    rethrowMissingPermission(e);
    const code = (e as NodeJS.ErrnoException).code ?? /\b(ESRCH|EPERM)\b/.exec(String(e))?.[1];
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true; // someone else's process
  }
  try {
    return existsSync(`/proc/${pid}`);
  } catch {
    return undefined;
  }
}

const RECENT_MS = 2 * 60_000;

function recentlyWritten(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < RECENT_MS;
  } catch {
    return false;
  }
}

/**
 * Removes the temporary files of dead doca-ts runs in `dir` (name pattern + the pid in it is not a live process +
 * not written to in the last two minutes);
 * returns what it removed, what belongs to live runs, and what it could not judge (left in place, to report).
 */
export function removeStaleTemporaries(dir: string): { removed: string[]; live: string[]; unknown: string[] } {
  const removed: string[] = [];
  const live: string[] = [];
  const unknown: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { removed, live, unknown };
  }
  for (const name of names) {
    const m = SUFFIX.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    const alive = pid === process.pid ? true : processAlive(pid);
    // A pid from another pid namespace (a container sharing the folder) looks dead: a file written to in the last
    // minutes may still be someone's copy in progress, so it is only reported.
    if (alive === false && recentlyWritten(join(dir, name))) {
      unknown.push(name);
      continue;
    }
    if (alive !== false) {
      (alive ? live : unknown).push(name);
      continue;
    }
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch { /* someone else removed it, or we may not: leave it */ }
  }
  return { removed, live, unknown };
}

export class AtomicFile {
  readonly target: string;
  readonly tempPath: string;
  #fd: number | undefined;
  #unregister: () => void;

  private constructor(target: string, tempPath: string, fd: number) {
    this.target = target;
    this.tempPath = tempPath;
    this.#fd = fd;
    // If the process must exit without unwinding (a second Ctrl-C), the temporary file still goes.
    this.#unregister = onForcedExit(() => this.abort());
  }

  /** Creates the temporary file; fails (EEXIST) rather than clobbering anything. */
  static create(target: string): AtomicFile {
    const tempPath = join(dirname(target), temporaryName(target));
    let fd: number;
    try {
      fd = openSync(tempPath, "wx", 0o644);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new Error(`cannot create ${target}${code ? ` (${code})` : ""}: ${(e as Error).message.replace(tempPath, "its temporary file")}`);
    }
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

  /** fsync + rename onto the target + fsync of the folder: once this returns, the file is durable under its name. */
  commit(): void {
    const fd = this.#open();
    fsyncSync(fd);
    closeSync(fd);
    this.#fd = undefined;
    renameSync(this.tempPath, this.target);
    this.#unregister();
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
      this.#unregister();
    }
  }

  #open(): number {
    if (this.#fd === undefined) throw new Error(`${this.target}: the temporary file is already committed or aborted`);
    return this.#fd;
  }
}
