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
  const system = systemPathOf(e);
  if (system !== undefined) {
    return `${system} is a system path (under /dev, /proc or /sys) that Deno lets a program use only with ` +
      `--allow-all, which the tasks are not given: choose another path`;
  }
  const flag = missingFlag(e) ?? "a permission flag";
  const detail = String((e as Error).message).replace(/,? run again with the --allow-[a-z]+ flag\.?/, "");
  return `this program needs Deno's ${flag} (${detail}); the deno.json task and the script's shebang grant what ` +
    `each task needs: run it with \`deno task …\`, or add ${flag} to your own \`deno run\` command`;
}

/**
 * The path of Deno's "Requires all access to "/sys/x"": Deno guards /dev, /proc and /sys behind --allow-all, so
 * "add --allow-all" or "run it with deno task" would be wrong advice for a task's output there.
 */
export function systemPathOf(e: unknown): string | undefined {
  return /Requires all access to "([^"]*)"/.exec(String((e as Error).message))?.[1];
}

/** Deno's own words for a missing flag: `Requires read access to "x", run again with the --allow-read flag`. */
const DENO_WORDS = /Requires \w+ access to .*?, run again with the --allow-[a-z]+ flag/;

/**
 * The missing Deno permission behind `e`: `e` itself, one of its causes, or (for a catch that rewrapped the error
 * into its own message without the cause) Deno's words inside the message. undefined when there is none. runMain
 * reports that as the one permission line, so a rewrap can never turn "add --allow-write" into "cannot create X".
 */
export function missingPermissionIn(e: unknown): Error | undefined {
  for (let at = e, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    if (isMissingPermission(at)) return at;
  }
  const words = DENO_WORDS.exec(String((e as Error)?.message ?? ""));
  return words ? new Error(words[0]) : undefined;
}
