/**
 * The environment variables that change what a task does (DOCA_SIM_SIDE, DOCA_SIM_DIR, DOCA_LIB_DIR), named where
 * they mattered: a stray `DOCA_SIM_SIDE=dpu` in a shell made comch-client fail with NOT_SUPPORTED and dma-copy ask
 * for -r, neither saying why. A choice the environment made is noted here (noteFromEnvironment), and runMain adds
 * the notes to a failure's message; the software device's folder is named even when it is the default.
 */
import process from "node:process";

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

/** The software device's rendezvous folder, as its C code chooses it (sim/src/common/runtime_dir.c). */
export function softwareDeviceFolder(env: Record<string, string | undefined> = process.env): string {
  if (env.DOCA_SIM_DIR) return env.DOCA_SIM_DIR;
  if (env.XDG_RUNTIME_DIR) return `${env.XDG_RUNTIME_DIR}/doca-sim`;
  const uid = typeof process.geteuid === "function" ? process.geteuid() : "UID";
  return `/tmp/doca-sim-${uid}`;
}

/** "DOCA_SIM_DIR=/x" or "DOCA_SIM_DIR unset: the software device's default folder /run/user/1000/doca-sim". */
export function softwareDeviceFolderNote(env: Record<string, string | undefined> = process.env): string {
  return env.DOCA_SIM_DIR
    ? `DOCA_SIM_DIR=${env.DOCA_SIM_DIR}`
    : `DOCA_SIM_DIR unset: the software device's default folder ${softwareDeviceFolder(env)}`;
}
