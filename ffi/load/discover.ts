/**
 * Finds DOCA's three libraries: the libDir option / DOCA_LIB_DIR first, then NVIDIA's install folders, then this
 * repository's software-device build (build/sim/lib, resolved from this module's own URL so the working directory
 * does not matter), then the per-user cache of the software device. When nothing is found and the software
 * device's C sources are at hand (a clone, or the npm package), it is built into that cache on first use with the
 * system C compiler; without a compiler the error says so. A failure lists every path tried and how to fix it.
 *
 * Code is loaded only from folders this user controls: each candidate folder and each library file in it is
 * checked by ffi/load/trusted-path.ts (owned by the user or root, nobody else may write it or anything on the way to
 * it, no link planted by someone else) before it is accepted; an untrusted one is rejected with the reason, and
 * never built into. Without $XDG_CACHE_HOME and $HOME the cache is a private folder /tmp/doca-ts-<uid> created
 * with mode 0700, used only while it is ours alone.
 */
import console from "node:console";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { isAbsolute, join } from "node:path";
import { buildSoftwareDevice, packageRoot, SimBuildError, simSourcesPresent } from "./sim-build/builder.ts";
import { checkTrustedPath, effectiveUid, untrustedReason, UntrustedPathError } from "./trusted-path.ts";
import { simBuildFix } from "./install-kind.ts";
import { OPTIONAL_DOCA_LIBRARIES, type OptionalDocaLibrary } from "./types.ts";

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
  /** True when it was rejected by a trust check (it held the libraries). */
  untrusted?: boolean;
  /** The trust checks made (the folder, then each library file found), each with why it failed. */
  trust: { path: string; trusted: boolean; reason?: string }[];
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
 * The folder holding the per-user cache: $XDG_CACHE_HOME (when absolute, as the XDG spec requires), else
 * $HOME/.cache ($HOME, not os.homedir(), which Deno guards behind --allow-sys), else a private /tmp/doca-ts-<uid>
 * (never a folder shared with other users).
 */
function cacheRoot(): { dir: string; private?: string } {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return { dir: xdg };
  const home = process.env.HOME;
  if (home && isAbsolute(home)) return { dir: join(home, ".cache") };
  const uid = effectiveUid();
  const own = `/tmp/doca-ts-${uid ?? "unknown-user"}`;
  return { dir: own, private: own };
}

/** Where the software device is built for a library user: <cache root>/doca-ts/sim-<version>-<arch>. */
export function softwareDeviceCacheDir(): string {
  return join(cacheRoot().dir, "doca-ts", `sim-${packageVersion()}-${ARCH}`);
}

/**
 * Creates the cache folder, mode 0700, and checks it is ours alone. The /tmp fallback is created by this user
 * exclusively (mkdir fails if it exists); one that already exists is used only if it passes the trust check (ours,
 * mode without group/other write, reached through no link of someone else's) — else the error names the fix.
 */
function prepareCache(outDir: string): void {
  const root = cacheRoot();
  if (root.private) preparePrivateFolder(root.private);
  mkdirSync(outDir, { recursive: true, mode: 0o700 });
}

/**
 * Creates `folder` with mode 0700 (mkdir, which fails rather than follow or reuse anything), or accepts an existing
 * one only when checkTrustedPath does (ours or root's, no group/other write, no foreign link on the way); throws
 * SimBuildError naming the fix otherwise. Exported for tests.
 */
export function preparePrivateFolder(folder: string): void {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") throw e;
  }
  try {
    checkTrustedPath(folder, "folder");
  } catch (e) {
    if (!(e instanceof UntrustedPathError)) throw e;
    throw new SimBuildError(
      `there is no $HOME or $XDG_CACHE_HOME, and the private fallback ${folder} is not ours alone: ${e.message}. ` +
        `Set XDG_CACHE_HOME (or HOME) to a folder of your own, or remove ${folder}`,
    );
  }
}

function repositoryBuild(): string | undefined {
  const url = new URL("../../build/sim/lib", import.meta.url);
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
    const report: CandidateReport = { dir, origin, tried: [], found: {}, trust: [] };
    reports.push(report);
    for (const lib of DOCA_LIBRARIES) {
      const path = SUFFIXES.map((suffix) => join(dir, `libdoca_${lib}${suffix}`)).find((path) => {
        report.tried.push(path);
        return existsSync(path);
      });
      if (path) report.found[lib] = path;
    }
    const missing = DOCA_LIBRARIES.filter((lib) => !report.found[lib]);
    if (missing.length === 0) {
      const distrust = trustChecks(report);
      if (!distrust) return reports;
      report.rejected = distrust;
      report.untrusted = true;
      if (origin !== "libDir option" && origin !== "DOCA_LIB_DIR") warnUntrusted(report);
      continue;
    }
    report.rejected = !existsSync(dir)
      ? "folder does not exist"
      : `no ${missing.map((lib) => `libdoca_${lib}`).join(", ")} (${SUFFIXES.join(", ")})` +
        (missing.includes("comch") && missing.length === 1 ? ": DOCA older than 2.7 has no libdoca_comch" : "");
  }
  return reports;
}

/** Checks the folder and each library in it (libdoca_rdma too); returns the first reason for distrust, if any. */
function trustChecks(report: CandidateReport): string | undefined {
  const uid = effectiveUid();
  let first: string | undefined;
  const check = (path: string, kind: "folder" | "file") => {
    const reason = untrustedReason(path, kind, uid);
    report.trust.push({ path, trusted: !reason, ...(reason ? { reason } : {}) });
    first ??= reason;
  };
  check(report.dir, "folder");
  for (const file of Object.values(report.found)) check(file, "file");
  // The optional libraries (libdoca_rdma, _compress, _sha, _erasure_coding, _aes_gcm) are loaded from the same folder
  // when present: they are code too, checked the same way.
  for (const lib of OPTIONAL_DOCA_LIBRARIES) {
    const file = findOptionalLibrary(report.dir, lib);
    if (file) check(file, "file");
  }
  return first;
}

const warned = new Set<string>();

/** A folder holding DOCA that we will not load is worth one line on stderr: the user expected it to be used. */
function warnUntrusted(report: CandidateReport): void {
  if (warned.has(report.dir)) return;
  warned.add(report.dir);
  console.error(`doca-ts: not loading DOCA from ${report.dir} [${report.origin}]: ${report.rejected}`);
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
    prepareCache(outDir);
    // The first use compiles for several seconds: say so before, not only after.
    console.error(`doca-ts: no DOCA installation found; building the software DOCA device into ${outDir} (once, about 15 s)`);
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
    if (typeof (error as { code?: unknown })?.code === "string") return `cannot create ${outDir}: ${(error as Error).message}`;
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
  const distrusted = reports.filter((r) => r.untrusted);
  throw new Error(
    `DOCA libraries not found (libdoca_common, libdoca_dma, libdoca_comch). Tried:\n  ${tried.join("\n  ")}\n` +
      distrusted.map((r) => `Refused ${r.dir}: ${r.rejected}\n`).join("") +
      (buildProblem ? `Software device: ${buildProblem}.\n` : "") +
      `Fix: set DOCA_LIB_DIR (or pass { libDir }) to the folder holding them, or ${simBuildFix()}.`,
  );
}

/**
 * An optional DOCA library beside the required ones (libdoca_rdma and the accelerators): its path in the folder discovery accepted, or
 * undefined. Only that folder is looked in, so the optional library always comes from the same DOCA as the others.
 */
export function findOptionalLibrary(dir: string, lib: OptionalDocaLibrary): string | undefined {
  return SUFFIXES.map((suffix) => join(dir, `libdoca_${lib}${suffix}`)).find((path) => existsSync(path));
}
