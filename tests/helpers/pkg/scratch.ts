/**
 * A scratch project outside the repository (mktemp) that uses doca-ts the way a user does: `npm pack` of this
 * repository (its prepack builds the JavaScript), installed with npm (Node: the built .js with no loader; Bun: the
 * .ts sources through the "bun" export condition), and for Deno the same tarball unpacked into vendor/doca-ts with
 * an import map onto the .ts sources (Deno refuses to strip types of .ts files under node_modules:
 * ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING; JSR is Deno's channel for TypeScript packages).
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { currentRuntime } from "../spawn-runtime.ts";

export const repoRoot: string = fileURLToPath(new URL("../../..", import.meta.url));

function check(result: SpawnSyncReturns<string>, what: string): string {
  if (result.error) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${what} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** `npm pack` of the repository into `dir`; returns the tarball's path. */
export function npmPack(dir: string): string {
  check(spawnSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: repoRoot, encoding: "utf8" }), "npm pack");
  const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack left no tarball in ${dir}`);
  return join(dir, tarball);
}

export interface Scratch {
  dir: string;
  /** Environment for programs run in the scratch project: its own cache and software-device folder. */
  env: Record<string, string>;
}

/** A scratch project with the packed doca-ts installed as a user would for the current runtime. */
export function scratchProject(): Scratch {
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-user-"));
  const tarball = npmPack(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
  const runtime = currentRuntime();
  if (runtime === "deno") {
    mkdirSync(join(dir, "vendor"));
    check(spawnSync("tar", ["xzf", tarball, "-C", join(dir, "vendor")], { encoding: "utf8" }), "tar");
    check(spawnSync("mv", [join(dir, "vendor", "package"), join(dir, "vendor", "doca-ts")], { encoding: "utf8" }), "mv");
    writeFileSync(
      join(dir, "deno.json"),
      JSON.stringify({ imports: { "doca-ts": "./vendor/doca-ts/mod.ts", "doca-ts/tasks": "./vendor/doca-ts/tasks/mod.ts" } }),
    );
  } else {
    // The runtime dependency (koffi) comes from npm's cache when the repository's own install filled it (CI does).
    check(
      spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", tarball], {
        cwd: dir,
        encoding: "utf8",
      }),
      "npm install",
    );
  }
  const env: Record<string, string> = { ...process.env as Record<string, string> };
  delete env.DOCA_LIB_DIR; // the scratch project must find (or build) the software device by itself
  env.XDG_CACHE_HOME = join(dir, "cache");
  env.DOCA_SIM_DIR = mkdtempSync(join(tmpdir(), "doca-ts-user-sim-"));
  return { dir, env };
}

/** Runs a script of the scratch project under the current runtime. */
export function runInScratch(
  scratch: Scratch,
  script: string,
  env: Record<string, string> = {},
): SpawnSyncReturns<string> {
  const runtime = currentRuntime();
  const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
  const [command, args] = runtime === "deno"
    ? [deno!.execPath(), ["run", "-A", script]]
    : runtime === "bun"
    ? [process.execPath, [script]]
    : [process.execPath, [script]]; // plain Node: no loader, the package's built JavaScript
  return spawnSync(command, args, {
    cwd: scratch.dir,
    env: { ...scratch.env, ...env },
    encoding: "utf8",
    timeout: 180_000,
  });
}
