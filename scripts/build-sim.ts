#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-run --allow-env
/**
 * `deno task sim:build`: builds the software DOCA device (ffi/load/sim-build/builder.ts) into build/sim, or another
 * flavour / architecture into its own folder:
 *   (default)               build/sim           DOCA 3.x names, libdoca_X.so.3
 *   --flavour 2.7           build/sim-2.7       DOCA 2.7 names, libdoca_X.so.2, doca_version_runtime() "2.7.0-sim"
 *   --target aarch64        build/sim-aarch64   cross-compiled with aarch64-linux-gnu-gcc (BlueField Arm cores)
 *
 * Only node: modules, so it runs under Deno, Bun and Node (`node --import tsx scripts/build-sim.ts`).
 * Prints one line per artifact it builds (--verbose: also per artifact up to date); exits non-zero with the compiler's output when a step fails.
 */
import console from "node:console";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { buildSoftwareDevice, FLAVOURS, isFlavour, libraryFolders, packageRoot, SimBuildError } from "../ffi/load/sim-build/builder.ts";

// The libraries are named from the folders the builder compiles (one per sim/src folder), never from a fixed list.
const LIBRARIES = libraryFolders(join(packageRoot, "sim", "src"));

/** Every line this script prints for a person starts with the name people run it by (`deno task sim:build`). */
const NAME = "sim:build";

const HELP = `Usage: sim:build [--force] [--verbose] [--cc COMPILER] [--flavour 3|2.7] [--target aarch64|x86_64] [--out DIR]

Builds the software DOCA device, one library per sim/src folder, into DIR/lib:
  libdoca_{${LIBRARIES.join(",")}}.so
and its C test programs into DIR/bin.
  --flavour   3 (default: DOCA 3.x names) or 2.7 (DOCA 2.7 names, soname .so.2, version 2.7.0-sim)
  --target    CPU to build for; another than this machine's means a cross compiler
              (default for aarch64: aarch64-linux-gnu-gcc, for x86_64: x86_64-linux-gnu-gcc)
  --cc        the C compiler (default: $CC, else cc, else the target's cross compiler)
  --out       output folder (default: build/sim, build/sim-2.7, build/sim-aarch64, build/sim-2.7-aarch64)
  --force     rebuild everything
  --verbose   also name each artifact that is up to date (by default only what is built gets a line)
  --version   print the version of doca-ts and of the DOCA the software device implements, and exit
  -h, --help  print this help and exit (nothing is built)
Exit status 0, 1 when the build fails (the compiler's output or why DIR cannot be written), 2 for bad flags.
Run as \`deno task sim:build\`, \`npm run sim:build\`, or \`node --import tsx scripts/build-sim.ts\`.`;

/** The flags, for parseArgs. */
const OPTIONS = {
  force: { type: "boolean", default: false },
  verbose: { type: "boolean", default: false },
  cc: { type: "string" },
  flavour: { type: "string", default: "3" },
  target: { type: "string" },
  out: { type: "string" },
  version: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** parseArgs' values; a flag it does not know is one line and exit 2 (not an uncaught TypeError). */
function parseOrExit() {
  try {
    return parseArgs({ args: process.argv.slice(2), options: OPTIONS }).values;
  } catch (error) {
    console.error(`${NAME}: ${(error as Error).message} (see --help)`);
    process.exit(2);
  }
}

const values = parseOrExit();

if (values.help) {
  console.log(HELP);
  process.exit(0);
}

if (values.version) {
  // package.json read as a file: no JSON import (its attributes differ across Node 20 releases), no FFI
  const { version } = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string };
  console.log(`doca-ts ${NAME} ${version}; builds the software DOCA device (DOCA 3.x names; --flavour 2.7: DOCA 2.7's)`);
  process.exit(0);
}

const hostArch = process.arch === "arm64" ? "aarch64" : process.arch === "x64" ? "x86_64" : process.arch;
const flavour = values.flavour;
if (!isFlavour(flavour)) {
  console.error(`${NAME}: unknown --flavour ${flavour} (known: ${Object.keys(FLAVOURS).join(", ")})`);
  process.exit(2);
}
const target = values.target ?? hostArch;
if (!["aarch64", "x86_64"].includes(target)) {
  console.error(`${NAME}: unknown --target ${target} (known: aarch64, x86_64)`);
  process.exit(2);
}
const cross = target !== hostArch;
const cc = values.cc ?? (cross ? `${target}-linux-gnu-gcc` : process.env.CC ?? "cc");
const folder = ["sim", flavour === "3" ? "" : flavour, cross ? target : ""].filter(Boolean).join("-");
const outDir = values.out ?? join(packageRoot, "build", folder);

/**
 * Creates `dir` one level at a time: Node's recursive mkdir never returns for a path under /proc (it retries the
 * ENOENT forever), so --out /proc/x hung instead of failing.
 */
function makeFolder(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d);
  for (const d of missing) mkdirSync(d);
}

try {
  makeFolder(outDir);
  buildSoftwareDevice({
    outDir,
    flavour,
    cc,
    force: values.force,
    // A warm build prints nothing: every `deno task demo` (even --help) runs this first, and 22 "up to date" lines
    // in front of the demo's own output helped nobody.
    log: (line) =>
      (values.verbose || !line.startsWith("up to date")) &&
      console.log(line.replace(/\/\S+/g, (path) => path.startsWith(packageRoot) ? relative(packageRoot, path) : path)),
  });
} catch (error) {
  if (error instanceof SimBuildError) console.error(`${NAME}: ${error.message}`);
  else {
    // A folder it may not create or write (--out /proc/x, a read-only place, Deno's missing --allow-write): one line
    const message = (error as Error).message.split("\n")[0].replace(/, run again with the --allow-\S+ flag$/, "");
    console.error(`${NAME}: error: cannot build into ${outDir}: ${message}`);
  }
  process.exit(1);
}
