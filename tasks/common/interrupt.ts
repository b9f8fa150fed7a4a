/**
 * Ctrl-C and `kill` for every task, on Deno, Bun and Node alike (all three deliver SIGINT/SIGTERM to
 * node:process listeners): the first signal aborts an AbortSignal the task's waits race against, so the task unwinds
 * through its own cleanup (stop DMA, close DOCA objects, remove its temporary file, tell the peer) and runMain
 * exits 130 (SIGINT) or 143 (SIGTERM) with one line saying what was interrupted. If unwinding hangs, or a second
 * signal comes, the registered last-resort cleanups run synchronously and the process exits at once.
 */
import process from "node:process";

export type StopSignal = "SIGINT" | "SIGTERM";
const EXIT_CODES: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** Thrown by a wait that the user interrupted; runMain prints its message and exits with `exitCode`. */
export class InterruptedError extends Error {
  override name = "InterruptedError";
  readonly exitCode: number;
  constructor(readonly signal: StopSignal, message: string) {
    super(message);
    this.exitCode = EXIT_CODES[signal];
  }
}

/** The InterruptedError an aborted signal carries (or a SIGINT one for any other abort reason). */
export function interruption(signal: AbortSignal, what: string): InterruptedError {
  const reason = signal.reason as unknown;
  const name: StopSignal = reason === "SIGTERM" ? "SIGTERM" : "SIGINT";
  return new InterruptedError(name, `interrupted (${name}) while ${what}`);
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

let installed: AbortController | undefined;

/**
 * Installs SIGINT/SIGTERM listeners once and returns the AbortSignal they abort (reason: the signal's name).
 * `graceMs` bounds the unwinding: after it the process exits anyway.
 */
export function stopOnSignals(graceMs = 10_000): AbortSignal {
  if (installed) return installed.signal;
  const controller = new AbortController();
  installed = controller;
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    process.on(name, () => {
      if (controller.signal.aborted) forceExit(EXIT_CODES[name]); // second signal: no more waiting
      controller.abort(name);
      const timer = setTimeout(() => {
        process.stderr.write(`interrupted (${name}): cleanup did not finish within ${graceMs / 1000} s, exiting\n`);
        forceExit(EXIT_CODES[name]);
      }, graceMs);
      (timer as { unref?: () => void }).unref?.();
    });
  }
  return controller.signal;
}
