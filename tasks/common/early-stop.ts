/**
 * The first import of every task's entry file: it installs provisional SIGINT/SIGTERM/SIGHUP handlers as soon as the
 * task's modules start to evaluate, before the FFI and the DOCA libraries load (ES modules evaluate their imports
 * depth-first, in order, so this module runs before the imports after it). A stop in that first part of a run used
 * to end the task by the signal's default action: the right status, but without the "interrupted" line every later
 * stop prints. Now the stop is recorded here and runMain's installStopHandlers (tasks/common/interrupt.ts) takes it
 * over: the same line, the same status (130/143/129). What no module can cover is the time before the runtime
 * evaluates the first one (starting the runtime, loading and compiling the module graph): docs/FAULTS.md gives the
 * bound measured on each runtime.
 *
 * Only in a process whose main script is a task file of this folder: a program that imports the tasks as a library
 * (tasks/mod.ts) keeps its own signal handling.
 */
import process from "node:process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { taskName } from "./task-name.ts";

type EarlySignal = "SIGINT" | "SIGTERM" | "SIGHUP";
const CODES: Record<EarlySignal, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** If runMain has not taken a recorded stop over within this time (a script that never reaches it), end here. */
const FALLBACK_MS = 3_000;

let recorded: EarlySignal | undefined;
let fallback: ReturnType<typeof setTimeout> | undefined;
const listeners = new Map<EarlySignal, () => void>();

/** True when the running script is a file under tasks/ (this module's parent folder), as every task entry is. */
function runningATask(): boolean {
  const script = resolve(process.argv[1] ?? "/");
  return script.startsWith(fileURLToPath(new URL("..", import.meta.url)));
}

function record(name: EarlySignal): void {
  if (recorded) return; // the same stop again (a wrapper forwarding it): runMain reports it once
  recorded = name;
  fallback = setTimeout(() => {
    process.stderr.write(`${taskName() ? `${taskName()}: ` : ""}interrupted (${name})\n`);
    process.exit(CODES[name]);
  }, FALLBACK_MS);
}

/** With DOCA_TS_ANNOUNCE_STOP_HANDLERS set, says on stderr when the handlers are in place (tests stop the task then). */
function announceWanted(): boolean {
  try {
    return Boolean(process.env.DOCA_TS_ANNOUNCE_STOP_HANDLERS);
  } catch {
    return false; // Deno without --allow-env: runMain says so
  }
}

if (runningATask()) {
  for (const name of Object.keys(CODES) as EarlySignal[]) {
    const listener = () => record(name);
    listeners.set(name, listener);
    process.on(name, listener);
  }
  if (announceWanted()) process.stderr.write(`${taskName()}: stop handlers installed\n`);
}

/**
 * Removes the provisional handlers (call it once the real ones are installed, so no signal finds none) and returns
 * the stop that came before, if one did.
 */
export function takeEarlyStop(): EarlySignal | undefined {
  for (const [name, listener] of listeners) process.off(name, listener);
  listeners.clear();
  if (fallback !== undefined) clearTimeout(fallback);
  return recorded;
}
