/**
 * The benchmark's headline figures as a picture: one horizontal bar per row that has a target, its measured ratio
 * against the reference it names (C, dd, a TCP stream, ...), with the target drawn as a tick on the same bar. A bar
 * is green when the run met the target, red when it missed. Plain SVG text (no dependency), so benchmarks/README.md
 * shows it on any viewer and a diff shows what moved.
 */
import { formatRatio, formatSize, type Row } from "./rows.ts";

/** The number a target like "≥ 0.8×" names, or undefined when it names none. */
export function targetRatio(target: string | undefined): number | undefined {
  const m = /([0-9]+(?:\.[0-9]+)?)\s*×/.exec(target ?? "");
  return m ? Number(m[1]) : undefined;
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// Labels are long ("Comch fast path producer → consumer, 64 B msgs, 16 in flight · Deno · 64 B"): wide enough at 11 px.
const LABEL_WIDTH = 540, BAR_WIDTH = 400, ROW_HEIGHT = 20, TOP = 48, RIGHT = 170;

/** An SVG of the rows that carry a target and a ratio; `title` heads it (e.g. the run's mode and date). */
export function headlineChart(rows: Row[], title: string): string {
  const shown = rows.filter((r) => r.ratio !== null && targetRatio(r.target) !== undefined);
  // The scale reaches the largest ratio or target shown, at least 1.2× so "1×" is always on the axis.
  const max = Math.max(1.2, ...shown.map((r) => Math.max(r.ratio!, targetRatio(r.target)!))) * 1.05;
  const x = (ratio: number) => LABEL_WIDTH + (Math.min(ratio, max) / max) * BAR_WIDTH;
  const height = TOP + shown.length * ROW_HEIGHT + 30;
  const width = LABEL_WIDTH + BAR_WIDTH + RIGHT;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="8" y="20" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="8" y="38" fill="#555">ratio against the reference named on the right; tick: the target</text>`,
  ];
  for (const tick of [0, 0.5, 1, 1.5, 2, 3, 4].filter((t) => t <= max)) {
    out.push(
      `<line x1="${x(tick)}" y1="${TOP - 4}" x2="${x(tick)}" y2="${height - 26}" stroke="#ddd"/>`,
      `<text x="${x(tick)}" y="${height - 12}" text-anchor="middle" fill="#555">${tick}×</text>`,
    );
  }
  shown.forEach((r, i) => {
    const y = TOP + i * ROW_HEIGHT;
    const target = targetRatio(r.target)!;
    const label = [r.name, r.runtime, formatSize(r.size)].filter(Boolean).join(" · ");
    out.push(
      `<text x="${LABEL_WIDTH - 8}" y="${y + 14}" text-anchor="end">${escapeXml(label)}</text>`,
      `<rect x="${LABEL_WIDTH}" y="${y + 3}" width="${x(r.ratio!) - LABEL_WIDTH}" height="${ROW_HEIGHT - 8}" ` +
        `fill="${r.met ? "#3a8f3a" : "#c0392b"}"/>`,
      `<line x1="${x(target)}" y1="${y}" x2="${x(target)}" y2="${y + ROW_HEIGHT - 2}" stroke="black" stroke-width="2"/>`,
      `<text x="${LABEL_WIDTH + BAR_WIDTH + 8}" y="${y + 14}">${formatRatio(r.ratio!)}× ${escapeXml(r.against ?? "")}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
