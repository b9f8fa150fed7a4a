#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env
/// <reference lib="deno.ns" />
/**
 * Builds the software DOCA device with the system C compiler:
 *   build/sim/lib/libdoca_common.so  sim/src/*.c except dma*.c and comch*.c
 *   build/sim/lib/libdoca_dma.so     sim/src/dma*.c, linked to libdoca_common
 *   build/sim/lib/libdoca_comch.so   sim/src/comch*.c (when present), linked to libdoca_common
 *   build/sim/bin/<name>             each sim/tests/*.c, compiled against sim/include like a user's DOCA program
 *
 * Only node: modules, so it runs under Deno, Bun and Node (`node --import tsx scripts/build-sim.ts`).
 * An artifact is rebuilt only when one of its inputs (sources, every header, this script) is newer than it.
 * Prints one line per artifact; exits non-zero with the compiler's output when a step fails.
 *
 * Usage: build-sim.ts [--force] [--cc COMPILER]   (CC in the environment also selects the compiler)
 */
import { spawnSync } from "node:child_process";
import console from "node:console";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const simDir = join(root, "sim");
const includeDir = join(simDir, "include");
const srcDir = join(simDir, "src");
const testsDir = join(simDir, "tests");
const libDir = join(root, "build", "sim", "lib");
const binDir = join(root, "build", "sim", "bin");

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    force: { type: "boolean", default: false },
    cc: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log(
    "Usage: build-sim.ts [--force] [--cc COMPILER]\nBuilds build/sim/lib/libdoca_{common,dma,comch}.so and build/sim/bin/*",
  );
  process.exit(0);
}

const cc = values.cc ?? process.env.CC ?? "cc";
const cflags = ["-std=c11", "-O2", "-g", "-fPIC", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden"];
// DOCA's soname major: loaders try libdoca_X.so, then .so.3, then .so.2
const SONAME_MAJOR = "3";

function listC(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith(".c") && keep(name)).sort().map((name) => join(dir, name));
}

function listHeaders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith(".h")).map((name) => join(dir, name));
}

function mtime(path: string): number {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

/** True when output is missing or older than any input. */
function stale(output: string, inputs: string[]): boolean {
  if (values.force) return true;
  const built = mtime(output);
  return built === 0 || inputs.some((input) => mtime(input) > built);
}

class BuildError extends Error {}

/**
 * Run the compiler writing to a temporary name, then rename onto `output`: builds started concurrently (other test
 * runs, other developers' shells) never see, or load, a half-written library.
 */
function compile(args: string[], output: string, what: string): void {
  const temporary = `${output}.tmp-${process.pid}`;
  try {
    run([...args, "-o", temporary], what);
    renameSync(temporary, output);
  } finally {
    rmSync(temporary, { force: true });
  }
}

function run(args: string[], what: string): void {
  const result = spawnSync(cc, args, { encoding: "utf8" });
  if (result.error) throw new BuildError(`cannot run ${cc}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new BuildError(`${what} failed:\n${cc} ${args.join(" ")}\n${result.stdout}${result.stderr}`);
  }
  // -Werror turns warnings into failures, so anything printed here is informational only
  if (result.stderr.trim()) console.error(result.stderr.trimEnd());
}

/** libdoca_X.so.3 is the real file (soname), libdoca_X.so the development symlink. */
function linkSoname(name: string): void {
  const link = join(libDir, `${name}.so`);
  const temporary = `${link}.tmp-${process.pid}`;
  rmSync(temporary, { force: true });
  symlinkSync(`${name}.so.${SONAME_MAJOR}`, temporary);
  renameSync(temporary, link);
}

const commonHeaders = [...listHeaders(includeDir), ...listHeaders(srcDir), fileURLToPath(import.meta.url)];

function buildLibrary(name: string, sources: string[], linkCommon: boolean): boolean {
  if (sources.length === 0) return false;
  const output = join(libDir, `${name}.so.${SONAME_MAJOR}`);
  const deps = linkCommon ? [join(libDir, `libdoca_common.so.${SONAME_MAJOR}`)] : [];
  if (!stale(output, [...sources, ...commonHeaders, ...deps]) && existsSync(join(libDir, `${name}.so`))) {
    console.log(`up to date  ${relative(root, output)}`);
    return true;
  }
  const args = [
    ...cflags,
    "-shared",
    `-Wl,-soname,${name}.so.${SONAME_MAJOR}`,
    "-Wl,--no-undefined",
    `-I${includeDir}`,
    `-I${srcDir}`,
    ...sources,
  ];
  if (linkCommon) args.push(`-L${libDir}`, "-l:libdoca_common.so." + SONAME_MAJOR, "-Wl,-rpath,$ORIGIN");
  args.push("-lpthread");
  compile(args, output, name);
  linkSoname(name);
  console.log(`built       ${relative(root, output)} (+ ${name}.so)`);
  return true;
}

function main(): void {
  mkdirSync(libDir, { recursive: true });
  mkdirSync(binDir, { recursive: true });

  const isDma = (name: string) => name.startsWith("dma");
  const isComch = (name: string) => name.startsWith("comch");
  buildLibrary("libdoca_common", listC(srcDir, (name) => !isDma(name) && !isComch(name)), false);
  const haveDma = buildLibrary("libdoca_dma", listC(srcDir, isDma), true);
  const haveComch = buildLibrary("libdoca_comch", listC(srcDir, isComch), true);

  // Test programs: one binary per sim/tests/*.c, linked to every library they may need.
  const testHeaders = [...listHeaders(testsDir), ...listHeaders(includeDir)];
  const libs = [
    join(libDir, `libdoca_common.so.${SONAME_MAJOR}`),
    ...(haveDma ? [join(libDir, `libdoca_dma.so.${SONAME_MAJOR}`)] : []),
    ...(haveComch ? [join(libDir, `libdoca_comch.so.${SONAME_MAJOR}`)] : []),
  ];
  for (const source of listC(testsDir, () => true)) {
    const name = basename(source, ".c");
    // comch test programs need libdoca_comch: skip them while the comch library does not exist yet
    if (isComch(name) && !haveComch) continue;
    const output = join(binDir, name);
    if (!stale(output, [source, ...testHeaders, ...libs, fileURLToPath(import.meta.url)])) {
      console.log(`up to date  ${relative(root, output)}`);
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
      `-I${includeDir}`,
      `-I${testsDir}`,
      source,
      `-L${libDir}`,
      ...libs.map((lib) => `-l:${basename(lib)}`),
      "-Wl,-rpath,$ORIGIN/../lib",
    ];
    compile(args, output, name);
    console.log(`built       ${relative(root, output)}`);
  }
}

try {
  main();
} catch (error) {
  if (!(error instanceof BuildError)) throw error;
  console.error(`build-sim: ${error.message}`);
  process.exit(1);
}
