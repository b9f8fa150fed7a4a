/**
 * Finds DOCA's three libraries: the libDir option / DOCA_LIB_DIR first, then NVIDIA's install folders, then this
 * repository's software-device build (build/sim/lib, resolved from this module's own URL so the working directory
 * does not matter). A failure lists every path tried and how to fix it.
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const DOCA_LIBRARIES = ["common", "dma", "comch"] as const;
export type DocaLibraryName = typeof DOCA_LIBRARIES[number];

/** File name suffixes tried, in order: dev symlink, DOCA 3.x soname, DOCA 2.x soname. */
const SUFFIXES = [".so", ".so.3", ".so.2"];

export interface DiscoveredLibraries {
  dir: string;
  files: Record<DocaLibraryName, string>;
}

export function candidateDirs(libDir?: string): string[] {
  const arch = process.arch === "arm64" ? "aarch64" : process.arch === "x64" ? "x86_64" : process.arch;
  const explicit = libDir ?? process.env.DOCA_LIB_DIR;
  const dirs = [
    `/opt/mellanox/doca/lib/${arch}-linux-gnu`,
    "/opt/mellanox/doca/lib64",
    fileURLToPath(new URL("../build/sim/lib", import.meta.url)),
  ];
  // An explicit directory is the only one tried: silently falling back to another DOCA would hide mistakes.
  return explicit ? [explicit] : dirs;
}

function findIn(dir: string, lib: DocaLibraryName, tried: string[]): string | undefined {
  for (const suffix of SUFFIXES) {
    const path = join(dir, `libdoca_${lib}${suffix}`);
    tried.push(path);
    if (existsSync(path)) return path;
  }
  return undefined;
}

export function discoverLibraries(libDir?: string): DiscoveredLibraries {
  const tried: string[] = [];
  for (const dir of candidateDirs(libDir)) {
    const common = findIn(dir, "common", tried);
    if (!common) continue;
    const dma = findIn(dir, "dma", tried);
    const comch = findIn(dir, "comch", tried);
    if (dma && comch) return { dir, files: { common, dma, comch } };
  }
  throw new Error(
    `DOCA libraries not found (libdoca_common, libdoca_dma, libdoca_comch). Tried:\n  ${tried.join("\n  ")}\n` +
      "Fix: set DOCA_LIB_DIR (or pass { libDir }) to the folder holding them, or build the software DOCA device " +
      "with `deno task sim:build` (it lands in build/sim/lib).",
  );
}
