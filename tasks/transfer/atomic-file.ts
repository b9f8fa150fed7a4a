/**
 * A file that appears under its final name only when complete: written to a temporary file in the same folder
 * (same file system, so rename is atomic), fsync'd, then renamed. abort() removes the temporary file, so a failed
 * or interrupted copy leaves nothing under the target name. A run killed outright (SIGKILL, power loss) leaves its
 * temporary file behind: its name carries the pid and where that pid means something (run-place.ts), and
 * removeStaleTemporaries() lets a later run remove the ones whose process is gone.
 */
import {
  closeSync,
  constants,
  existsSync,
  fdatasync,
  fstatSync,
  fsyncSync,
  futimesSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
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
import { speaker } from "../common/task-name.ts";
import { runPlace } from "./run-place.ts";
import { flushAndClose } from "./flush-to-disk.ts";
import { UsageError } from "../common/cli.ts";
import { describeKind } from "../common/input-file.ts";
import { writeFailure } from "../common/write-failure.ts";

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

/** True when /proc says `pid` has exited and waits to be reaped (state Z); false when it cannot tell. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

/**
 * true / false, or undefined when this process may not tell. Deno needs --allow-run for this signal-0 probe (the deno
 * task and the shebang of dma-copy grant it); without it the permission error propagates, naming the flag.
 */
function processAlive(pid: number): boolean | undefined {
  try {
    process.kill(pid, 0);
    // a zombie (killed, not yet reaped: its parent, or a container's init that never reaps) answers signal 0 too
    return !zombie(pid);
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
 * Removes the dead runs' temporary files (and ec-encode's folders) beside a task's output and says so on stderr, as
 * dma-copy does: a run killed with SIGKILL leaves its `.NAME.doca-ts-PID-*.part`, the next run in that folder removes
 * it. `target`: the output this run writes; the temporary file its lock names is left to TargetLock.acquire, which
 * takes the lock over and removes that file in one line.
 */
export function sweepStaleTemporaries(dir: string, task: string, target?: string): void {
  const stale = removeStaleTemporaries(dir, target);
  for (const name of stale.removed) printError(`${task}: ${removedNotice(name)}`);
  for (const name of stale.unknown) printError(`${task}: ${unjudgedNotice(name)}`);
  for (const { name, kind } of stale.kept) printError(`${task}: ${keptNotice(name, kind)}`);
}

/** The line that says a dead run's temporary file was removed. */
export const removedNotice = (name: string): string => `removed ${name}, the temporary file of a dead run`;

/** The line for a temporary file whose owner could not be judged here (it stays). */
export const unjudgedNotice = (name: string): string =>
  `${name} looks like the temporary file of an earlier run; remove it if that run is gone (it was written on another ` +
  `host, in another pid namespace or by an older doca-ts, so only its age tells: it goes once nobody wrote to it for two minutes)`;

/** The line for something under a temporary file's name that doca-ts did not make there (it stays). */
export const keptNotice = (name: string, kind: string): string =>
  `kept ${name}: it is named like a dead run's temporary file, but it is ${kind}, not what doca-ts leaves there (a ` +
  `regular file, or ec-encode's folder of block-NNN and manifest.json); remove it yourself if nothing needs it`;

const RECENT_MS = 2 * 60_000;

function recentlyWritten(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < RECENT_MS;
  } catch {
    return false;
  }
}

/** What ec-encode writes in its temporary folder: block-000 … and manifest.json, regular files all. */
const EC_ENCODE_ENTRY = /^(block-\d{3,}|manifest\.json)$/;

/**
 * What a temporary name holds, when it is not what doca-ts makes there: undefined for a regular file or a folder of
 * ec-encode's blocks only (removable), else its kind for the message ("a FIFO", "a folder holding keep" …).
 * lstat, never open: a FIFO or a device under the name is only looked at.
 */
function foreignKind(path: string): string | undefined {
  const stat = lstatSync(path);
  if (stat.isFile()) return undefined;
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (!stat.isDirectory()) return describeKind(stat);
  const strangers = readdirSync(path).filter((entry) => {
    if (!EC_ENCODE_ENTRY.test(entry)) return true;
    try {
      return !lstatSync(join(path, entry)).isFile();
    } catch {
      return false; // gone meanwhile
    }
  });
  if (strangers.length === 0) return undefined;
  const shown = strangers.slice(0, 3).join(", ") + (strangers.length > 3 ? ` and ${strangers.length - 3} more` : "");
  return `a folder holding ${shown}`;
}

/**
 * Removes the temporary files of dead doca-ts runs in `dir`: the pid in the name is not a live process (signal-0
 * probe: ESRCH) and the name says it was written here (same boot and pid namespace: removed at once), or, for a name
 * from elsewhere or without that tag, nobody wrote to it in the last two minutes (a pid from another pid namespace
 * looks dead). Only what doca-ts makes under such a name goes (a regular file; a folder holding only ec-encode's
 * files); anything else is kept and returned in `kept`. The temporary file named by `target`'s lock is skipped (its
 * lock's takeover removes it). Returns what it removed, what belongs to live runs, what it could not judge (left, to
 * report) and what it kept for its type.
 */
export function removeStaleTemporaries(dir: string, target?: string): {
  removed: string[];
  live: string[];
  unknown: string[];
  kept: { name: string; kind: string }[];
} {
  const removed: string[] = [];
  const live: string[] = [];
  const unknown: string[] = [];
  const kept: { name: string; kind: string }[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { removed, live, unknown, kept };
  }
  const lockedTemporary = target === undefined ? undefined : readLock(join(dirname(target), lockName(target))).temporary;
  for (const name of names) {
    const m = SUFFIX.exec(name);
    if (!m || name === lockedTemporary) continue;
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
      const path = join(dir, name);
      const kind = foreignKind(path);
      if (kind !== undefined) {
        kept.push({ name, kind });
        continue;
      }
      // a file, or a folder of ec-encode's blocks (ec-encode builds its output folder under a temporary name)
      if (lstatSync(path).isDirectory()) rmSync(path, { recursive: true });
      else unlinkSync(path);
      removed.push(name);
    } catch { /* someone else removed it, or we may not: leave it */ }
  }
  return { removed, live, unknown, kept };
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
 *
 * Anything but a regular file under the lock's name (a FIFO, a socket, a device, a folder, a symbolic link) is not a
 * lock doca-ts made: it is refused, naming it, and never opened (open(2) of a FIFO blocks where no signal handler can
 * run) nor removed. A regular one is read only through a non-blocking, no-follow open.
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

  /**
   * Takes the lock of `target`, or throws naming the run that holds it. `shownAs`: the target as the user wrote it;
   * `wording`: who writes it ("another copy", "another encrypt run").
   */
  static acquire(target: string, tempName: string, shownAs = target, wording = COPY_WORDING): TargetLock {
    const path = join(dirname(target), lockName(target));
    for (let attempt = 0; ; attempt++) {
      try {
        // O_EXCL never follows a symbolic link nor opens what exists (a FIFO there is EEXIST, not a blocking open)
        const fd = openSync(path, "wx", 0o644);
        const place = runPlace();
        writeSync(fd, `pid ${process.pid}\ntemporary ${tempName}\nsince ${new Date().toISOString()}\n${place ? `place ${place}\n` : ""}`);
        return new TargetLock(path, fd);
      } catch (e) {
        rethrowMissingPermission(e);
        if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "EEXIST") throw new Error(busyMessage(shownAs, path, wording));
          throw new Error(`cannot create ${shownAs}: cannot create its lock file ${path} (${code ?? (e as Error).message})`);
        }
      }
      refuseForeignLock(path, shownAs);
      const verdict = abandoned(path);
      if (!verdict) throw new Error(busyMessage(shownAs, path, wording));
      takeOver(path, shownAs, verdict);
    }
  }

  /**
   * Throws when another run holds the lock of `target` (a check before waiting for a peer; acquire() is the real
   * guard). An abandoned lock is taken over here already, with its dead run's temporary file: a receiver that then
   * gets no peer must not leave them in place (issue 32 item 5).
   */
  static checkFree(target: string, shownAs = target, wording = COPY_WORDING): void {
    const path = join(dirname(target), lockName(target));
    if (!lexists(path)) return;
    refuseForeignLock(path, shownAs);
    const verdict = abandoned(path);
    if (!verdict) throw new Error(busyMessage(shownAs, path, wording));
    takeOver(path, shownAs, verdict);
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

function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Throws when the lock's name holds anything but a regular file: never opened, never removed, named with its type. */
function refuseForeignLock(path: string, shownAs: string): void {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return; // gone meanwhile: the next open decides
  }
  if (stat.isFile()) return;
  const kind = stat.isSymbolicLink() ? "a symbolic link" : describeKind(stat);
  throw new Error(
    `cannot create ${shownAs}: its lock file ${path} is ${kind}, not a lock doca-ts makes (a regular file): ` +
      `another process's or a stranger's lock, refused and left as it is; remove it if nothing uses it`,
  );
}

/** Longest lock file read: a few short lines; more is not a doca-ts lock. */
const LOCK_MAX_BYTES = 4096;
const LOCK_READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

/**
 * The lock's fields; `readable` false when it is not a regular file or holds no pid (empty, garbage, cut short). Opened
 * non-blocking and without following a symbolic link, then fstat'd: nothing under that name can make this wait.
 */
function readLock(path: string): { pid?: number; temporary?: string; since?: string; place?: string; readable: boolean } {
  let fd: number;
  try {
    fd = openSync(path, LOCK_READ);
  } catch {
    return { readable: false };
  }
  try {
    if (!fstatSync(fd).isFile()) return { readable: false };
    const bytes = new Uint8Array(LOCK_MAX_BYTES);
    let got = 0;
    for (let n; got < bytes.length && (n = readSync(fd, bytes, got, bytes.length - got, got)) > 0;) got += n;
    const text = new TextDecoder().decode(bytes.subarray(0, got));
    const pid = Number(/^pid (\d+)$/m.exec(text)?.[1]);
    return {
      pid: pid > 0 ? pid : undefined,
      temporary: /^temporary (.+)$/m.exec(text)?.[1],
      since: /^since (.+)$/m.exec(text)?.[1],
      place: /^place ([0-9a-f]{8})$/m.exec(text)?.[1],
      readable: pid > 0,
    };
  } catch {
    return { readable: false };
  } finally {
    closeSync(fd);
  }
}

/** Why a lock counts as abandoned ("gone": its pid is dead here; "stale": not refreshed for 3 s), or false. */
type Abandoned = "gone" | "stale" | false;

function abandoned(path: string): Abandoned {
  const { pid, place } = readLock(path);
  if (pid === process.pid) return false;
  if (pid !== undefined && processAlive(pid) !== false) return false;
  // its owner said where its pid means something: here, so the probe's ESRCH is the last word
  if (pid !== undefined && place !== undefined && place === runPlace()) return "gone";
  try {
    return Date.now() - lstatSync(path).mtimeMs > LOCK_ABANDONED_MS ? "stale" : false;
  } catch {
    return "gone"; // gone meanwhile
  }
}

/**
 * Takes over an abandoned lock (abandoned() said why): its run's temporary file goes first (nobody will finish it; it
 * may be hundreds of MiB), then the lock, with one line saying so. A racing taker loses at acquire's openSync "wx".
 */
function takeOver(path: string, shownAs: string, verdict: "gone" | "stale"): void {
  // Only a regular file is removed: a folder or a FIFO under that name is not what a doca-ts run left.
  const owner = readLock(path);
  const dead = owner.temporary;
  let fate = "";
  if (dead && SUFFIX.test(dead) && !dead.includes("/")) {
    try {
      const kind = foreignKind(join(dirname(path), dead));
      if (kind === undefined && !lstatSync(join(dirname(path), dead)).isDirectory()) {
        unlinkSync(join(dirname(path), dead));
        fate = ` and removed its temporary file ${dead}`;
      } else fate = `; kept ${dead}, which it names: it is ${kind ?? "a folder"}, not a temporary file doca-ts made`;
    } catch { /* already gone */ }
  }
  try {
    unlinkSync(path);
    const who = speaker();
    printError(`${who ? `${who}: ` : ""}${takeoverLine(shownAs, path, owner, verdict)}${fate}`);
  } catch { /* someone else removed it first */ }
}

/** The one line of a takeover: whose lock, and by which rule it was judged abandoned. */
function takeoverLine(shownAs: string, path: string, owner: ReturnType<typeof readLock>, verdict: "gone" | "stale"): string {
  const stale = `not refreshed for ${LOCK_ABANDONED_MS / 1000} s`;
  if (!owner.readable) return `took over an unreadable lock of ${shownAs} (${path}, ${stale})`;
  if (verdict === "gone") return `took over the lock of ${shownAs} from process ${owner.pid}, which is gone`;
  return `took over the lock of ${shownAs} from process ${owner.pid} (written on another host, in another pid namespace ` +
    `or by an older doca-ts; ${stale})`;
}

function busyMessage(shownAs: string, lockPath: string, wording: TargetWording): string {
  const o = readLock(lockPath);
  const who = o.pid ? `process ${o.pid}${o.since ? ` since ${o.since}` : ""}${o.temporary ? `, writing ${o.temporary}` : ""}` : "an unreadable lock";
  return `cannot create ${shownAs}: ${wording.during.replace(/^the /, "another ")} is writing it (${who}; lock ${lockPath}). ` +
    `Wait for it to finish or choose another name (a lock whose process is gone is taken over at once; one from ` +
    `another host or pid namespace, or an unreadable one, once nobody refreshed it for ${LOCK_ABANDONED_MS / 1000} s)`;
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
  /** The target as the user wrote it, for messages. */
  #shownAs: string;

  private constructor(target: string, tempPath: string, fd: number, lock: TargetLock, readonly flushEveryBytes: number, shownAs = target) {
    this.target = target;
    this.#shownAs = shownAs;
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
    const lock = TargetLock.acquire(target, tempName, shownAs, wording);
    let fd: number;
    try {
      fd = openSync(tempPath, "wx", 0o644);
    } catch (e) {
      lock.release();
      rethrowMissingPermission(e);
      const code = (e as NodeJS.ErrnoException).code;
      throw new Error(`cannot create ${target}${code ? ` (${code})` : ""}: ${(e as Error).message.replace(tempPath, "its temporary file")}`);
    }
    const file = new AtomicFile(target, tempPath, fd, lock, flushEveryBytes, shownAs);
    file.#wording = wording;
    return file;
  }

  /** Writes all of `bytes` at `position` (loops over short writes). */
  writeAt(bytes: Uint8Array, position: number): void {
    const fd = this.#open();
    let done = 0;
    try {
      while (done < bytes.length) {
        done += writeSync(fd, bytes, done, bytes.length - done, position + done);
      }
    } catch (e) {
      throw this.#failure(e, "writing");
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
    try {
      while (done < bytes.length) {
        done += await new Promise<number>((resolve, reject) =>
          write(fd, bytes, done, bytes.length - done, position + done, (err, n) => (err ? reject(err) : resolve(n)))
        );
      }
    } catch (e) {
      throw this.#failure(e, "writing");
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
      throw this.#failure(this.#flushError, "flushing to disk");
    }
    flushAndClose(fd, () => this.abort(), (e) => this.#failure(e, "flushing to disk"));
    this.#fd = undefined;
    try {
      publishWithoutReplacing(this.tempPath, this.target, this.#wording);
    } catch (e) {
      try {
        unlinkSync(this.tempPath);
      } catch { /* already gone */ }
      this.#lock.release();
      this.#unregister();
      throw this.#failure(e, "giving it its name");
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

  /** An error of writing the file, naming it as the user wrote it (ENOSPC: "the file system is full"). */
  #failure(error: unknown, doing: string): Error {
    return writeFailure(error, this.#shownAs, doing, `${this.#wording.product} was discarded`);
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
