/**
 * Entry-point helpers shared by every task: "am I the script being run?" on Deno, Bun and Node (Node 20 has no
 * import.meta.main), and one place that turns a thrown error into a message and an exit status: 2 for usage errors,
 * 130/143/129/141 for SIGINT/SIGTERM/SIGHUP/lost output (tasks/common/interrupt.ts), 1 otherwise. Every task's
 * output goes through tasks/common/output.ts (control characters escaped; a closed pipe stops the task cleanly).
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { EXIT_CODES, installStopHandlers, InterruptedError, lateStop, stopsDelivered } from "./interrupt.ts";
import { UsageError } from "./cli.ts";
import { flushOutput, outputLostOn, print, printError } from "./output.ts";

export { print };
import { describeMissingPermission, missingPermissionIn } from "./permission.ts";
import { environmentNotes } from "./environment.ts";
import { speaker as taskSpeaker, taskName } from "./task-name.ts";
import { resolvePathVariables } from "./user-path.ts";

export { taskName };

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

/** DOCA_TS_DEBUG is set; false when it cannot be read (Deno without --allow-env: the error said so already). */
function debugWanted(): boolean {
  try {
    return Boolean(process.env.DOCA_TS_DEBUG);
  } catch {
    return false;
  }
}

/**
 * A Promise that rejects with the first rejection no code handled while the task runs (a Promise started and only
 * awaited later, which failed meanwhile): the task fails with it like with any error, in one line, instead of
 * Deno's "Uncaught (in promise)" trace or Node's crash with a stack.
 */
function strayRejection(): Promise<never> {
  const stray = new Promise<never>((_, reject) => process.once("unhandledRejection", (reason) => reject(reason)));
  stray.catch(() => {}); // the race reports it; this Promise itself is never a stray one
  return stray;
}

/**
 * Runs `fn`; on error prints one line to stderr ("TASK: error: …", or "TASK: interrupted (SIGINT) while …") and exits 2 for
 * usage errors, the signal's status (130/143) for an interruption, 1 otherwise. `speaker` is the name lines start with
 * (default the task's; dma-copy's, once its side is known, "dma-copy: host side" as its log lines).
 */
export async function runMain(fn: () => Promise<number | void> | number | void, speaker: () => string = taskSpeaker): Promise<never> {
  installStopHandlers();
  let code = 0;
  try {
    // Deno without --allow-env: nothing could be rewritten, and --help or a bad flag must still answer (exit 0 / 2);
    // a real run meets the same refusal at its first DOCA call (loading reads DOCA_*) and reports it there.
    try {
      resolvePathVariables();
    } catch (e) {
      if (!missingPermissionIn(e as Error)) throw e;
    }
    code = (await Promise.race([fn(), strayRejection()])) ?? 0;
    // A stop that arrived as the work ended is reported, never swallowed (exit 0 would tell a script nothing
    // happened): first the loop is let to deliver one that came during the task's last synchronous code.
    if (code === 0 || code === 1) {
      await stopsDelivered();
      const late = lateStop(code === 0 ? undefined : "");
      if (late) {
        printError(late.line);
        code = late.code;
      }
    }
  } catch (e) {
    const err = e as Error & { exitCode?: number };
    // a missing Deno permission is reported as itself even when a catch wrapped it (in a usage error too)
    const permission = e instanceof InterruptedError ? undefined : missingPermissionIn(err);
    const usage = e instanceof UsageError && !permission;
    // Every line starts with the task's name: in a script running several tasks, or in a bug report, the reader
    // sees which one spoke.
    const task = speaker();
    const named = (text: string) => task && !text.startsWith(`${task} `) && !text.startsWith(`${task}:`) ? `${task}: ${text}` : text;
    if (!usage && !(e instanceof InterruptedError)) await stopsDelivered();
    const raw = permission ? describeMissingPermission(permission) : err?.message ?? String(e);
    // one prefix per line: a message that already names the task ("TASK: …") does not get it twice
    const message = task && raw.startsWith(`${task}: `) ? raw.slice(task.length + 2) : raw;
    // A failure after a stop (a child that got the same Ctrl-C and exited on its own) is that stop's end.
    const late = usage || e instanceof InterruptedError ? undefined : lateStop(message);
    if (e instanceof InterruptedError) {
      printError(named(err.message));
      code = err.exitCode ?? 130;
    } else if (late) {
      printError(late.line);
      code = late.code;
    } else {
      printError(named(`error: ${message}${usage ? " (see --help)" : ""}${environmentNotes()}`));
      code = usage ? 2 : 1;
    }
    if (debugWanted() && err?.stack) printError(err.stack);
  }
  // Output that could not be written ends the task as SIGPIPE would have, even when the work itself finished: a
  // closed pipe found only now (its last write's EPIPE comes a turn later) is a late stop like any other, and says
  // so on the stream still open (`compress --json … | head -0`: stderr), its output committed or not.
  await flushOutput();
  if (outputLostOn() && (code === 0 || code === 1)) {
    const late = lateStop(code === 0 ? undefined : "");
    if (late) {
      printError(late.line);
      await flushOutput();
    }
    code = EXIT_CODES.SIGPIPE;
  }
  process.exit(code);
}
