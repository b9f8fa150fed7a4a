/**
 * Finds DOCA's three libraries: the libDir option / DOCA_LIB_DIR first, then NVIDIA's install folders, then this
 * repository's software-device build (build/sim/lib, resolved from this module's own URL so the working directory
 * does not matter), then the per-user cache of the software device. When nothing is found and the software
 * device's C sources are at hand (a clone, or the npm package), it is built into that cache on first use with the
 * system C compiler; without a compiler the error says so. A failure lists every path tried and how to fix it.
 */
import console from "node:console";
import { existsSync, readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { buildSoftwareDevice, packageRoot, SimBuildError, simSourcesPresent } from "../scripts/sim-builder.ts";

export const DOCA_LIBRARIES = ["common", "dma", "comch"] as const;
export type DocaLibraryName = typeof DOCA_LIBRARIES[number];

/** File name suffixes tried, in order: dev symlink, DOCA 3.x soname, DOCA 2.x soname. */
const SUFFIXES = [".so", ".so.3", ".so.2"];

export interface DiscoveredLibraries {
  dir: string;
  files: Record<DocaLibraryName, string>;
}

/** One folder discovery looked in, and what it found there. */
export interface CandidateReport {
  dir: string;
  /** Why this folder is a candidate. */
  origin: "libDir option" | "DOCA_LIB_DIR" | "NVIDIA install" | "repository build" | "user cache";
  /** Every file name tried, in order. */
  tried: string[];
  /** The files found (all three when the folder was accepted). */
  found: Partial<Record<DocaLibraryName, string>>;
  /** Why the folder was not used; absent for the accepted one. */
  rejected?: string;
}

const ARCH = process.arch === "arm64" ? "aarch64" : process.arch === "x64" ? "x86_64" : process.arch;

function packageVersion(): string {
  try {
    return JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).version ?? "dev";
  } catch {
    return "dev";
  }
}

/**
 * Where the software device is built for a library user: $XDG_CACHE_HOME/doca-ts/sim-<version>-<arch>
 * ($HOME/.cache without XDG_CACHE_HOME; $HOME, not os.homedir(), which Deno guards behind --allow-sys).
 */
export function softwareDeviceCacheDir(): string {
  const cache = process.env.XDG_CACHE_HOME || join(process.env.HOME || "/tmp", ".cache");
  return join(cache, "doca-ts", `sim-${packageVersion()}-${ARCH}`);
}

function repositoryBuild(): string | undefined {
  const url = new URL("../build/sim/lib", import.meta.url);
  return url.protocol === "file:" ? fileURLToPath(url) : undefined;
}

/** The folders tried, in order, with why each is a candidate. */
export function candidates(libDir?: string): { dir: string; origin: CandidateReport["origin"] }[] {
  // An explicit directory is the only one tried: silently falling back to another DOCA would hide mistakes.
  if (libDir) return [{ dir: libDir, origin: "libDir option" }];
  if (process.env.DOCA_LIB_DIR) return [{ dir: process.env.DOCA_LIB_DIR, origin: "DOCA_LIB_DIR" }];
  const repo = repositoryBuild();
  return [
    { dir: `/opt/mellanox/doca/lib/${ARCH}-linux-gnu`, origin: "NVIDIA install" as const },
    { dir: "/opt/mellanox/doca/lib64", origin: "NVIDIA install" as const },
    ...(repo ? [{ dir: repo, origin: "repository build" as const }] : []),
    { dir: join(softwareDeviceCacheDir(), "lib"), origin: "user cache" as const },
  ];
}

export function candidateDirs(libDir?: string): string[] {
  return candidates(libDir).map((c) => c.dir);
}

/** Looks in every candidate folder; the accepted one (if any) is the first without `rejected`. */
export function probeCandidates(libDir?: string): CandidateReport[] {
  const reports: CandidateReport[] = [];
  for (const { dir, origin } of candidates(libDir)) {
    const report: CandidateReport = { dir, origin, tried: [], found: {} };
    reports.push(report);
    for (const lib of DOCA_LIBRARIES) {
      const path = SUFFIXES.map((suffix) => join(dir, `libdoca_${lib}${suffix}`)).find((path) => {
        report.tried.push(path);
        return existsSync(path);
      });
      if (path) report.found[lib] = path;
    }
    const missing = DOCA_LIBRARIES.filter((lib) => !report.found[lib]);
    if (missing.length === 0) return reports;
    report.rejected = !existsSync(dir)
      ? "folder does not exist"
      : `no ${missing.map((lib) => `libdoca_${lib}`).join(", ")} (${SUFFIXES.join(", ")})` +
        (missing.includes("comch") && missing.length === 1 ? ": DOCA older than 2.7 has no libdoca_comch" : "");
  }
  return reports;
}

function accepted(reports: CandidateReport[]): DiscoveredLibraries | undefined {
  const ok = reports.find((r) => !r.rejected);
  return ok ? { dir: ok.dir, files: ok.found as Record<DocaLibraryName, string> } : undefined;
}

/**
 * Builds the software device into the user cache; returns why it could not, or undefined on success.
 * Deno needs --allow-run and --allow-write for this (once: later runs find the cache).
 */
function buildIntoCache(): string | undefined {
  if (!simSourcesPresent()) return "the software device's C sources are not part of this installation";
  const outDir = softwareDeviceCacheDir();
  try {
    buildSoftwareDevice({
      outDir,
      tests: false,
      log: (line) => line.startsWith("built") && console.error(`doca-ts: software DOCA device ${line}`),
    });
    return undefined;
  } catch (error) {
    if (error instanceof SimBuildError) return `building the software DOCA device into ${outDir} failed: ${error.message}`;
    const name = (error as Error)?.name;
    if (name === "NotCapable" || name === "PermissionDenied") {
      return `building the software DOCA device into ${outDir} needs --allow-run and --allow-write under Deno ` +
        `(${(error as Error).message})`;
    }
    throw error;
  }
}

export function discoverLibraries(libDir?: string): DiscoveredLibraries {
  let reports = probeCandidates(libDir);
  let found = accepted(reports);
  let buildProblem: string | undefined;
  if (!found && !libDir && !process.env.DOCA_LIB_DIR) {
    buildProblem = buildIntoCache();
    if (!buildProblem) {
      reports = probeCandidates(libDir);
      found = accepted(reports);
    }
  }
  if (found) return found;
  const tried = reports.flatMap((r) => r.tried);
  throw new Error(
    `DOCA libraries not found (libdoca_common, libdoca_dma, libdoca_comch). Tried:\n  ${tried.join("\n  ")}\n` +
      (buildProblem ? `Software device: ${buildProblem}.\n` : "") +
      "Fix: set DOCA_LIB_DIR (or pass { libDir }) to the folder holding them, or build the software DOCA device " +
      "with `deno task sim:build` (it lands in build/sim/lib).",
  );
}

/**
 * An optional DOCA library beside the required ones (libdoca_rdma): its path in the folder discovery accepted, or
 * undefined. Only that folder is looked in, so the optional library always comes from the same DOCA as the others.
 */
export function findOptionalLibrary(dir: string, lib: "rdma"): string | undefined {
  return SUFFIXES.map((suffix) => join(dir, `libdoca_${lib}${suffix}`)).find((path) => existsSync(path));
}
