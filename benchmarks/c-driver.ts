/** Builds a benchmark C driver (benchmarks/NAME.c) against the software device, as any DOCA C program is built. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";

const SIM_LIB = join(repoRoot, "build", "sim", "lib");

/** Where the driver NAME is built: build/bench/NAME. */
export function driverPath(name: string): string {
  return join(repoRoot, "build", "bench", name);
}

/**
 * cc benchmarks/NAME.c with DOCA's headers (sim/include), the given DOCA libraries and system libraries (e.g.
 * "crypto"); returns the binary's path.
 */
export function buildCDriver(name: string, docaLibs: string[], systemLibs: string[] = []): string {
  for (const lib of docaLibs) {
    if (!existsSync(join(SIM_LIB, `lib${lib}.so`))) throw new Error("software device not built: run deno task sim:build");
  }
  const output = driverPath(name);
  mkdirSync(join(repoRoot, "build", "bench"), { recursive: true });
  const args = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I", join(repoRoot, "sim", "include"),
    join(repoRoot, "benchmarks", `${name}.c`), "-L", SIM_LIB, `-Wl,-rpath,${SIM_LIB}`, ...docaLibs.map((l) => `-l${l}`),
    ...systemLibs.map((l) => `-l${l}`), "-o", output];
  const cc = spawnSync(process.env.CC ?? "cc", args, { encoding: "utf8" });
  if (cc.status !== 0) throw new Error(`cc failed building benchmarks/${name}.c:\n${cc.stderr}`);
  return output;
}
