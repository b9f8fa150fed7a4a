/**
 * Entry-point helpers shared by every task: "am I the script being run?" on Deno, Bun and Node (Node 20 has no
 * import.meta.main), and one place that turns a thrown error into a message and a non-zero exit status.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

/**
 * True when the module whose `import.meta` is given is the program's entry point. Deno and Bun say so themselves
 * (import.meta.main); Node 20 does not, so compare paths (no file system access: Deno tasks may lack --allow-read).
 */
export function isMain(meta: { url: string; main?: boolean }): boolean {
  const main = meta.main;
  if (typeof main === "boolean") return main;
  const script = process.argv[1];
  return script !== undefined && resolve(script) === fileURLToPath(meta.url);
}

/** Runs `fn`; on error prints "<program>: <message>" to stderr and exits 2 for usage errors, 1 otherwise. */
export async function runMain(fn: () => Promise<number | void> | number | void): Promise<never> {
  let code = 0;
  try {
    code = (await fn()) ?? 0;
  } catch (e) {
    const err = e as Error;
    const usage = err?.name === "UsageError";
    process.stderr.write(`error: ${err?.message ?? String(e)}${usage ? " (see --help)" : ""}\n`);
    if (process.env.DOCA_TS_DEBUG && err?.stack) process.stderr.write(err.stack + "\n");
    code = usage ? 2 : 1;
  }
  process.exit(code);
}

/** One line on stdout (works the same on every runtime, no DOM lib needed). */
export function print(line: string): void {
  process.stdout.write(line + "\n");
}
