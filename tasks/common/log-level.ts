/** DOCA's log levels (doca_log.h numeric values) and a tiny stderr logger that honours them. */
import { printError } from "./output.ts";
import { clearStatusLine } from "./status-line.ts";

export const LogLevel = { DISABLE: 10, CRIT: 20, ERROR: 30, WARNING: 40, INFO: 50, DEBUG: 60, TRACE: 70 } as const;

const NAMES: Record<string, number> = {
  disable: 10,
  crit: 20,
  critical: 20,
  error: 30,
  warning: 40,
  warn: 40,
  info: 50,
  debug: 60,
  trace: 70,
};

/** "60", "debug", "DEBUG" → 60; anything else → RangeError naming the input and the accepted values. */
export function parseLogLevel(input: string | number, flag = "--log-level"): number {
  const text = String(input).trim();
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n >= 10 && n <= 70 && n % 10 === 0) return n;
  } else if (NAMES[text.toLowerCase()] !== undefined) {
    return NAMES[text.toLowerCase()];
  }
  throw new RangeError(
    `${flag}: bad level ${JSON.stringify(input)}; use 10 (disable), 20 (critical), 30 (error), 40 (warning), ` +
      `50 (info), 60 (debug), 70 (trace) or those names`,
  );
}

export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug(msg: string): void;
}

/**
 * Lines as every other line of the task reads: "TAG: text" (info), "TAG: warning: text", "TAG: error: text",
 * "TAG: debug: text" (TAG: "dma-copy: host side", as its error and interruption lines); `level` filters as DOCA's do.
 */
export function createLogger(level: number, tag: string): Logger {
  const at = (threshold: number, label: string) => (msg: string) => {
    if (level < threshold) return;
    clearStatusLine(); // never glued to the end of a progress bar
    printError(`${tag}: ${label}${msg}`);
  };
  return {
    error: at(LogLevel.ERROR, "error: "),
    warn: at(LogLevel.WARNING, "warning: "),
    info: at(LogLevel.INFO, ""),
    debug: at(LogLevel.DEBUG, "debug: "),
  };
}
