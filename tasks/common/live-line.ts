/**
 * A live progress line for long runs (the demos, comch-stream, rdma-ping), as the copies have their bar: redrawn a
 * few times a second on stderr while it is a terminal, and nothing at all when stderr is a pipe or a file (a log
 * must not fill with carriage returns). Lines printed meanwhile clear it first (tasks/common/output.ts).
 */
import process from "node:process";
import { clearStatusLine, drawStatusLine } from "./status-line.ts";

export interface LiveLine {
  /** Redraws now (also done every interval on its own). */
  refresh(): void;
  /** Erases the line and stops redrawing. */
  stop(): void;
}

const NONE: LiveLine = { refresh() {}, stop() {} };

/** Starts a line showing `text()`; a no-op unless stderr is a terminal (or `enabled` says otherwise). */
export function startLiveLine(
  text: () => string,
  { intervalMs = 250, enabled = process.stderr.isTTY === true }: { intervalMs?: number; enabled?: boolean } = {},
): LiveLine {
  if (!enabled) return NONE;
  const draw = () => drawStatusLine(text());
  draw();
  const timer = setInterval(draw, intervalMs);
  // A live line never keeps a finished program running.
  (timer as { unref?: () => void }).unref?.();
  return {
    refresh: draw,
    stop() {
      clearInterval(timer);
      clearStatusLine();
    },
  };
}

/** "12 s", "2 min 05 s": elapsed time for a live line. */
export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}
