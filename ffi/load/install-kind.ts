/**
 * Whether this copy of doca-ts is a package (npm tarball, vendored copy) rather than a clone of the repository, so
 * that messages name fixes that apply: a package user has no `deno task sim:build`. Cheap: one stat, when asked.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function runningFromPackage(): boolean {
  try {
    return !existsSync(fileURLToPath(new URL("../../.git", import.meta.url)));
  } catch {
    return true;
  }
}

/** How to get the software DOCA device, for this kind of install. */
export function simBuildFix(): string {
  return runningFromPackage()
    ? "install a C compiler (cc, or set CC) and doca-ts builds the software DOCA device into your cache " +
      "(XDG_CACHE_HOME or ~/.cache)/doca-ts on first use"
    : "build the software DOCA device with `deno task sim:build` (it lands in build/sim/lib)";
}
