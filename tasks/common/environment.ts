/**
 * The environment variables that change what a task does (DOCA_SIM_SIDE, DOCA_SIM_DIR, DOCA_LIB_DIR), named where
 * they mattered: a stray `DOCA_SIM_SIDE=dpu` in a shell made comch-client fail with NOT_SUPPORTED and dma-copy ask
 * for -r, neither saying why. A choice the environment made is noted here (noteFromEnvironment), and runMain adds
 * the notes to a failure's message; the software device's folder is named even when it is the default.
 */
import { lstatSync, statSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import process from "node:process";
import { effectiveUid } from "../../ffi/load/trusted-path.ts";
import { rethrowMissingPermission } from "./permission.ts";

const notes = new Map<string, string>();

/** Remembers that `variable` decided something (`what`), for the message of a failure. */
export function noteFromEnvironment(variable: string, what: string): void {
  notes.set(variable, what);
}

/** The notes for a failure's message ("" when the environment decided nothing). */
export function environmentNotes(): string {
  if (notes.size === 0) return "";
  return ` [from the environment: ${[...notes.values()].join("; ")}]`;
}

/** Forgets every note (tests). */
export function clearEnvironmentNotes(): void {
  notes.clear();
}

/**
 * $XDG_RUNTIME_DIR when it is usable: the XDG spec says a relative value is ignored, as if unset (two sides started
 * from different folders would otherwise pick different folders); the software device's C code applies the same rule.
 */
export function runtimeDirFromXdg(env: Record<string, string | undefined> = process.env): string | undefined {
  const xdg = env.XDG_RUNTIME_DIR;
  return xdg && isAbsolute(xdg) ? xdg : undefined;
}

/**
 * The software device's rendezvous folder, as its C code chooses it (sim/src/common/runtime_dir.c). The uid of the
 * /tmp fallback comes from effectiveUid, which uses only what the task was granted (process.geteuid() would need
 * Deno's --allow-sys, which dma-copy and comch-client do not declare: naming the folder made them fail before any
 * work); when no grant reveals it, the folder is named with "<your uid>".
 */
export function softwareDeviceFolder(env: Record<string, string | undefined> = process.env): string {
  if (env.DOCA_SIM_DIR) return env.DOCA_SIM_DIR;
  const xdg = runtimeDirFromXdg(env);
  if (xdg) return `${xdg}/doca-sim`;
  return `/tmp/doca-sim-${effectiveUid() ?? "<your uid>"}`;
}

/** "DOCA_SIM_DIR=/x" or "DOCA_SIM_DIR unset: the software device's default folder /run/user/1000/doca-sim". */
export function softwareDeviceFolderNote(env: Record<string, string | undefined> = process.env): string {
  return env.DOCA_SIM_DIR
    ? `DOCA_SIM_DIR=${env.DOCA_SIM_DIR}`
    : `DOCA_SIM_DIR unset: the software device's default folder ${softwareDeviceFolder(env)}`;
}

/**
 * Why the software device would refuse its folder, by its own rules (sim/src/common/runtime_dir.c: created with
 * mode 0700 when missing; refused when it is a symbolic link, not a directory, another uid's, or writable by group
 * or others), or undefined when it can use it. Nothing is created: doctor asks this too. The device only logs its
 * refusal and fails Comch with NOT_PERMITTED (a client even keeps retrying until its --timeout), so the tasks ask
 * first and name the variable.
 */
/** Longest socket path (sun_path less its terminating NUL) and the device's socket name with its slash. */
const UNIX_SOCKET_PATH_MAX = 107;
const COMCH_SOCKET_NAME_BYTES = "/comch-0000_03_00.1-0123456789abcdef.sock".length;
const utf8Length = (text: string) => new TextEncoder().encode(text).length;

export function softwareDeviceFolderProblem(env: Record<string, string | undefined> = process.env): string | undefined {
  const dir = softwareDeviceFolder(env);
  // The device's Comch sockets are FOLDER/comch-PCI-HASH.sock: a Unix socket path holds at most 107 bytes
  // (sim/src/comch/comch_transport.c; the device would fail doca_ctx_start with INITIALIZATION, naming nothing).
  const longest = utf8Length(dir) + COMCH_SOCKET_NAME_BYTES;
  if (longest > UNIX_SOCKET_PATH_MAX) {
    return `its path is ${utf8Length(dir)} bytes long: the Comch sockets inside it would need ${longest}, ` +
      `more than the ${UNIX_SOCKET_PATH_MAX} a Unix socket path holds (choose a shorter folder)`;
  }
  let st;
  try {
    st = lstatSync(dir);
  } catch (e) {
    rethrowMissingPermission(e);
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return `cannot look at it: ${(e as Error).message}`;
    return creationProblem(dir);
  }
  if (st.isSymbolicLink()) return "it is a symbolic link (the device refuses one: someone could point it elsewhere)";
  if (!st.isDirectory()) return "it is not a directory";
  const uid = effectiveUid();
  if (uid !== undefined && st.uid !== uid) return `it is owned by uid ${st.uid}, not by you (uid ${uid})`;
  const mode = st.mode & 0o7777;
  if ((mode & 0o022) !== 0) {
    return `it is writable by ${(mode & 0o002) !== 0 ? "others" : "its group"} (mode ${mode.toString(8).padStart(4, "0")}; ` +
      `chmod 700 it)`;
  }
  return undefined;
}

/**
 * Why mkdir(dir) would fail (the device creates only the last folder, never its parents). Write access to the parent
 * is judged from its mode and owner: node:fs's accessSync would need Deno's --allow-sys. Group membership is not
 * known without it either, so a group-writable parent counts as writable (no false alarm).
 */
function creationProblem(dir: string): string | undefined {
  const parent = dirname(dir);
  let st;
  try {
    st = statSync(parent);
  } catch (e) {
    rethrowMissingPermission(e);
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return `cannot create it: ${parent} does not exist`;
    return `cannot create it: ${(e as Error).message}`;
  }
  if (!st.isDirectory()) return `cannot create it: ${parent} is not a directory`;
  const uid = effectiveUid();
  if (uid === undefined || uid === 0) return undefined;
  const bits = st.uid === uid ? (st.mode >> 6) & 3 : (st.mode & 0o030) === 0o030 ? 3 : st.mode & 3;
  return bits === 3 ? undefined : `cannot create it: you cannot write in ${parent}`;
}

/** "DOCA_SIM_DIR=/x cannot be used by the software device: it is not a directory", or undefined when usable. */
export function softwareDeviceFolderRefusal(env: Record<string, string | undefined> = process.env): string | undefined {
  const why = softwareDeviceFolderProblem(env);
  if (why === undefined) return undefined;
  const which = env.DOCA_SIM_DIR
    ? `DOCA_SIM_DIR=${env.DOCA_SIM_DIR}`
    : `the software device's default folder ${softwareDeviceFolder(env)} (DOCA_SIM_DIR unset${
      runtimeDirFromXdg(env)
        ? `, from XDG_RUNTIME_DIR=${env.XDG_RUNTIME_DIR}`
        : env.XDG_RUNTIME_DIR
        ? `, XDG_RUNTIME_DIR=${env.XDG_RUNTIME_DIR} ignored: not an absolute path`
        : ""
    })`;
  return `${which} cannot be used by the software device: ${why}`;
}

/** softwareDeviceFolderRefusal with what to do, for a task's error; undefined when the folder is usable. */
export function softwareDeviceFolderError(env: Record<string, string | undefined> = process.env): string | undefined {
  const refusal = softwareDeviceFolderRefusal(env);
  if (refusal === undefined) return undefined;
  return `${refusal}; it keeps its Comch sockets there and uses only a folder of yours that nobody else can write ` +
    `in: set DOCA_SIM_DIR to such a folder (a missing one is created with mode 0700), the same on both sides`;
}

/**
 * The --help paragraph of every task whose two sides meet through the software device (dma-copy, comch-server,
 * comch-client, comch-stream): the one setting both sides must share, and its default, as doctor reports it.
 */
export const SOFTWARE_DEVICE_FOLDER_HELP =
  `On the software device both sides meet in one folder: DOCA_SIM_DIR, by default $XDG_RUNTIME_DIR/doca-sim, else
/tmp/doca-sim-<your uid>. Both sides must use the same folder and run as the same user (doctor shows it).`;
