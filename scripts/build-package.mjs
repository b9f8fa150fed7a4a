#!/usr/bin/env node
/**
 * Builds the npm package's JavaScript (npm `prepack`): every .ts reachable from mod.ts and tasks/mod.ts gets a .js
 * and a .d.ts next to it, so plain Node imports "doca-ts" with no loader while Deno and Bun keep the .ts sources
 * (package.json export conditions). Next to the source, not in a dist/ folder, so that the paths the code derives from
 * import.meta.url (the software device's sources and build folder) are the same in both. `--clean` (npm `postpack`)
 * removes what the build wrote; the output is never committed (.gitignore).
 *
 * Tool: TypeScript's own tsc — one tool for JavaScript and declarations, and `rewriteRelativeImportExtensions`
 * (TypeScript ≥ 5.7) turns the sources' "./x.ts" imports into "./x.js". Declarations keep ".ts" specifiers, which
 * would point a user's type checker at our sources; they are rewritten to ".js" here.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const built = [".js", ".d.ts"];

/** Every .ts source under `dir` (not .d.ts), recursively; node_modules and dot folders skipped. */
function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The files the build writes (or wrote) next to the sources of the package's folders. */
function outputs() {
  const roots = [join(root, "mod.ts"), ...["ffi", "tasks", "scripts"].flatMap((d) => sources(join(root, d)))];
  return roots.flatMap((ts) => built.map((ext) => ts.slice(0, -3) + ext)).filter((p) => existsSync(p));
}

function clean() {
  for (const path of outputs()) rmSync(path);
}

function build() {
  clean();
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.package.json")], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error("build-package: tsc failed; nothing packed");
    giveLockBack(); // npm runs no postpack after a failed prepack
    process.exit(result.status ?? 1);
  }
  let files = 0;
  for (const path of outputs()) {
    files++;
    if (!path.endsWith(".d.ts")) continue;
    const text = readFileSync(path, "utf8");
    const fixed = text.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']*?)\.ts(["'])/g, "$1$2.js$3");
    if (fixed !== text) writeFileSync(path, fixed);
  }
  // Every entry of tsconfig.package.json (the modules and every task a user runs, `npx doca-ts TASK`) must be built.
  const entries = JSON.parse(readFileSync(join(root, "tsconfig.package.json"), "utf8")).files;
  const missing = entries.map((ts) => ts.slice(0, -3) + ".js").filter((js) => !existsSync(join(root, js)));
  if (missing.length > 0) {
    console.error(`build-package: ${missing.join(", ")} missing after tsc`);
    giveLockBack();
    process.exit(1);
  }
  console.error(`build-package: ${files} files of JavaScript and declarations written next to the sources`);
}

/**
 * One `npm pack` at a time per checkout: the build writes next to the sources, so a second pack's postpack clean
 * deleted the first one's JavaScript before npm packed it ("mod.js, tasks/dma-copy.js … missing after tsc": the
 * test suite's package test and the bench's Node rows packed at once). prepack takes this lock and postpack gives it
 * back; a lock older than STALE_MS is a pack that died between the two and is taken over.
 */
const LOCK = join(root, "build", ".pack-lock");
const STALE_MS = 15 * 60_000;
const WAIT_MS = 20 * 60_000;

function takeLock() {
  mkdirSync(dirname(LOCK), { recursive: true });
  const until = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (e) {
      if (e.code !== "EEXIST") throw e;
    }
    let age = 0;
    try {
      age = Date.now() - statSync(LOCK).mtimeMs;
    } catch {
      continue; // given back meanwhile
    }
    if (age > STALE_MS) {
      console.error(`build-package: taking over a pack lock ${Math.round(age / 1000)} s old (a pack that died)`);
      rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > until) {
      console.error(`build-package: another npm pack of this checkout held ${LOCK} for ${WAIT_MS / 60_000} min; nothing packed`);
      process.exit(1);
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100); // sleep 100 ms
  }
}

function giveLockBack() {
  rmSync(LOCK, { recursive: true, force: true });
}

if (process.argv.includes("--clean")) {
  clean();
  giveLockBack();
} else {
  takeLock();
  try {
    build();
  } catch (e) {
    giveLockBack(); // npm runs no postpack after a failed prepack
    throw e;
  }
}
