/** DocaError (every non-success doca_error_t), TimeoutError (a wait that ran out of time), OverflowError (a bound). */
import { fallbackErrorName } from "./constants.ts";

/** Looks names and descriptions up in the loaded library; set by library.ts once DOCA is loaded. */
let describe: ((code: number) => { name: string; description: string }) | undefined;

export function setErrorDescriber(fn: typeof describe): void {
  describe = fn;
}

export class DocaError extends Error {
  override name = "DocaError";
  readonly code: number;
  /** e.g. "DOCA_ERROR_NOT_PERMITTED" (doca_error_get_name). */
  readonly docaName: string;
  /** doca_error_get_descr's text. */
  readonly description: string;
  /** The DOCA function (or task kind) that failed. */
  readonly fn: string;

  constructor(code: number, fn: string, context?: string) {
    const known = describe?.(code) ?? { name: fallbackErrorName(code), description: "" };
    super(`${fn} failed: ${known.name}${known.description ? ` (${known.description})` : ""}${context ? `: ${context}` : ""}`);
    this.code = code;
    this.docaName = known.name;
    this.description = known.description;
    this.fn = fn;
  }
}

export class TimeoutError extends Error {
  override name = "TimeoutError";
  constructor(what: string, timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

/**
 * A peer sent more than this side's bound on unread messages (Comch `maxUnreadBytes`): the connection that held the
 * most unread bytes was cut, its unread messages dropped, so a peer nobody serves cannot grow this process.
 */
export class OverflowError extends Error {
  override name = "OverflowError";
}

/** Throws a DocaError unless `rc` is DOCA_SUCCESS. */
export function check(rc: number, fn: string, context?: string): void {
  if (rc !== 0) throw new DocaError(rc, fn, context);
}

/** Error for using a handle after close(): never reaches native code. */
export function closedError(what: string): Error {
  return new Error(`${what} is closed`);
}
