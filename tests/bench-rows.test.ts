/**
 * A benchmark table never contradicts itself: the ratio a row shows and its target's verdict are decided by the same
 * digits. bench:rdma printed a ratio of 0.795 as "0.80×" (two decimals) beside "≥ 0.8× C ✗" (graded unrounded);
 * the table now shows the three significant digits the JSON stores, and every bench grades what is shown
 * (rows.ts atLeast/atMost/below). Pure functions: no device, no process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { atLeast, atMost, below, formatRatio, formatTable, round3, type Row } from "../benchmarks/rows.ts";
import { rdmaRows } from "../benchmarks/rdma.ts";

const MiB = 1 << 20;

test("bench rows: formatRatio shows the three significant digits round3 keeps", { timeout: 10_000 }, () => {
  assert.equal(formatRatio(0.795), "0.795");
  assert.equal(formatRatio(round3(0.79496)), "0.795");
  assert.equal(formatRatio(1), "1.00");
  assert.equal(formatRatio(0.8), "0.800");
  assert.equal(formatRatio(12.34), "12.3");
  assert.equal(formatRatio(1234), "1230");
  for (const x of [0.0123, 0.795, 0.99951, 3.14159, 42.42]) assert.equal(Number(formatRatio(x)), round3(x));
});

test("bench rows: a verdict is taken on the figure as shown", { timeout: 10_000 }, () => {
  assert.equal(atLeast(0.7949, 0.8), false); // shown 0.795
  assert.equal(atLeast(0.7996, 0.8), true); // shown 0.800
  assert.equal(atMost(128.4, 128), true); // shown 128 MiB
  assert.equal(atMost(128.6, 128), false); // shown 129 MiB
  assert.equal(below(0.2996, 0.3), false); // shown 0.300 s
  assert.equal(below(0.2994, 0.3), true); // shown 0.299 s
});

/** The shown ratio and the mark of every targeted line of a table, against the row's bound. */
function verdicts(table: string): { shown: number; bound: number; met: boolean; line: string }[] {
  return table.split("\n").flatMap((line) => {
    const m = /\s(\d+(?:\.\d+)?)× [^≥]+?\s+≥ (\d+(?:\.\d+)?)× .+ ([✓✗])$/.exec(line);
    return m ? [{ shown: Number(m[1]), bound: Number(m[2]), met: m[3] === "✓", line }] : [];
  });
}

test("bench:rdma rows: the ratio printed and the verdict agree near every bound", { timeout: 10_000 }, () => {
  const near = [0.7949, 0.795, 0.79951, 0.7996, 0.8, 0.8049, 0.8951, 0.8996, 0.9, 0.9004];
  for (const ratio of near) {
    const sizes = [64, 4096, MiB];
    const rates = new Map<string, number[]>();
    const ratios = new Map<string, number[]>();
    for (const size of sizes) {
      rates.set(`tcp ${size}`, [1e5]);
      rates.set(`tcp-depth ${size}`, [1e5]);
      for (const op of ["write", "read", "send"]) {
        rates.set(`c ${op} ${size}`, [1e5]);
        for (const tcp of ["tcp", "tcp-depth"]) ratios.set(`c ${op} ${size} / ${tcp}`, [ratio]);
      }
      for (const op of ["write", "read", "send", "write-batch", "read-batch", "send-batch"]) {
        rates.set(`deno ${op} ${size}`, [1e5 * ratio]);
        ratios.set(`deno ${op} ${size}`, [ratio]);
      }
    }
    const rows: Row[] = rdmaRows(sizes, ["deno"], rates, ratios);
    const table = formatTable(rows);
    const lines = verdicts(table);
    assert.equal(lines.length, rows.filter((r) => r.target).length, table);
    for (const v of lines) assert.equal(v.met, v.shown >= v.bound, `ratio ${ratio}: ${v.line}`);
  }
  // the case from the report: 0.795 against ≥ 0.8 reads "0.795× … ✗", never "0.80× … ✗"
  const rates = new Map([["tcp 4096", [1]], ["c write 4096", [1]], ["deno write 4096", [0.795]]]);
  const table = formatTable(rdmaRows([4096], ["deno"], rates, new Map([["deno write 4096", [0.795]]])));
  const line = table.split("\n").find((l) => l.includes("RDMA write") && l.includes("Deno"))!;
  assert.match(line, /0\.795× C\s+≥ 0\.8× C ✗$/);
});
