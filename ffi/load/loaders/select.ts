/** Picks the loader for the runtime we are running on: Deno, else Bun, else Node (koffi). */
import type { Backend } from "../types.ts";
import { denoBackend } from "./deno.ts";
import { bunBackend } from "./bun.ts";
import { nodeBackend } from "./node.ts";

import { currentRuntime } from "../runtime.ts";

export { currentRuntime, type RuntimeName } from "../runtime.ts";

let chosen: Backend | undefined;

export function backend(): Backend {
  if (!chosen) {
    const runtime = currentRuntime();
    chosen = runtime === "deno" ? denoBackend() : runtime === "bun" ? bunBackend() : nodeBackend();
  }
  return chosen;
}
