/**
 * How the benchmark starts a TypeScript file under each runtime: the Deno running the bench (or the npm one), Bun
 * from node_modules, Node through tsx. The same commands a user would type (README's "Runtimes").
 */
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { currentRuntime } from "../ffi/load/runtime.ts";

export type RuntimeName = "deno" | "bun" | "node";
export const RUNTIMES: RuntimeName[] = ["deno", "bun", "node"];
export const RUNTIME_LABEL: Record<RuntimeName | "c", string> = { c: "C", deno: "Deno", bun: "Bun", node: "Node" };

export function denoPath(): string {
  return currentRuntime() === "deno" ? process.execPath : join(repoRoot, "node_modules", "deno", "deno");
}

/** argv that runs `script args` under `runtime` (Deno gets only the permissions named). */
export function runtimeArgv(runtime: RuntimeName, script: string, args: string[], denoAllow: string[]): string[] {
  switch (runtime) {
    case "deno":
      return [denoPath(), "run", ...denoAllow.map((p) => `--allow-${p}`), script, ...args];
    case "bun":
      return [join(repoRoot, "node_modules", ".bin", "bun"), script, ...args];
    case "node":
      return ["node", "--import", "tsx", script, ...args];
  }
}
