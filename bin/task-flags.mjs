/**
 * The V8 flags a task runs with, from deno.json (the one place they are written: `deno task NAME` passes them as
 * --v8-flags), in Node's form. Node reads them only at start-up (v8.setFlagsFromString cannot resize a heap that
 * exists), so bin/doca-ts.mjs starts such a task in a Node given them. dma-copy's is --max-semi-space-size=2: a DPU
 * side serving for days otherwise grows V8's young generation under hosts that come and go (benchmarks/README.md,
 * "Comch churn").
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Node command-line flags for task `name` (e.g. ["--max-semi-space-size=2"]); [] when it has none. */
export function nodeFlagsFor(name) {
  let tasks;
  try {
    tasks = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "deno.json"), "utf8")).tasks ?? {};
  } catch {
    return []; // no deno.json beside the package: the task runs with Node's defaults
  }
  const task = tasks[name];
  const command = typeof task === "string" ? task : task?.command ?? "";
  return command.split(/\s+/).filter((w) => w.startsWith("--v8-flags="))
    .flatMap((w) => w.slice("--v8-flags=".length).split(",")).filter((f) => f.startsWith("--"));
}
