/**
 * A benchmark figure and how it is shown: the table on a terminal, the same rows as Markdown (README) and JSON.
 * Values are kept in the unit shown, so the three outputs agree digit for digit.
 */
export interface Row {
  section: string;
  name: string;
  runtime: string;
  /** Bytes per copy (or per file), null where size means nothing. */
  size: number | null;
  value: number;
  unit: string;
  /** value / reference, measured pair by pair in the same run (median of the per-round ratios). */
  ratio: number | null;
  /** What the ratio is against, e.g. "C" or "memcpy". */
  against: string | null;
  /** The target for this row, and whether this run met it. */
  target?: string;
  met?: boolean;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Three significant digits: what the table shows and the JSON stores. */
export function round3(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(3)) : x;
}

/**
 * A ratio as the table, the Markdown and the chart show it: its three significant digits, trailing zeros kept
 * ("0.795", "1.00", "12.3"), the digits round3 stores in the JSON. (Two decimals showed 0.795 as "0.80", beside a
 * verdict of ✗ against ≥ 0.8.)
 */
export function formatRatio(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const s = x.toPrecision(3);
  return s.includes("e") ? String(Number(s)) : s;
}

// A target's verdict is taken on the figure as shown (round3), never on the unrounded one, so a row can never read
// "0.800× ≥ 0.8× ✗" or "128 MiB ≤ 128 MiB ✗": the digits on the screen decide.
/** `x` as shown is at least `bound`. */
export const atLeast = (x: number, bound: number): boolean => round3(x) >= bound;
/** `x` as shown is at most `bound`. */
export const atMost = (x: number, bound: number): boolean => round3(x) <= bound;
/** `x` as shown is below `bound`. */
export const below = (x: number, bound: number): boolean => round3(x) < bound;

export function formatSize(bytes: number | null): string {
  if (bytes === null) return "";
  for (const [unit, n] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]] as const) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n} ${unit}`;
  }
  return `${bytes} B`;
}

function cells(r: Row): string[] {
  const ratio = r.ratio === null ? "" : `${formatRatio(r.ratio)}× ${r.against}`;
  const target = r.target ? `${r.target} ${r.met ? "✓" : "✗"}` : "";
  return [r.name, r.runtime, formatSize(r.size), `${r.value} ${r.unit}`, ratio, target];
}

const HEADER = ["workload", "runtime", "size", "value", "ratio", "target"];

/** Rows grouped under their section's title, columns aligned across the whole table. */
export function formatTable(rows: Row[]): string {
  const body = rows.map(cells);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...body.map((c) => c[i].length)));
  const line = (c: string[]) => "  " + c.map((s, i) => s.padEnd(widths[i])).join("  ").trimEnd();
  const out = [line(HEADER)];
  rows.forEach((r, i) => {
    if (r.section !== rows[i - 1]?.section) out.push("", r.section);
    out.push(line(body[i]));
  });
  return out.join("\n");
}

export function formatMarkdown(rows: Row[]): string {
  const out = [`| ${HEADER.join(" | ")} |`, `|${HEADER.map(() => "---").join("|")}|`];
  rows.forEach((r, i) => {
    if (r.section !== rows[i - 1]?.section) out.push(`| **${r.section}** |${" |".repeat(HEADER.length - 1)}`);
    out.push(`| ${cells(r).join(" | ")} |`);
  });
  return out.join("\n");
}
