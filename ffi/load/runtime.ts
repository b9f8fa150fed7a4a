/**
 * The one runtime detection: which JavaScript runtime runs this code. Loaders, tasks, tests and benchmarks all ask
 * here (Deno has a `Deno` global, Bun a `Bun` global; anything else is treated as Node).
 */
export type RuntimeName = "deno" | "bun" | "node";

export function currentRuntime(): RuntimeName {
  const g = globalThis as Record<string, unknown>;
  if (typeof g.Deno !== "undefined") return "deno";
  if (typeof g.Bun !== "undefined") return "bun";
  return "node";
}
