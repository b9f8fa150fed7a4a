/** Picks the loader for the runtime we are running on: Deno, else Bun, else Node (koffi). */
import type { Backend } from "../types.ts";
import { denoBackend } from "./deno.ts";
import { bunBackend } from "./bun.ts";
import { nodeBackend } from "./node.ts";

export type RuntimeName = "deno" | "bun" | "node";

export function currentRuntime(): RuntimeName {
  const g = globalThis as Record<string, unknown>;
  if (typeof g.Deno !== "undefined") return "deno";
  if (typeof g.Bun !== "undefined") return "bun";
  return "node";
}

let chosen: Backend | undefined;

export function backend(): Backend {
  if (!chosen) {
    const runtime = currentRuntime();
    chosen = runtime === "deno" ? denoBackend() : runtime === "bun" ? bunBackend() : nodeBackend();
  }
  return chosen;
}
