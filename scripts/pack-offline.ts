#!/usr/bin/env -S deno run --allow-all
/**
 * `npm run pack:offline -- [--arch aarch64|x86_64] [--out FILE]`: on a machine with network, builds ONE archive
 * holding everything doca-ts needs on a machine without any (a BlueField's Arm cores, by default):
 *
 *   doca-ts-offline-<arch>/
 *     doca-ts                  launcher: `./doca-ts TASK [args]` runs a task, `./doca-ts run SCRIPT.ts` a script
 *     bin/deno                 the Deno binary for <arch>, from npm (@deno/linux-<arch>-glibc, the version we use)
 *     lib/doca-ts/             the npm package of this repository (mod.ts, ffi/, tasks/, the device's C sources)
 *     lib/doca-ts/build/sim/   the software device prebuilt for <arch> (when a compiler for it is here)
 *     import_map.json          maps "doca-ts" to lib/doca-ts/mod.ts for your own scripts
 *
 * Deno is the runtime of the archive: one self-contained binary, no npm install on the target. Real DOCA under
 * /opt/mellanox/doca is still preferred over the software device on the target (ffi/load/discover.ts).
 */
import console from "node:console";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { buildSoftwareDevice, packageRoot, SimBuildError } from "../ffi/load/sim-build/builder.ts";
import { compilerMissingHint } from "./cross-compiler.ts";
import { npmPackInto, runCommand as run } from "../tools/npm-pack.ts";

const HELP = `Usage: pack-offline.ts [--arch aarch64|x86_64] [--out FILE] [--no-prebuild]

Writes one .tar.gz (default build/doca-ts-offline-<version>-<arch>.tar.gz) with Deno for ARCH, the doca-ts package,
the software device's sources (and the device prebuilt for ARCH when a compiler for it exists here: cc for this
machine's architecture, aarch64-linux-gnu-gcc for aarch64) and a launcher. On the target:
  tar xzf doca-ts-offline-<version>-<arch>.tar.gz
  ./doca-ts-offline-<arch>/doca-ts doctor        (or devices, dma-copy -f FILE ..., run my-script.ts)
  --arch         target CPU (default aarch64, the BlueField's Arm cores)
  --out          archive path
  --no-prebuild  ship only the device's sources (built on first use on the target, which then needs cc)`;

/** The flags; one it does not know is one line and exit 2 (it was Deno's uncaught TypeError with a stack trace). */
function flags() {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: {
        arch: { type: "string", default: "aarch64" },
        out: { type: "string" },
        "no-prebuild": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    console.error(`pack-offline: ${(error as Error).message.split(/(?<=\.)\s|\n/)[0].replace(/\.$/, "")} (see --help)`);
    process.exit(2);
  }
}
const { values } = flags();
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

const NPM_DENO: Record<string, string> = { aarch64: "@deno/linux-arm64-glibc", x86_64: "@deno/linux-x64-glibc" };
const arch = values.arch === "arm64" ? "aarch64" : values.arch === "x64" || values.arch === "x86-64" ? "x86_64" : values.arch;
if (!NPM_DENO[arch]) {
  console.error(`pack-offline: unknown --arch ${values.arch} (known: aarch64, x86_64)`);
  process.exit(2);
}
const pkg = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8"));
const denoVersion: string = pkg.devDependencies.deno;
const out = resolve(values.out ?? join(packageRoot, "build", `doca-ts-offline-${pkg.version}-${arch}.tar.gz`));
const hostArch = process.arch === "arm64" ? "aarch64" : process.arch === "x64" ? "x86_64" : process.arch;

/** The newest published version of `name` not above `wanted` (Deno's per-platform builds are not always all published). */
function newestUpTo(name: string, wanted: string): string {
  const found = [JSON.parse(run("npm", ["view", `${name}@<=${wanted}`, "version", "--json"], packageRoot) || "[]")].flat();
  const key = (v: string) => v.split(/[.-]/).slice(0, 3).map((n) => n.padStart(6, "0")).join(".");
  const newest = (found as string[]).sort((a, b) => (key(a) < key(b) ? -1 : 1)).at(-1);
  if (!newest) throw new Error(`npm has no ${name} at or below ${wanted}`);
  return newest;
}

const LAUNCHER = `#!/bin/sh
# doca-ts offline launcher: ./doca-ts TASK [ARGS]   (tasks: doctor devices dma-copy dma-local-copy comch-server
# comch-client comch-stream demo)   or   ./doca-ts run SCRIPT.ts [ARGS]   (your script; import from "doca-ts").
# Everything stays in this folder: Deno's cache (.deno), the software device's build cache (.cache).
set -e
here=$(cd "$(dirname "$0")" && pwd)
export DENO_DIR="\${DENO_DIR:-$here/.deno}" DENO_NO_UPDATE_CHECK=1 DENO_NO_PROMPT=1
export XDG_CACHE_HOME="\${XDG_CACHE_HOME:-$here/.cache}"
deno="$here/bin/deno"
case "\${1:-}" in
  ""|-h|--help)
    sed -n '2,4p' "$0" | sed 's/^# //'; exit 0 ;;
  run)
    shift; [ $# -ge 1 ] || { echo "usage: doca-ts run SCRIPT.ts [ARGS]" >&2; exit 2; }
    exec "$deno" run --allow-all --no-remote --no-npm --import-map="$here/import_map.json" "$@" ;;
  *)
    task="$1"; shift
    [ -f "$here/lib/doca-ts/tasks/$task.ts" ] || { echo "doca-ts: no task '$task' (see ./doca-ts --help)" >&2; exit 2; }
    exec "$deno" run --allow-all --no-remote --no-npm --no-config "$here/lib/doca-ts/tasks/$task.ts" "$@" ;;
esac
`;

function main(): void {
  const stage = mkdtempSync(join(tmpdir(), "doca-ts-offline-"));
  const top = join(stage, `doca-ts-offline-${arch}`);
  try {
    mkdirSync(join(top, "bin"), { recursive: true });
    const version = newestUpTo(NPM_DENO[arch], denoVersion);
    if (version !== denoVersion) console.log(`pack-offline: Deno ${denoVersion} has no ${arch} build on npm yet`);
    console.log(`pack-offline: Deno ${version} for ${arch} (${NPM_DENO[arch]})`);
    const denoPkg = npmPackInto(`${NPM_DENO[arch]}@${version}`, stage, stage, "deno-npm");
    renameSync(join(denoPkg, "deno"), join(top, "bin", "deno"));
    chmodSync(join(top, "bin", "deno"), 0o755);
    rmSync(denoPkg, { recursive: true });
    console.log("pack-offline: the doca-ts package (npm pack)");
    mkdirSync(join(top, "lib"));
    const lib = npmPackInto(".", packageRoot, join(top, "lib"), "doca-ts");
    if (!values["no-prebuild"]) {
      const cc = arch === hostArch ? (process.env.CC ?? "cc") : `${arch}-linux-gnu-gcc`;
      try {
        buildSoftwareDevice({ outDir: join(lib, "build", "sim"), cc, tests: false });
        console.log(`pack-offline: software device prebuilt for ${arch} with ${cc}`);
      } catch (e) {
        if (!(e instanceof SimBuildError)) throw e;
        // The builder's own hint names the native gcc; for another CPU the cross-compiler packages are what is missing.
        const why = e.noCompiler ? compilerMissingHint(arch, hostArch, cc) : e.message.split("\n")[0];
        console.log(`pack-offline: software device NOT prebuilt (${why}); it builds on first use`);
      }
    }
    writeFileSync(join(top, "doca-ts"), LAUNCHER, { mode: 0o755 });
    writeFileSync(join(top, "import_map.json"), JSON.stringify({ imports: { "doca-ts": "./lib/doca-ts/mod.ts" } }, null, 2) + "\n");
    mkdirSync(resolve(out, ".."), { recursive: true });
    run("tar", ["czf", out, "-C", stage, `doca-ts-offline-${arch}`], stage);
    console.log(`pack-offline: wrote ${out}`);
    console.log(`on the target: tar xzf ${out.split("/").pop()} && ./doca-ts-offline-${arch}/doca-ts doctor`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

try {
  main();
} catch (e) {
  console.error(`pack-offline: ${(e as Error).message}`);
  process.exit(1);
}
if (!existsSync(out)) process.exit(1);
