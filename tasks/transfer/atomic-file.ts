/**
 * A file that appears under its final name only when complete: written to a temporary file in the same folder
 * (same file system, so rename is atomic), fsync'd, then renamed. abort() removes the temporary file, so a failed
 * or interrupted copy leaves nothing under the target name. A run killed outright (SIGKILL, power loss) leaves its
 * temporary file behind: its name carries the pid and where that pid means something (run-place.ts), and
 * removeStaleTemporaries() lets a later run remove the ones whose process is gone.
 */
import {
  closeSync,
  existsSync,
  fdatasync,
  fsyncSync,
  futimesSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
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
import { clearInterval, setInterval } from "node:timers";
import { onForcedExit } from "../common/interrupt.ts";
import { rethrowMissingPermission } from "../common/permission.ts";
import { printError } from "../common/output.ts";
import { taskName } from "../common/task-name.ts";
import { runPlace } from "./run-place.ts";
import { UsageError } from "../common/cli.ts";

/** Longest file name (bytes) on Linux file systems. */
const NAME_MAX = 255;
/** `.NAME.doca-ts-PID-PLACE-RANDOM.part` (PLACE: runPlace(), absent when unknown and in older doca-ts names). */
const SUFFIX = /^\..*\.doca-ts-(\d+)-(?:([0-9a-f]{8})-)?[0-9a-z]+\.part$/;

/**
 * `.NAME.doca-ts-PID-PLACE-RANDOM.part`, within NAME_MAX bytes: a long NAME is cut (on a character boundary) and a
 * short hash of the whole name keeps different long names apart. PLACE (this boot and pid namespace) is left out when
 * it cannot be read; tests pass `place` explicitly.
 */
export function temporaryName(target: string, pid = process.pid, random = Math.random().toString(36).slice(2, 10), place = runPlace()): string {
  return hiddenName(target, `.doca-ts-${pid}-${place ? `${place}-` : ""}${random}.part`);
}

/** `.NAME.doca-ts.lock`: one per target name, held by the copy writing it (see TargetLock). */
export function lockName(target: string): string {
  return hiddenName(target, ".doca-ts.lock");
}

function hiddenName(target: string, tail: string): string {
  const name = basename(target);
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
 * How messages name the program writing a target and what it writes: dma-copy and rdma-copy receive "a copy";
 * compress, encrypt, ec-recover … write their own output (wordingFor(task)).
 */
export interface TargetWording {
  /** "a copy", "encrypt": the subject of "… never replaces anything". */
  writer: string;
  /** "the copy", "the encrypt run": what the target appeared during. */
  during: string;
  /** "the received copy", "encrypt's output": what was discarded. */
  product: string;
}

export const COPY_WORDING: TargetWording = { writer: "a copy", during: "the copy", product: "the received copy" };

/** The wording for a task that writes its own output (compress, decrypt, ec-encode …). */
export function wordingFor(task: string): TargetWording {
  return { writer: task, during: `the ${task} run`, product: `${task}'s output` };
}

/**
 * Checks the folder `target` will be created in, naming the user's path: it exists, is a folder, is writable (a
 * probe file is created and removed) and, when `bytes` is known, has room for them; and that nothing has the target's
 * name yet: a copy never replaces anything, so a name that is taken fails now, not after the whole transfer.
 */
export function checkTargetFolder(target: string, bytes?: number, shownAs = target, wording = COPY_WORDING, flag?: string): void {
  checkNameFree(target, shownAs, wording, flag);
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

/**
 * Throws when anything (a file, a folder, a symbolic link even dangling) has the name `target`; given the `flag` that
 * named a file output, a folder or a special file there is a usage error naming it (no run can write its file there).
 */
export function checkNameFree(target: string, shownAs = target, wording = COPY_WORDING, flag?: string): void {
  const what = takenAs(target);
  if (what === undefined) return;
  if (flag !== undefined) refuseNonFile(what, shownAs, flag);
  throw new Error(`cannot create ${shownAs}: ${what} of that name already exists (${wording.writer} never replaces anything: remove it or choose another name)`);
}

/**
 * A folder or a special file (device, FIFO, socket) under an output's name is a usage error before any work: no run
 * can write its output there, --force or not. `what`: takenAs()'s answer; `flag`: the flag that named the output.
 */
export function refuseNonFile(what: string | undefined, shownAs: string, flag?: string): void {
  if (what !== "a folder" && what !== "a special file") return;
  throw new UsageError(`${flag ? `${flag}: ` : ""}${shownAs} is ${what}, not a file: the output must be a file name (--force replaces only a regular file)`);
}

/** What has the name `target` ("a file", "a symbolic link" even dangling, "a folder" …), or undefined when free. */
export function takenAs(target: string): string | undefined {
  let taken;
  try {
    taken = lstatSync(target);
  } catch (e) {
    rethrowMissingPermission(e);
    return undefined; // absent (or its folder is missing: said when it is created)
  }
  return taken.isSymbolicLink() ? "a symbolic link" : taken.isDirectory() ? "a folder" : taken.isFile() ? "a file" : "a special file";
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

/**
 * Removes the dead runs' temporary files (and folders) beside a task's output and says so on stderr, as dma-copy
 * does: a run killed with SIGKILL leaves its `.NAME.doca-ts-PID-*.part`, the next run in that folder removes it.
 */
export function sweepStaleTemporaries(dir: string, task: string): void {
  const stale = removeStaleTemporaries(dir);
  for (const name of stale.removed) printError(`${task}: ${removedNotice(name)}`);
  for (const name of stale.unknown) printError(`${task}: ${unjudgedNotice(name)}`);
}

/** The line that says a dead run's temporary file was removed. */
export const removedNotice = (name: string): string => `removed ${name}, the temporary file of a dead run`;

/** The line for a temporary file whose owner could not be judged here (it stays). */
export const unjudgedNotice = (name: string): string =>
  `${name} looks like the temporary file of an earlier run; remove it if that run is gone (it was written on another ` +
  `host, in another pid namespace or by an older doca-ts, so only its age tells: it goes once nobody wrote to it for two minutes)`;

const RECENT_MS = 2 * 60_000;

function recentlyWritten(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < RECENT_MS;
  } catch {
    return false;
  }
}

/**
 * Removes the temporary files of dead doca-ts runs in `dir`: the pid in the name is not a live process (signal-0
 * probe: ESRCH) and the name says it was written here (same boot and pid namespace: removed at once), or, for a name
 * from elsewhere or without that tag, nobody wrote to it in the last two minutes (a pid from another pid namespace
 * looks dead). Returns what it removed, what belongs to live runs, and what it could not judge (left, to report).
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
    const here = m[2] !== undefined && m[2] === runPlace();
    // A pid from another pid namespace (a container sharing the folder) looks dead: a file written to in the last
    // minutes may still be someone's copy in progress, so it is only reported.
    if (alive === false && !here && recentlyWritten(join(dir, name))) {
      unknown.push(name);
      continue;
    }
    if (alive !== false) {
      (alive ? live : unknown).push(name);
      continue;
    }
    try {
      // a file, or a folder (ec-encode builds its output folder under a temporary name)
      if (lstatSync(join(dir, name)).isDirectory()) rmSync(join(dir, name), { recursive: true });
      else unlinkSync(join(dir, name));
      removed.push(name);
    } catch { /* someone else removed it, or we may not: leave it */ }
  }
  return { removed, live, unknown };
}

/** How often a lock's holder refreshes the lock file's mtime, and after how long without that a lock is abandoned. */
// A lock written here (same boot and pid namespace, run-place.ts) whose process is gone is taken over at once. One
// from elsewhere (another host or container sharing the folder, or an older doca-ts that did not say) is judged by
// its mtime: a copy alive in another pid namespace looks dead to kill -0 but refreshes its lock every second, so
// three seconds without a refresh tell the two apart.
const LOCK_REFRESH_MS = 1_000;
export const LOCK_ABANDONED_MS = 3_000;

/**
 * One receiver per target name: `.NAME.doca-ts.lock` next to the temporary file, created with O_EXCL (open "wx"),
 * holding the owner's pid and temporary file name; its mtime is refreshed every few seconds while the copy runs. A
 * second receiver finds it and fails at once, naming the other copy. A lock whose process is gone (kill -0: ESRCH)
 * is abandoned (SIGKILL, power loss) and taken over, with one line saying so, and the dead run's temporary file it
 * names is removed with it: at once when the lock says it was written on this boot in this pid namespace, else once
 * nobody refreshed it for 3 s (a dead-looking pid with a fresh mtime is a copy in another pid namespace sharing the
 * folder, so it still counts). A live pid always counts, even if reused by another program since.
 */
export class TargetLock {
  readonly path: string;
  #fd: number | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
    this.#timer = setInterval(() => {
      const now = new Date();
      try {
        if (this.#fd !== undefined) futimesSync(this.#fd, now, now);
      } catch { /* best effort: a stale mtime only lets an abandoned-lock check succeed later */ }
    }, LOCK_REFRESH_MS);
    this.#timer.unref?.();
  }

  /** Takes the lock of `target`, or throws naming the copy that holds it. `shownAs`: the target as the user wrote it. */
  static acquire(target: string, tempName: string, shownAs = target): TargetLock {
    const path = join(dirname(target), lockName(target));
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = openSync(path, "wx", 0o644);
        const place = runPlace();
        writeSync(fd, `pid ${process.pid}\ntemporary ${tempName}\nsince ${new Date().toISOString()}\n${place ? `place ${place}\n` : ""}`);
        return new TargetLock(path, fd);
      } catch (e) {
        rethrowMissingPermission(e);
        if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "EEXIST") throw new Error(busyMessage(shownAs, path));
          throw new Error(`cannot create ${shownAs}: cannot create its lock file ${path} (${code ?? (e as Error).message})`);
        }
      }
      if (!abandoned(path)) throw new Error(busyMessage(shownAs, path));
      // Abandoned: its run's temporary file goes first (nobody will finish it; it may be hundreds of MiB), then the
      // lock is taken over (a racing taker loses at openSync "wx" above).
      const owner = lockOwner(path);
      const dead = owner.temporary;
      let removed = false;
      if (dead && SUFFIX.test(dead) && !dead.includes("/")) {
        try {
          unlinkSync(join(dirname(path), dead));
          removed = true;
        } catch { /* already gone */ }
      }
      try {
        unlinkSync(path);
        const task = taskName();
        printError(
          `${task ? `${task}: ` : ""}took over the lock of ${shownAs} from process ${owner.pid ?? "?"}, which is gone` +
            (removed ? ` (its temporary file ${dead} was removed)` : ""),
        );
      } catch { /* someone else removed it first */ }
    }
  }

  /** Throws when another copy holds the lock of `target` (a check before connecting; acquire() is the real guard). */
  static checkFree(target: string, shownAs = target): void {
    const path = join(dirname(target), lockName(target));
    if (existsSync(path) && !abandoned(path)) throw new Error(busyMessage(shownAs, path));
  }

  release(): void {
    clearInterval(this.#timer);
    if (this.#fd === undefined) return;
    try {
      closeSync(this.#fd);
    } catch { /* already closed */ }
    this.#fd = undefined;
    try {
      unlinkSync(this.path);
    } catch { /* already gone */ }
  }
}

function lockOwner(path: string): { pid?: number; temporary?: string; since?: string; place?: string } {
  try {
    const text = readFileSync(path, "utf8");
    const pid = Number(/^pid (\d+)$/m.exec(text)?.[1]);
    return {
      pid: pid > 0 ? pid : undefined,
      temporary: /^temporary (.+)$/m.exec(text)?.[1],
      since: /^since (.+)$/m.exec(text)?.[1],
      place: /^place ([0-9a-f]{8})$/m.exec(text)?.[1],
    };
  } catch {
    return {};
  }
}

function abandoned(path: string): boolean {
  const { pid, place } = lockOwner(path);
  if (pid === process.pid) return false;
  if (pid !== undefined && processAlive(pid) !== false) return false;
  // its owner said where its pid means something: here, so the probe's ESRCH is the last word
  if (pid !== undefined && place !== undefined && place === runPlace()) return true;
  try {
    return Date.now() - statSync(path).mtimeMs > LOCK_ABANDONED_MS;
  } catch {
    return true; // gone meanwhile
  }
}

function busyMessage(shownAs: string, lockPath: string): string {
  const o = lockOwner(lockPath);
  const who = o.pid ? `process ${o.pid}${o.since ? ` since ${o.since}` : ""}${o.temporary ? `, writing ${o.temporary}` : ""}` : "another process";
  return `cannot create ${shownAs}: another copy is writing it (${who}; lock ${lockPath}). ` +
    `Wait for it to finish or choose another name (a lock whose process is gone is taken over at once; one from ` +
    `another host or pid namespace once nobody refreshed it for ${LOCK_ABANDONED_MS / 1000} s)`;
}

/**
 * Written bytes after which a flush to disk starts in the background. The kernel only starts writeback on its own
 * past its dirty threshold (10 % of RAM by default), so without this a large copy left all of its data for the
 * final fsync to write while the transfer waited; flushing as it goes overlaps the disk with the transfer.
 */
export const FLUSH_EVERY_BYTES = 64 * 2 ** 20;

export class AtomicFile {
  readonly target: string;
  readonly tempPath: string;
  #fd: number | undefined;
  #lock: TargetLock;
  #unregister: () => void;
  #unflushed = 0;
  /** The background fdatasync in flight, if any: the fd stays open until it settles. */
  #flushing: Promise<void> | undefined;
  /** A background flush's error: the data may not be on disk, so commit() must fail with it. */
  #flushError: Error | undefined;
  #wording = COPY_WORDING;

  private constructor(target: string, tempPath: string, fd: number, lock: TargetLock, readonly flushEveryBytes: number) {
    this.target = target;
    this.tempPath = tempPath;
    this.#fd = fd;
    this.#lock = lock;
    // If the process must exit without unwinding (a second Ctrl-C), the temporary file and the lock still go.
    this.#unregister = onForcedExit(() => this.abort());
  }

  /**
   * Takes the target's lock (another copy writing the same name: an error naming it), then creates the temporary
   * file; fails (EEXIST) rather than clobbering anything.
   */
  static create(target: string, flushEveryBytes = FLUSH_EVERY_BYTES, wording = COPY_WORDING, shownAs = target): AtomicFile {
    checkNameFree(target, shownAs, wording); // a name taken now is said now, not as "appeared during" at the end
    const tempName = temporaryName(target);
    const tempPath = join(dirname(target), tempName);
    const lock = TargetLock.acquire(target, tempName);
    let fd: number;
    try {
      fd = openSync(tempPath, "wx", 0o644);
    } catch (e) {
      lock.release();
      rethrowMissingPermission(e);
      const code = (e as NodeJS.ErrnoException).code;
      throw new Error(`cannot create ${target}${code ? ` (${code})` : ""}: ${(e as Error).message.replace(tempPath, "its temporary file")}`);
    }
    const file = new AtomicFile(target, tempPath, fd, lock, flushEveryBytes);
    file.#wording = wording;
    return file;
  }

  /** Writes all of `bytes` at `position` (loops over short writes). */
  writeAt(bytes: Uint8Array, position: number): void {
    const fd = this.#open();
    let done = 0;
    while (done < bytes.length) {
      done += writeSync(fd, bytes, done, bytes.length - done, position + done);
    }
    this.#wrote(bytes.length);
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
    this.#wrote(bytes.length);
  }

  /** Starts a background flush every flushEveryBytes (one at a time; the final fsync in commit() covers the rest). */
  #wrote(length: number): void {
    this.#unflushed += length;
    if (this.#unflushed < this.flushEveryBytes || this.#flushing || this.#fd === undefined) return;
    this.#unflushed = 0;
    const fd = this.#fd;
    this.#flushing = new Promise<void>((settled) =>
      fdatasync(fd, (err) => {
        if (err) this.#flushError ??= err;
        this.#flushing = undefined;
        // abort() while this flush ran left the fd open (closing it could let the flush reach a reused number).
        if (this.#fd === undefined) closeQuietly(fd);
        settled();
      })
    );
  }

  /**
   * Waits for a background flush, fsyncs, renames onto the target, fsyncs the folder: once this resolves, the file
   * is durable under its name.
   */
  async commit(): Promise<void> {
    await this.#flushing;
    const fd = this.#open();
    if (this.#flushError) {
      this.abort();
      throw new Error(`${this.target}: writing to disk failed (${this.#flushError.message}); ${this.#wording.product} was discarded`, { cause: this.#flushError });
    }
    fsyncSync(fd);
    closeSync(fd);
    this.#fd = undefined;
    try {
      publishWithoutReplacing(this.tempPath, this.target, this.#wording);
    } catch (e) {
      try {
        unlinkSync(this.tempPath);
      } catch { /* already gone */ }
      this.#lock.release();
      this.#unregister();
      throw e;
    }
    this.#lock.release();
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
      // A background flush in flight closes the fd when it settles.
      if (!this.#flushing) closeQuietly(this.#fd);
      this.#fd = undefined;
      try {
        unlinkSync(this.tempPath);
      } catch { /* already gone */ }
      this.#lock.release();
      this.#unregister();
    }
  }

  #open(): number {
    if (this.#fd === undefined) throw new Error(`${this.target}: the temporary file is already committed or aborted`);
    return this.#fd;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch { /* already closed */ }
}

/**
 * Gives the finished temporary file its final name without ever replacing a file that appeared under that name
 * during the copy (another program, or a user). rename() would replace it silently and renameat2(RENAME_NOREPLACE)
 * is not reachable from JavaScript, so: link(temp, target), which fails with EEXIST instead of replacing, then
 * unlink(temp). File systems without hard links (EPERM, ENOTSUP, EMLINK: vfat, some FUSE and network mounts) fall
 * back to "target absent? then rename": doca-ts receivers are kept apart by the lock, and only a program that is
 * not doca-ts creating the name in that instant can still be replaced there.
 */
export function publishWithoutReplacing(tempPath: string, target: string, wording = COPY_WORDING): void {
  const appeared = () =>
    new Error(`${target} appeared during ${wording.during} (created by something else): it was not replaced, and ${wording.product} was discarded`);
  try {
    linkSync(tempPath, target);
  } catch (e) {
    rethrowMissingPermission(e);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw appeared();
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EMLINK" && code !== "ENOSYS") throw e;
    if (existsSync(target)) throw appeared();
    renameSync(tempPath, target);
    return;
  }
  unlinkSync(tempPath);
}
