/**
 * Code is loaded only from folders the user controls. Before doca-ts dlopens a DOCA library, or compiles the software
 * device into a folder, the path is walked from "/" one component at a time, following symbolic links the way the
 * kernel would, and refused when anyone but this user or root could have put something there:
 *
 *   - every component (folder, symbolic link, the final file or folder) is owned by this process's effective uid or
 *     by root;
 *   - every folder passed through is not writable by group or others, unless it has the sticky bit (as /tmp does):
 *     there others can add entries but not replace ours, and the entries we pass through must be ours or root's
 *     anyway, so a link planted there by someone else is refused;
 *   - the final folder or file is not writable by group or others at all, sticky or not;
 *   - at most 40 symbolic links (as the kernel's ELOOP limit).
 *
 * Group-writable counts as untrusted even when the group holds only this user: the folder's owner can say so with
 * `chmod g-w`. Only node:fs lstat/readlink (Deno's --allow-read) and this process's uid (effectiveUid) are needed.
 */
import { lstatSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { backend } from "./loaders/select.ts";

const MAX_LINKS = 40;

type DenoPermissions = { permissions: { querySync(d: { name: string }): { state: string } }; uid(): number | null };

/** Whether Deno already grants `name` (asked without prompting); false outside Deno. */
function denoGrants(name: string): boolean {
  const deno = (globalThis as { Deno?: DenoPermissions }).Deno;
  try {
    return deno?.permissions.querySync({ name }).state === "granted";
  } catch {
    return false;
  }
}

let knownUid: number | undefined;

/**
 * This process's effective uid, learned without a permission prompt: /proc/self/status or process.geteuid() on
 * Node and Bun; on Deno (which guards /proc/self behind --allow-all and geteuid behind --allow-sys) whichever of
 * --allow-sys, --allow-ffi (libc's geteuid) or --allow-run (`id -u`) the program already has.
 */
export function effectiveUid(): number | undefined {
  if (knownUid !== undefined) return knownUid;
  const deno = (globalThis as { Deno?: DenoPermissions }).Deno;
  const attempts: (() => number | undefined | null)[] = deno
    ? [
      () => (denoGrants("sys") ? deno.uid() : undefined),
      () => (denoGrants("ffi") ? libcGeteuid() : undefined),
      () => (denoGrants("run") ? idU() : undefined),
    ]
    : [
      () => Number(readFileSync("/proc/self/status", "utf8").match(/^Uid:\s+\d+\s+(\d+)/m)?.[1] ?? NaN),
      () => (process as { geteuid?: () => number }).geteuid?.(),
    ];
  for (const attempt of attempts) {
    try {
      const uid = attempt();
      if (typeof uid === "number" && Number.isInteger(uid) && uid >= 0) return (knownUid = uid);
    } catch { /* the next way */ }
  }
  return undefined;
}

function libcGeteuid(): number | undefined {
  const bound = backend().bind("libc.so.6", { geteuid: { lib: "libc", params: [], result: "u32" } }, "libc");
  return (bound.fns.geteuid as (() => number) | undefined)?.();
}

function idU(): number | undefined {
  const r = spawnSync("id", ["-u"], { encoding: "utf8" });
  return r.status === 0 ? Number(r.stdout.trim()) : undefined;
}

/**
 * In a user namespace that does not map the initial namespace's root (e.g. `unshare -r` as an ordinary user), files
 * owned by root show up as the overflow uid (65534), like every other unmapped owner: then that uid counts as root,
 * since the two cannot be told apart from inside (a limit docs/FAULTS.md states). Undefined when root is mapped.
 */
function unmappedOwner(): number | undefined {
  try {
    const rootMapped = readFileSync("/proc/self/uid_map", "utf8").trim().split("\n").some((line) => {
      const [, outside, count] = line.trim().split(/\s+/).map(Number);
      return outside <= 0 && 0 < outside + count;
    });
    if (rootMapped) return undefined;
    return Number(readFileSync("/proc/sys/kernel/overflowuid", "utf8").trim());
  } catch {
    return undefined;
  }
}

/** A path refused by checkTrustedPath: which component and why, with the fix to try. */
export class UntrustedPathError extends Error {
  override name = "UntrustedPathError";
  constructor(readonly path: string, readonly component: string, readonly why: string, readonly fix: string) {
    super(`${path} is not trusted: ${component === path ? "it" : component} ${why} (fix: ${fix})`);
  }
}

const modeText = (st: Stats) => `0${(st.mode & 0o7777).toString(8)}`;

/**
 * Checks that `path` (a folder or a file, as `kind` says) is controlled by this user or root; throws
 * UntrustedPathError naming the component and the reason otherwise. A path that does not exist throws the fs
 * error (ENOENT), so the caller can tell "missing" from "untrusted".
 */
export function checkTrustedPath(path: string, kind: "folder" | "file", uid: number | undefined = effectiveUid()): void {
  // Not path.resolve(): it folds "link/.." lexically, while the kernel (and so dlopen) goes up from the link's
  // target. The walk below takes ".." the kernel's way, so it checks what will really be opened.
  const target = isAbsolute(path) ? path : `${process.cwd()}/${path}`;
  if (uid === undefined) {
    throw new UntrustedPathError(target, target, "cannot be checked: this process's user is unknown", "under Deno grant --allow-ffi, --allow-sys or --allow-run (the tasks do)");
  }
  const outsider = unmappedOwner();
  const ours = (st: Stats) => st.uid === 0 || st.uid === uid || st.uid === outsider;
  const owner = (component: string, st: Stats) => {
    if (!ours(st)) {
      throw new UntrustedPathError(
        target,
        component,
        `is owned by uid ${st.uid}, not by this user (uid ${uid}) or root${st.isSymbolicLink() ? " (a symbolic link someone else planted)" : ""}`,
        `use a folder of your own; or, if ${component} is really yours, chown it`,
      );
    }
  };
  /** A folder we look inside: nobody else may rename or replace its entries. */
  const passable = (folder: string, st: Stats) => {
    if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) {
      throw new UntrustedPathError(
        target,
        folder,
        `may be changed by ${st.mode & 0o002 ? "every user" : "its group"} (mode ${modeText(st)}, no sticky bit)`,
        `chmod go-w ${folder}`,
      );
    }
  };

  let current = "/";
  let st = lstatSync(current);
  owner(current, st);
  const pending = target.split("/").filter(Boolean);
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === ".") continue;
    if (name === "..") {
      current = dirname(current); // `current` never holds a link: its parent is its real parent
      st = lstatSync(current);
      continue;
    }
    if (!st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: ${current} is not a folder`), { code: "ENOTDIR" });
    passable(current, st);
    const next = join(current, name);
    const entry = lstatSync(next);
    owner(next, entry);
    if (entry.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new UntrustedPathError(target, next, `leads through more than ${MAX_LINKS} symbolic links`, "shorten the chain");
      const to = readlinkSync(next);
      pending.unshift(...to.split("/").filter(Boolean));
      if (isAbsolute(to)) {
        current = "/";
        st = lstatSync(current);
      }
      continue;
    }
    current = next;
    st = entry;
  }
  if (kind === "folder" ? !st.isDirectory() : !st.isFile()) {
    throw new UntrustedPathError(target, current, `is not a ${kind === "folder" ? "folder" : "regular file"}`, `name a ${kind}`);
  }
  if ((st.mode & 0o022) !== 0) {
    throw new UntrustedPathError(
      target,
      current,
      `may be written by ${st.mode & 0o002 ? "every user" : "its group"} (mode ${modeText(st)})`,
      `chmod go-w ${current}`,
    );
  }
}

/** checkTrustedPath as a verdict: undefined when trusted, else why not (a missing path included). */
export function untrustedReason(path: string, kind: "folder" | "file", uid?: number): string | undefined {
  try {
    checkTrustedPath(path, kind, uid ?? effectiveUid());
    return undefined;
  } catch (e) {
    if (e instanceof UntrustedPathError) return e.message;
    const code = (e as { code?: string }).code;
    return code === "ENOENT" ? `${path} does not exist` : `${path} cannot be checked: ${(e as Error).message}`;
  }
}
