/**
 * The progress line: redrawn in place with nothing left over from a longer previous line, a rate measured from the
 * first byte moved (not from when the side started waiting for its peer), and cleared before any other message so
 * an error never ends up glued to the bar.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProgressBar } from "../tasks/transfer/progress.ts";
import { clearStatusLine, drawStatusLine } from "../tasks/common/status-line.ts";

const MiB = 1024 * 1024;

function bar(total: number) {
  const out: string[] = [];
  let now = 0;
  const b = new ProgressBar(total, true, (t) => void out.push(t), () => now);
  return { b, out, at: (t: number) => (now = t) };
}

test("every redraw starts at the margin and erases to the end of the line", () => {
  const { b, out, at } = bar(10 * MiB);
  at(0), b.update(0);
  at(1000), b.update(MiB);
  at(2000), b.update(5 * MiB);
  assert.ok(out.length >= 2);
  for (const o of out) assert.ok(o.startsWith("\r") && o.endsWith("\x1b[K"), JSON.stringify(o));
  for (const o of out) assert.doesNotMatch(o, /\ds s|s s\b/, "no doubled unit");
  clearStatusLine();
});

test("the rate leaves out the time spent waiting for the peer", () => {
  const { b, at } = bar(10 * MiB);
  at(0), b.update(0); // bar created, waiting for the peer
  at(30_000), b.update(MiB); // first chunk after 30 s of waiting
  const line = b.line(3 * MiB, 32_000); // 2 MiB more in 2 s
  assert.match(line, /1\.00 MiB\/s/, line);
  assert.match(line, /ETA 7\.0 s$/, line);
  assert.match(b.line(10 * MiB, 40_000), /done$/);
  clearStatusLine();
});

test("a message after the bar clears it first (nothing glued to the bar)", () => {
  const out: string[] = [];
  drawStatusLine("[####......] 40%", (t) => void out.push(t));
  clearStatusLine();
  clearStatusLine(); // once only
  assert.deepEqual(out, ["\r[####......] 40%\x1b[K", "\r\x1b[K"]);
});
