/**
 * `npm test` under Deno printed one "." per line (Deno's dot reporter ends every dot with a newline): the runner now
 * joins them into rows (scripts/dot-rows.ts), and every other line of the report passes unchanged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { dotRows } from "../scripts/dot-rows.ts";

function run(chunks: string[], width?: number): string {
  let out = "";
  const rows = dotRows((text) => (out += text), width);
  for (const chunk of chunks) rows.push(chunk);
  rows.end();
  return out;
}

const grey = (mark: string) => `\x1b[0m\x1b[38;5;245m${mark}\x1b[0m`;

test("suite: Deno's one-dot lines are joined into rows, other lines untouched", { timeout: 10_000 }, () => {
  // as Deno 2.9 writes it: a coloured dot and a newline per test, then the summary
  const report = `${grey(".")}\n`.repeat(7) + `${grey(",")}\n${grey("!")}\n\n\x1b[0m\x1b[32mok\x1b[0m | 9 passed\n`;
  const out = run([report.slice(0, 17), report.slice(17, 60), report.slice(60)], 4);
  // 9 marks in rows of 4, a row ended before the summary's blank line
  assert.equal(out.replaceAll("\x1b[0m", "").replaceAll("\x1b[38;5;245m", "").replaceAll("\x1b[32m", ""), "....\n...,\n!\n\nok | 9 passed\n");
  assert.equal(out.split("\n").filter((l) => l.includes("\x1b[38;5;245m")).length, 3, "colour codes kept");
});

test("suite: plain lines, a last line without newline, and a pipe's \\r\\n", { timeout: 10_000 }, () => {
  assert.equal(run(["a\n.\r\n.\nb\n", "tail"]), "a\n..\nb\ntail");
  assert.equal(run([".\n.\n"]), "..\n");
  assert.equal(run(["..\n"]), "..\n"); // two dots on one line are a line, not marks
  assert.equal(run([".\n".repeat(50)]), ".".repeat(50) + "\n"); // a full row ends once
});

test("suite: another stream's line never starts after a row's dots", { timeout: 10_000 }, () => {
  let out = "";
  const rows = dotRows((text) => (out += text));
  rows.push(".\n.\n");
  rows.breakRow();
  out += "[doca-sim 1] strict: a report\n"; // the runner's stderr, on the same screen
  rows.breakRow(); // nothing in progress: no empty line
  rows.push(".\n");
  rows.end();
  assert.equal(out, "..\n[doca-sim 1] strict: a report\n.\n");
});

