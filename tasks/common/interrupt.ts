/**
 * Every way a task is told to stop behaves like Ctrl-C, on Deno, Bun and Node alike: SIGINT, SIGTERM, SIGHUP (a
 * terminal or ssh session that went away) and output that can no longer be written (a closed pipe, EPIPE: named
 * SIGPIPE here). The first of them aborts an AbortSignal the task's waits race against, so the task unwinds through
 * its own cleanup (stop DMA, close DOCA objects, remove its temporary file, tell the peer why) and runMain exits with
 * the conventional status: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP), 141 (SIGPIPE), after one line saying what was
 * interrupted.
 *
 * A task that does not observe the signal (it never called stopOnSignals) is ended at once by the same stop, after
 * the registered last-resort cleanups, with the same line and status. If unwinding hangs, or the user sends another
 * stop more than a second after the first, the last-resort cleanups run synchronously and the process exits at once.
 * A second signal within that second is the same stop delivered twice: a Ctrl-C reaches every process of the
 * terminal's foreground group, and wrappers (npm run, deno task, node's bin shims) forward it to their child again.
 */
import process from "node:process";
import { setImmediate } from "node:timers";
import { onOutputLost, printError, watchOutput } from "./output.ts";
import { speaker } from "./task-name.ts";
import { takeEarlyStop } from "./early-stop.ts";

/** "doctor: ", the prefix of this task's own lines ("" when the script's name is unknown). */
const named = () => (speaker() ? `${speaker()}: ` : "");

export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGPIPE";

/** 128 + the signal's number, as a shell reports a process killed by it. */
export const EXIT_CODES: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129, SIGPIPE: 141 };

/** How every task's --help states the stop statuses (tests/tasks-help.test.ts checks that each help has it). */
export const STOPPED_STATUSES = "130/143/129/141 when stopped (SIGINT/SIGTERM/SIGHUP/output closed)";

/** Thrown by a wait that the user interrupted; runMain prints its message and exits with `exitCode`. */
export class InterruptedError extends Error {
  override name = "InterruptedError";
  readonly exitCode: number;
  constructor(readonly signal: StopSignal, message: string) {
    super(message);
    this.exitCode = EXIT_CODES[signal];
  }
}

function stopName(reason: unknown): StopSignal {
  return typeof reason === "string" && Object.hasOwn(EXIT_CODES, reason) ? reason as StopSignal : "SIGINT";
}

/** How a stop is described: "SIGINT", or "SIGPIPE: stdout closed". */
function describe(name: StopSignal): string {
  return name === "SIGPIPE" && lostStream ? `SIGPIPE: ${lostStream} closed` : name;
}

/** The InterruptedError an aborted signal carries (or a SIGINT one for any other abort reason). */
export function interruption(signal: AbortSignal, what: string): InterruptedError {
  const name = stopName(signal.reason);
  return new InterruptedError(name, `interrupted (${describe(name)}) while ${what}`);
}

/**
 * How long a side whose own part of a copy is done keeps waiting for the peer's last message (its commit receipt)
 * after a stop: a stop at the very end then reports a completed copy ("finished before the stop took effect")
 * instead of an interrupted one while the peer committed the file.
 */
export const FINAL_MESSAGE_GRACE_MS = 2_000;

/**
 * A signal that aborts `graceMs` after `signal` did (with its reason), for a wait that may still end well after a
 * stop: the peer's last message. Undefined in, undefined out.
 */
export function afterGrace(signal: AbortSignal | undefined, graceMs: number = FINAL_MESSAGE_GRACE_MS): AbortSignal | undefined {
  if (!signal) return undefined;
  const later = new AbortController();
  const arm = () => {
    const timer = setTimeout(() => later.abort(signal.reason), graceMs);
    (timer as { unref?: () => void }).unref?.();
  };
  if (signal.aborted) arm();
  else signal.addEventListener("abort", arm, { once: true });
  return later.signal;
}

/** Rejects with interruption(signal, what) as soon as `signal` aborts; otherwise settles like `p`. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(interruption(signal, what));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(interruption(signal, what));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

const lastResort = new Set<() => void>();

/** A synchronous cleanup (e.g. unlink a temporary file) run if the process must exit without unwinding. */
export function onForcedExit(cleanup: () => void): () => void {
  lastResort.add(cleanup);
  return () => lastResort.delete(cleanup);
}

function forceExit(code: number): never {
  for (const cleanup of lastResort) {
    try {
      cleanup();
    } catch { /* best effort: we are leaving */ }
  }
  process.exit(code);
}

/** Stops within this many milliseconds of the first are the same stop delivered again (wrappers, process groups). */
const SAME_STOP_MS = 1000;

let controller: AbortController | undefined;
let claimed = false;
let firstStopAt = 0;
let lostStream: string | undefined;

function stop(name: StopSignal, graceMs: number): void {
  const c = controller!;
  if (c.signal.aborted) {
    // The same Ctrl-C forwarded by a wrapper: ignore. A later one: the user insists.
    if (performance.now() - firstStopAt >= SAME_STOP_MS) forceExit(EXIT_CODES[stopName(c.signal.reason)]);
    return;
  }
  firstStopAt = performance.now();
  c.abort(name);
  if (!claimed) {
    // Nobody unwinds on this signal: end now, as cleanly as the default action would but with a line and a status.
    printError(`${named()}interrupted (${describe(name)})`);
    forceExit(EXIT_CODES[name]);
  }
  const timer = setTimeout(() => {
    printError(`${named()}interrupted (${describe(name)}): cleanup did not finish within ${graceMs / 1000} s, exiting`);
    forceExit(EXIT_CODES[name]);
  }, graceMs);
  (timer as { unref?: () => void }).unref?.();
}

/**
 * Lets the event loop deliver a stop that arrived while the task ran synchronous code (hashing a large file, removing
 * a folder): its handler only runs once the loop turns, and a task that ends right after that code would otherwise
 * look at its signal before the stop was heard. Two loop turns (immediates) and a short timer: Node and Bun deliver a
 * signal in the loop's poll phase, Deno through a timer-driven op.
 */
export async function stopsDelivered(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 10));
}

/** True when `code` is the status of a process ended by a stop (130/143/129/141), as a child that got the same Ctrl-C. */
export function isStopStatus(code: number | null | undefined): boolean {
  return code !== null && code !== undefined && Object.values(EXIT_CODES).includes(code);
}

/**
 * A stop that came while the work was finishing, after the last point the task looked at its signal: the line that
 * says so and the signal's status, or undefined when no stop came. A task whose output is committed reports the stop
 * all the same ("finished before the stop took effect"), so a script sees every stop it sent (issue 30); a task that
 * failed meanwhile (a child that got the same Ctrl-C) says it failed (`failure`: its message, or "" when the task
 * printed it already). Call stopsDelivered() first.
 */
export function lateStop(failure?: string): { line: string; code: number } | undefined {
  if (!controller?.signal.aborted) return undefined;
  const name = stopName(controller.signal.reason);
  const what = failure === undefined
    ? "finished before the stop took effect (its output is complete)"
    : `the run failed as it stopped${failure ? `: ${failure}` : ""}`;
  return { line: `${named()}interrupted (${describe(name)}): ${what}`, code: EXIT_CODES[name] };
}

/**
 * Installs the stop handlers once (SIGINT, SIGTERM, SIGHUP, lost output); runMain does this for every task.
 * `graceMs` bounds the unwinding: after it the process exits anyway.
 */
export function installStopHandlers(graceMs = 10_000): AbortSignal {
  if (controller) return controller.signal;
  controller = new AbortController();
  watchOutput();
  for (const name of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(name, () => stop(name, graceMs));
  onOutputLost((stream) => {
    lostStream ??= stream;
    stop("SIGPIPE", graceMs);
  });
  // A stop that came while the task's modules were loading (tasks/common/early-stop.ts recorded it) is this stop:
  // reported and acted on now, as if it had come after this point.
  const early = takeEarlyStop();
  if (early) stop(early, graceMs);
  return controller.signal;
}

/**
 * The AbortSignal every stop aborts (reason: the signal's name), for a task that unwinds on it: calling this says
 * the task observes it, so a stop no longer ends the process at once.
 */
export function stopOnSignals(graceMs = 10_000): AbortSignal {
  claimed = true;
  return installStopHandlers(graceMs);
}
