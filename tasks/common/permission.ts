/**
 * Deno's permission errors (NotCapable: a flag the program was not started with). The tasks start with --no-prompt
 * and the flags their deno.json entry and shebang declare, so a missing flag is an error, never a prompt; this module
 * makes sure it is never swallowed by a "the runtime cannot tell" fallback either, and that its message says which
 * flag to add and where.
 */

/** Deno's error class for a permission flag the program lacks (Deno 2); undefined on Bun and Node. */
const NotCapable = (globalThis as { Deno?: { errors?: { NotCapable?: new (...args: never[]) => Error } } }).Deno?.errors?.NotCapable;

/** True for Deno's "run again with the --allow-… flag" error (Deno.errors.NotCapable, by class). */
export function isMissingPermission(e: unknown): boolean {
  return NotCapable !== undefined && e instanceof NotCapable;
}

/** Rethrows `e` when it is a missing Deno permission; for catch blocks that otherwise fall back quietly. */
export function rethrowMissingPermission(e: unknown): void {
  if (isMissingPermission(e)) throw e;
}

/** The --allow-… flag a permission error names, if any. */
export function missingFlag(e: unknown): string | undefined {
  return /--allow-[a-z]+/.exec(String((e as Error)?.message ?? ""))?.[0];
}

/**
 * "this task needs Deno's --allow-sys: Requires sys access to "statfs" …; `deno task NAME` and the script's shebang
 * grant it; a command of your own needs it too".
 */
export function describeMissingPermission(e: unknown): string {
  const flag = missingFlag(e) ?? "a permission flag";
  const detail = String((e as Error).message).replace(/,? run again with the --allow-[a-z]+ flag\.?/, "");
  return `this program needs Deno's ${flag} (${detail}); the deno.json task and the script's shebang grant what ` +
    `each task needs: run it with \`deno task …\`, or add ${flag} to your own \`deno run\` command`;
}
