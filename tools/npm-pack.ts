/**
 * `npm pack` unpacked, shared by the offline archive (scripts/pack-offline.ts) and the benchmark's Node rows
 * (benchmarks/end-to-end.ts), and the small command runner both use.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/** Runs `command args` in `cwd`; returns its stdout, throws with its output when it fails. */
export function runCommand(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** `npm pack SPEC` (run in `cwd`) into `dir`, unpacked as `dir/<as>`; returns that folder. */
export function npmPackInto(spec: string, cwd: string, dir: string, as: string): string {
  const before = new Set(readdirSync(dir));
  runCommand("npm", ["pack", "--silent", "--pack-destination", dir, spec], cwd);
  const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz") && !before.has(name));
  if (!tarball) throw new Error(`npm pack ${spec} produced no tarball`);
  runCommand("tar", ["xzf", tarball], dir);
  rmSync(join(dir, tarball));
  renameSync(join(dir, "package"), join(dir, as));
  return join(dir, as);
}
