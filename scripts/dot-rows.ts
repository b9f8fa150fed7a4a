/**
 * Deno's dot reporter (deno test --reporter=dot, as scripts/test.ts runs it) ends every dot with a newline, on a
 * terminal and in a pipe alike: `npm test` scrolled one "." per line, thousands of them in a run (a CI log of 2000+
 * one-character lines). This joins a run of such lines — ".", "," (ignored) or "!" (failed), with or without their
 * colour codes — into rows of `width` marks, each mark written as it comes; any other line passes unchanged, after
 * the row in progress is ended.
 */

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const isMark = (line: string) => /^[.,!]$/.test(line.replace(ANSI, "").replace(/\r$/, ""));

export interface DotRows {
  /** A chunk of the reporter's output, cut anywhere. */
  push(chunk: string): void;
  /** The end of the output: the last partial line and the row in progress are written. */
  end(): void;
  /** Ends the row in progress (before the other stream writes to the same screen), so a line never starts mid-row. */
  breakRow(): void;
}

export function dotRows(write: (text: string) => void, width = 50): DotRows {
  let pending = "";
  let inRow = 0;
  const line = (text: string) => {
    if (isMark(text)) {
      write(text.replace(/\r$/, ""));
      if (++inRow === width) {
        write("\n");
        inRow = 0;
      }
      return;
    }
    if (inRow > 0) write("\n");
    inRow = 0;
    write(`${text}\n`);
  };
  return {
    breakRow() {
      if (inRow > 0) write("\n");
      inRow = 0;
    },
    push(chunk) {
      pending += chunk;
      let at: number;
      while ((at = pending.indexOf("\n")) >= 0) {
        line(pending.slice(0, at));
        pending = pending.slice(at + 1);
      }
    },
    end() {
      if (pending) {
        if (inRow > 0) write("\n");
        write(pending);
        inRow = 0;
        pending = "";
      }
      if (inRow > 0) write("\n");
      inRow = 0;
    },
  };
}
