/**
 * Builds the software DOCA device with a C compiler. Part of the library (it lives in ffi/ so that ffi/ imports
 * nothing outside ffi/): the library builds the device on demand into a per-user cache when doca-ts is used from a
 * package (ffi/load/discover.ts), and `deno task sim:build` (scripts/build-sim.ts) is a command line over it. Only
 * node: modules, so it runs under Deno, Bun and Node. The output folder must be one only this user (or root)
 * controls (ffi/load/trusted-path.ts): it is checked before anything is compiled into it.
 *
 *   <out>/lib/libdoca_common.so.N  sim/src/common/*.c: devices, maps, buffers, progress engines, contexts
 *   <out>/lib/libdoca_X.so.N       sim/src/X/*.c for every other folder X (dma, comch, rdma, ...), linked to
 *                                  libdoca_common; compiled with -I sim/src/common -I sim/src/X, so a library sees
 *                                  common's private headers and its own, never another library's
 *   <out>/bin/<name>               each sim/tests/*.c (optional), compiled like a user's DOCA program
 *
 * The folders decide the libraries: a new folder sim/src/X becomes libdoca_X with no change here, and a file's name
 * never decides where it lands.
 * Flavours: "3" (default: DOCA 3.x names, soname .so.3) and "2.7" (DOCA 2.7 names, soname .so.2, version 2.7.0).
 * A flavour folder (sim/flavours/<flavour>/) may hold .c files that replace sim/src files of the same name and a
 * linker version script per library (libdoca_X.map) that decides which spellings the library exports. The 2.7
 * flavour builds only the libraries it has a version script for (DOCA 2.7's common, dma and comch: RDMA and the
 * accelerators are written against 3.x's API).
 * An artifact is rebuilt only when one of its inputs (sources, every header, the flavour files, this module) is newer.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { checkTrustedPath, UntrustedPathError } from "../trusted-path.ts";

export const FLAVOURS = {
  "3": { soname: "3", folder: "3", onlyMapped: false },
  "2.7": { soname: "2", folder: "2.7", onlyMapped: true },
} as const;
export type Flavour = keyof typeof FLAVOURS;

export function isFlavour(value: string): value is Flavour {
  return Object.hasOwn(FLAVOURS, value);
}

export interface SimBuildOptions {
  /** Folder receiving lib/ (and bin/ when tests are built). */
  outDir: string;
  flavour?: Flavour;
  /** C compiler command (default: $CC, else cc). */
  cc?: string;
  /** Rebuild everything. */
  force?: boolean;
  /**
   * Also build the C test programs of sim/tests into <outDir>/bin (default: for flavour 3 only; they are written
   * against DOCA 3.x headers, so they cannot link to a 2.7 library, just as on real DOCA).
   */
  tests?: boolean;
  /** One line per artifact (default: nothing). */
  log?: (line: string) => void;
  /** The package root holding sim/ (default: this module's package). */
  root?: string;
}

/** A build step failed; `noCompiler` when the compiler itself could not be run. */
export class SimBuildError extends Error {
  constructor(message: string, readonly noCompiler = false) {
    super(message);
    this.name = "SimBuildError";
  }
}

const thisFile = fileURLToPath(import.meta.url);
/** The package (or repository) root: this file is <root>/ffi/load/sim-build/builder.ts. */
export const packageRoot: string = resolve(dirname(thisFile), "..", "..", "..");

/** True when the C sources of the software device are present (a clone, or the npm package). */
export function simSourcesPresent(root: string = packageRoot): boolean {
  return existsSync(join(root, "sim", "src")) && existsSync(join(root, "sim", "include"));
}

/** The library folders of sim/src: "common" first, then the others in name order. */
export function libraryFolders(srcDir: string): string[] {
  if (!existsSync(srcDir)) return [];
  const folders = readdirSync(srcDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return ["common", ...folders.filter((name) => name !== "common")].filter((name) => folders.includes(name));
}

function listFiles(dir: string, suffix: string, keep: (name: string) => boolean = () => true): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith(suffix) && keep(name)).sort().map((name) => join(dir, name));
}

const mtime = (path: string) => (existsSync(path) ? statSync(path).mtimeMs : 0);

/** Builds the software device; returns the lib folder. Throws SimBuildError with the compiler's output. */
export function buildSoftwareDevice(options: SimBuildOptions): string {
  const root = options.root ?? packageRoot;
  const flavour = FLAVOURS[options.flavour ?? "3"];
  const cc = options.cc ?? process.env.CC ?? "cc";
  const log = options.log ?? (() => {});
  const simDir = join(root, "sim");
  const includeDir = join(simDir, "include");
  const srcDir = join(simDir, "src");
  const testsDir = join(simDir, "tests");
  const flavourDir = join(simDir, "flavours", flavour.folder);
  // A flavour's own headers (sim/flavours/2.7/include: its doca_flavour.h) come before sim/include.
  const flavourInclude = join(flavourDir, "include");
  const includeArgs = existsSync(flavourInclude) ? [`-I${flavourInclude}`, `-I${includeDir}`] : [`-I${includeDir}`];
  const libDir = join(options.outDir, "lib");
  const binDir = join(options.outDir, "bin");
  const major = flavour.soname;
  if (!simSourcesPresent(root)) throw new SimBuildError(`the software device's sources are not in ${simDir}`);

  const stale = (output: string, inputs: string[]) => {
    if (options.force) return true;
    const built = mtime(output);
    return built === 0 || inputs.some((input) => mtime(input) > built);
  };

  const run = (args: string[], what: string) => {
    const result = spawnSync(cc, args, { encoding: "utf8" });
    if (result.error) {
      const missing = (result.error as { code?: string }).code === "ENOENT";
      throw new SimBuildError(
        missing
          ? `no C compiler: \`${cc}\` was not found. Install one (Debian/Ubuntu: apt-get install gcc libc6-dev; ` +
            "RHEL: dnf install gcc) or name it in CC"
          : `cannot run ${cc}: ${result.error.message}`,
        missing,
      );
    }
    if (result.status !== 0) {
      throw new SimBuildError(`${what} failed:\n${cc} ${args.join(" ")}\n${result.stdout}${result.stderr}`);
    }
    // -Werror turns warnings into failures, so anything printed here is informational only
    if (result.stderr.trim()) log(result.stderr.trimEnd());
  };

  // Compile under a temporary name, then rename onto `output`: concurrent builds (test runs, the host and DPU
  // processes of a user's first run) never see, or load, a half-written library.
  const compile = (args: string[], output: string, what: string) => {
    const temporary = `${output}.tmp-${process.pid}`;
    try {
      run([...args, "-o", temporary], what);
      renameSync(temporary, output);
    } finally {
      rmSync(temporary, { force: true });
    }
  };

  /** libdoca_X.so.N is the real file (soname), libdoca_X.so the development symlink. */
  const linkSoname = (name: string) => {
    const link = join(libDir, `${name}.so`);
    const temporary = `${link}.tmp-${process.pid}`;
    rmSync(temporary, { force: true });
    symlinkSync(`${name}.so.${major}`, temporary);
    renameSync(temporary, link);
  };

  /** One library folder's sources, with the flavour's same-named files in their place. */
  const replacements = new Map(listFiles(flavourDir, ".c").map((path) => [basename(path), path]));
  const sources = (folder: string) =>
    listFiles(join(srcDir, folder), ".c").map((path) => replacements.get(basename(path)) ?? path);
  const folders = libraryFolders(srcDir);

  const commonInputs = [
    ...listFiles(includeDir, ".h"),
    ...folders.flatMap((folder) => listFiles(join(srcDir, folder), ".h")),
    ...listFiles(flavourDir, ""),
    ...(existsSync(flavourInclude) ? listFiles(flavourInclude, ".h") : []),
    thisFile,
  ];

  const buildLibrary = (folder: string): boolean => {
    const name = `libdoca_${folder}`;
    const files = sources(folder);
    const linkCommon = folder !== "common";
    if (files.length === 0) return false;
    if (flavour.onlyMapped && !existsSync(join(flavourDir, `${name}.map`))) return false;
    const output = join(libDir, `${name}.so.${major}`);
    const deps = linkCommon ? [join(libDir, `libdoca_common.so.${major}`)] : [];
    if (!stale(output, [...files, ...commonInputs, ...deps]) && existsSync(join(libDir, `${name}.so`))) {
      log(`up to date  ${output}`);
      return true;
    }
    const args = [
      "-std=c11",
      "-O2",
      "-g",
      "-fPIC",
      "-Wall",
      "-Wextra",
      "-Werror",
      "-fvisibility=hidden",
      "-shared",
      `-Wl,-soname,${name}.so.${major}`,
      "-Wl,--no-undefined",
      ...includeArgs,
      `-I${join(srcDir, "common")}`,
      ...(linkCommon ? [`-I${join(srcDir, folder)}`] : []),
      ...files,
    ];
    const versionScript = join(flavourDir, `${name}.map`);
    if (existsSync(versionScript)) args.push(`-Wl,--version-script=${versionScript}`);
    if (linkCommon) args.push(`-L${libDir}`, `-l:libdoca_common.so.${major}`, "-Wl,-rpath,$ORIGIN");
    args.push("-lpthread");
    compile(args, output, name);
    linkSoname(name);
    log(`built       ${output} (+ ${name}.so)`);
    return true;
  };

  mkdirSync(libDir, { recursive: true });
  // Never compile into, and so never later load from, a folder someone else could change.
  for (const folder of [options.outDir, libDir]) {
    try {
      checkTrustedPath(folder, "folder");
    } catch (e) {
      if (e instanceof UntrustedPathError) throw new SimBuildError(`refusing to build into ${folder}: ${e.message}`);
      throw e;
    }
  }
  if (!folders.includes("common")) throw new SimBuildError(`no ${join(srcDir, "common")}: the sources are incomplete`);
  const built = folders.filter((folder) => buildLibrary(folder));
  if (!(options.tests ?? options.flavour !== "2.7")) return libDir;

  // Test programs: one binary per sim/tests/*.c, linked to every library they may need.
  mkdirSync(binDir, { recursive: true });
  const testInputs = [...listFiles(testsDir, ".h"), ...listFiles(includeDir, ".h"), thisFile];
  const libs = built.map((folder) => join(libDir, `libdoca_${folder}.so.${major}`));
  for (const source of listFiles(testsDir, ".c")) {
    const name = basename(source, ".c");
    // A test program named after a library (comch_*.c, rdma_*.c) needs it: skip it when that library is not built
    const needs = folders.find((folder) => folder !== "common" && name.startsWith(`${folder}_`));
    if (needs && !built.includes(needs)) continue;
    const output = join(binDir, name);
    if (!stale(output, [source, ...testInputs, ...libs])) {
      log(`up to date  ${output}`);
      continue;
    }
    const args = [
      "-std=c11",
      "-O2",
      "-g",
      "-Wall",
      "-Wextra",
      "-Werror",
      "-D_GNU_SOURCE",
      ...includeArgs,
      `-I${testsDir}`,
      source,
      `-L${libDir}`,
      ...libs.map((lib) => `-l:${basename(lib)}`),
      "-Wl,-rpath,$ORIGIN/../lib",
    ];
    compile(args, output, name);
    log(`built       ${output}`);
  }
  return libDir;
}
