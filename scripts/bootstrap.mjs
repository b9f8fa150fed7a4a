// Makes a fresh clone runnable on a machine that has only Node >= 20, npm and cc: installs the npm devDependencies
// (Deno, Bun, koffi, tsx) when node_modules is missing or older than the lock file. Plain JavaScript on purpose: it
// runs before any TypeScript loader exists. Every npm script (`npm run demo`, `npm test`, ...) calls it first.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, lstatSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const modules = join(root, "node_modules");
const lock = join(root, "package-lock.json");
const marker = join(modules, ".package-lock.json");
const needed = [join(modules, "deno", "bin.cjs"), join(modules, ".bin", "bun"), join(modules, ".bin", "tsx")];

const fresh = existsSync(marker) && needed.every(existsSync) &&
  (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs);

if (!fresh) {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  // `npm install`, not `npm ci`: npm writes lock files that omit other platforms' optional packages (Deno's and
  // Bun's per-platform binaries), which `npm ci` then rejects as out of sync. The versions are pinned exactly.
  const args = ["install", "--no-audit", "--no-fund"];
  console.error("bootstrap: installing Deno, Bun, koffi and tsx from npm");
  execFileSync(npm, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
}

// npm scripts `exec` the deno binary itself, not the package's bin.cjs: that Node wrapper dies at once on Ctrl-C (it
// waits in spawnSync with no SIGINT handler), npm then ends and the terminal closes before the task has printed why
// it stopped. The package's postinstall puts the binary there; installed with --ignore-scripts, we place it.
if (!existsSync(join(modules, "deno", "deno"))) {
  createRequire(import.meta.url)(join(modules, "deno", "install_api.cjs")).runInstall();
}

// `deno task` runs anything it finds in node_modules/.bin as a JavaScript program, including the deno binary that
// the npm package links there, and then fails on its ELF header. Without the link, `deno` inside a task means the
// running deno itself, which is what we want. npm scripts exec node_modules/deno/deno instead.
const denoLink = join(modules, ".bin", "deno");
if (existsSync(denoLink) || isDanglingLink(denoLink)) rmSync(denoLink, { force: true });

function isDanglingLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
