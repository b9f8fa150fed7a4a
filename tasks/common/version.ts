/**
 * `--version` for every task: doca-ts's version and the DOCA it loads (NVIDIA's or the software device, and from
 * where), the first thing a bug report needs. The version is package.json's (tests/tasks-conventions.test.ts keeps
 * them equal; a JSON import would need import attributes that Node 20.0-20.9 spell differently).
 */
import { loadDoca } from "../../ffi/native/library.ts";

export const DOCA_TS_VERSION = "0.1.0";

/** The --help line for it, aligned at `column`. */
export function versionHelpLine(column = 25): string {
  return `      --version`.padEnd(column) + "print the versions of doca-ts and of the DOCA it loads, and exit";
}

/** "doca-ts TASK 0.1.0; DOCA 3.3.0-sim from DIR (software device)", or why DOCA could not be loaded. */
export function versionLine(task: string): string {
  let doca: string;
  try {
    const info = loadDoca();
    doca = `DOCA ${info.version} from ${info.dir}${info.isSoftwareDevice ? " (software device)" : ""}`;
  } catch (e) {
    doca = `DOCA not loaded: ${(e as Error).message.split("\n")[0]} (doctor says more)`;
  }
  return `doca-ts ${task} ${DOCA_TS_VERSION}; ${doca}`;
}
