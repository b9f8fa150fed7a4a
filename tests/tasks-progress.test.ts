/**
 * The one progress line (tasks/common/progress.ts, issue 32 n1 item 4): "TASK: done of total (P%), rate, ETA",
 * the task's name first as on every line; redrawn in place with nothing left over from a longer previous line; a
 * rate measured from the first byte moved (not from when the side started waiting for its peer); erased at the end
 * (the one end rule) and before any other message, so nothing ends up glued to it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProgressBar } from "../tasks/transfer/progress.ts";
import { Progress, progressText } from "../tasks/common/progress.ts";
import { withProgress } from "../tasks/accel/progress.ts";
import { clearStatusLine, drawStatusLine } from "../tasks/common/status-line.ts";

const MiB = 1024 * 1024;

function bar(total: number, label = "dma-copy: host side") {
  const out: string[] = [];
  let now = 0;
  const b = new ProgressBar(label, total, { enabled: true, write: (t) => void out.push(t), now: () => now });
  return { b, out, at: (t: number) => (now = t) };
}

test("every redraw starts at the margin, names the task and erases to the end of the line", () => {
  const { b, out, at } = bar(10 * MiB);
  at(0), b.update(0);
  at(1000), b.update(MiB);
  at(2000), b.update(5 * MiB);
  assert.ok(out.length >= 2);
  for (const o of out) assert.ok(o.startsWith("\rdma-copy: host side: ") && o.endsWith("\x1b[K"), JSON.stringify(o));
  for (const o of out) assert.doesNotMatch(o, /\ds s|s s\b/, "no doubled unit");
  clearStatusLine();
});

test("the rate leaves out the time spent waiting for the peer", () => {
  const { b, at } = bar(10 * MiB, "rdma-copy");
  at(0), b.update(0); // bar created, waiting for the peer
  at(30_000), b.update(MiB); // first chunk after 30 s of waiting
  const line = b.line(3 * MiB, 32_000); // 2 MiB more in 2 s
  assert.equal(line, "rdma-copy: 3.00 MiB of 10.0 MiB (30%), 1.00 MiB/s, ETA 7.0 s");
  assert.equal(b.line(10 * MiB, 40_000), "rdma-copy: 10.0 MiB of 10.0 MiB (100%), 922 KiB/s");
  clearStatusLine();
});

test("one format for every task: the name, done of total, %, then rate and ETA once bytes moved", () => {
  assert.equal(progressText("compress", 15 * MiB, 95.4 * MiB), "compress: 15.0 MiB of 95.4 MiB (15%)");
  assert.equal(progressText("sha", 0, 0), "sha: 0 B of 0 B (100%)");
  assert.equal(progressText("encrypt", 2 * MiB, 4 * MiB, { moved: 2 * MiB, seconds: 1 }), "encrypt: 2.00 MiB of 4.00 MiB (50%), 2.00 MiB/s, ETA 1.0 s");
});

test("the end rule: the line is erased when the work ends, well or not (no partial line left above the summary)", async () => {
  const out: string[] = [];
  const p = new Progress("decompress", { enabled: true, write: (t) => void out.push(t) });
  p.update(MiB, 2 * MiB);
  p.end();
  assert.equal(out.at(-1), "\r\x1b[K");
  const { b, out: barOut, at } = bar(MiB);
  at(0), b.update(MiB);
  b.finish();
  assert.equal(barOut.at(-1), "\r\x1b[K", "the copies' bar too: no 100% line left on screen");
  // withProgress erases on success as on failure (it left "(89%)" on screen after a good run)
  const drawn: string[] = [];
  await withProgress("ec-encode", (on) => {
    drawStatusLine("ec-encode: 1 B of 2 B (50%)", (t) => void drawn.push(t));
    on(1, 2);
    return Promise.resolve();
  });
  assert.equal(drawn.at(-1), "\r\x1b[K");
});

test("a message after the line clears it first (nothing glued to it)", () => {
  const out: string[] = [];
  drawStatusLine("compress: 1 B of 2 B (50%)", (t) => void out.push(t));
  clearStatusLine();
  clearStatusLine(); // once only
  assert.deepEqual(out, ["\rcompress: 1 B of 2 B (50%)\x1b[K", "\r\x1b[K"]);
});

test("after the last byte the copies say what they wait for (checksums, the receiver's fsync) instead of a still or blank line", { timeout: 10_000 }, async () => {
  // a copy of 763 MiB sat 1.5 s at 100% and then on a blank line while the receiver verified and fsync'd
  const { b, out, at } = bar(MiB);
  at(0), b.update(MiB);
  const before = out.length;
  b.settle("every byte sent; waiting for the DPU side to verify and commit the file", 30);
  assert.equal(out.at(-1), "\r\x1b[K", "the bar is erased at once");
  await new Promise((resolve) => setTimeout(resolve, 400));
  const lines = out.slice(before + 1);
  assert.ok(lines.length >= 1, "drawn once it lasted 30 ms, then redrawn");
  for (const line of lines) assert.equal(line, "\rdma-copy: host side: every byte sent; waiting for the DPU side to verify and commit the file… 0 s\x1b[K");
  b.finish();
  assert.equal(out.at(-1), "\r\x1b[K", "finish() erases it");
  const after = out.length;
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(out.length, after, "and it is not drawn again");

  // a quick end draws nothing
  const quick = bar(MiB);
  quick.at(0), quick.b.update(MiB);
  const drawn = quick.out.length;
  quick.b.settle("every byte received; verifying it and writing it to disk");
  quick.b.finish();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(quick.out.slice(drawn).filter((o) => o !== "\r\x1b[K"), []);
  clearStatusLine();
});
