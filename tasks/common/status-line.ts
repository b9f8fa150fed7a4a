/**
 * The one redrawn status line (a progress bar) on stderr. Anything else written to the terminal while it is shown
 * must clear it first, or the message lands glued to the end of the bar; clearStatusLine() does that and is cheap
 * to call when no line is shown.
 */
import process from "node:process";

let open = false;
let writer: (text: string) => void = (text) => void process.stderr.write(text);

/** Redraws the status line: carriage return, the text, then erase to the end of the line (no leftovers). */
export function drawStatusLine(text: string, write: (text: string) => void = writer): void {
  writer = write;
  write(`\r${text}\x1b[K`);
  open = true;
}

/** Erases the status line, if shown, so the next message starts at the left margin of a clean line. */
export function clearStatusLine(): void {
  if (!open) return;
  open = false;
  writer("\r\x1b[K");
}

/** Leaves the status line as it is and moves to the next line (the bar's final state stays visible). */
export function endStatusLine(): void {
  if (!open) return;
  open = false;
  writer("\n");
}
