/**
 * The one way a task writes to its terminal or logs. Every line passes through printable() (ffi/engine/printable.ts), so
 * no control character reaches the terminal from any source: peer texts, DOCA's messages, file names. The program's
 * own line breaks survive (one printable() call per line); text from a peer must be escaped whole where it enters
 * (messenger reasons, Comch answers), so a peer's "\n" cannot forge a line either. JSON goes out JSON-escaped.
 *
 * Output that can no longer be written (the reader of a pipe went away: `2>&1 | head -1`, EPIPE; a terminal that
 * hung up, EIO) never throws into the task: the first failure is remembered, nothing more is written to that stream,
 * and the listeners registered with onOutputLost (tasks/common/interrupt.ts: a clean stop, exit 141) are told once.
 * The other stream stays in use: `compress --json … | head -0` closes stdout only, and stderr still says what the
 * stop did (`2>&1 | head -1` closes both: a write to the second fails the same way and is dropped).
 */
import process from "node:process";
import { printable, printableJson } from "../../ffi/engine/printable.ts";
import { roundTo } from "./units.ts";
import { clearStatusLine } from "./status-line.ts";

export type OutputStream = "stdout" | "stderr";

let lost: { stream: OutputStream; code: string } | undefined;
/** Every stream that failed (the first one is `lost`). */
const lostStreams = new Set<OutputStream>();
const lostListeners = new Set<(stream: OutputStream, code: string) => void>();
let watching = false;

function outputLost(stream: OutputStream, error: unknown): void {
  lostStreams.add(stream);
  if (lost) return;
  lost = { stream, code: (error as { code?: string })?.code ?? (error as Error)?.name ?? "error" };
  for (const listener of lostListeners) {
    try {
      listener(stream, lost.code);
    } catch { /* a listener's failure must not become an uncaught error in a stream callback */ }
  }
}

/**
 * Listens for write errors on stdout and stderr (every runtime reports EPIPE as an 'error' event; without a
 * listener it becomes "Uncaught Error: write EPIPE"). runMain calls it; library users' processes are left alone.
 */
export function watchOutput(): void {
  if (watching) return;
  watching = true;
  for (const name of ["stdout", "stderr"] as const) {
    const stream = process[name] as unknown as { on?: (event: string, fn: (e: unknown) => void) => void };
    stream.on?.("error", (e) => outputLost(name, e));
  }
}

/**
 * Waits (at most `timeoutMs`) until what was written has left or failed, so a closed pipe is known before the
 * process exits: a short task writes its output and exits at once, before the runtime reports the EPIPE of that
 * write (its 'error' event comes a turn later), and would exit 0 as if the output had been read.
 */
export async function flushOutput(timeoutMs = 1000): Promise<void> {
  const open = (["stdout", "stderr"] as const).filter((name) => !lostStreams.has(name));
  if (open.length === 0) return;
  await Promise.all(open.map((name) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      const done = (error?: unknown) => {
        if (error) outputLost(name, error);
        clearTimeout(timer);
        resolve();
      };
      try {
        process[name].write("", (error?: Error | null) => done(error ?? undefined));
      } catch (e) {
        done(e);
      }
    })
  ));
  // error events the writes above queued
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/** Called once when stdout or stderr can no longer be written (EPIPE, EIO). */
export function onOutputLost(listener: (stream: OutputStream, code: string) => void): () => void {
  lostListeners.add(listener);
  if (lost) listener(lost.stream, lost.code);
  return () => lostListeners.delete(listener);
}

/** Which stream was lost and why, if one was. */
export function outputLostOn(): { stream: OutputStream; code: string } | undefined {
  return lost;
}

/** Writes `text` and a line break; each of its lines escaped by printable(). Never throws. */
export function writeLines(stream: OutputStream, text: string): void {
  if (lostStreams.has(stream)) return;
  clearStatusLine(); // a live progress line on the terminal is erased first, never glued to this text
  const safe = String(text).split("\n").map((line) => printable(line)).join("\n");
  try {
    process[stream].write(`${safe}\n`);
  } catch (e) {
    outputLost(stream, e);
  }
}

/**
 * Data in a format defined elsewhere, written as is (no printable() escaping): sha's digest list, which must be
 * byte for byte what sha256sum writes so `sha256sum -c` reads it back (that format escapes what it must itself).
 */
export function writeData(text: string): void {
  if (lostStreams.has("stdout")) return;
  clearStatusLine();
  try {
    process.stdout.write(text);
  } catch (e) {
    outputLost("stdout", e);
  }
}

/** One line (or several) on stdout. */
export function print(text: string): void {
  writeLines("stdout", text);
}

/** One line (or several) on stderr. */
export function printError(text: string): void {
  writeLines("stderr", text);
}

/**
 * `value` as JSON on stdout, with every control character \u-escaped (still valid JSON, same value), and its numbers
 * made sane by saneNumbers(): every task's --json goes through here, so one rule holds for all of them.
 */
export function printJson(value: unknown, space?: number): void {
  writeLines("stdout", printableJson(saneNumbers(value), space));
}

/**
 * Keys whose numbers are counts of bytes or rates (bytes, messages or operations per second): whole numbers in JSON.
 * A tool reading `"bytesPerSecond":104857600` gains nothing from `104857600.12345679`.
 */
const WHOLE_NUMBER_KEY = /(bytes|PerSecond|Size|size)$/i;

/**
 * A copy of `value` with JSON's one rule for numbers: byte counts and rates (keys named like WHOLE_NUMBER_KEY) are
 * integers; every other fraction (seconds, ratios) is rounded to three decimals (seconds to the millisecond): a tool
 * reading `"seconds":0.58` gains nothing from `0.5800618760000001`, a person pasting it loses readability.
 */
export function saneNumbers(value: unknown, key = ""): unknown {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || Number.isInteger(value)) return value;
    return WHOLE_NUMBER_KEY.test(key) ? Math.round(value) : roundTo(value, 3);
  }
  if (Array.isArray(value)) return value.map((v) => saneNumbers(v, key));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, saneNumbers(v, k)]));
  }
  return value;
}
