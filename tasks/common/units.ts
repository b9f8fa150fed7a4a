/** Numbers for people: byte counts and rates (1024-based units, three significant digits), durations, plurals. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  // A rate below 1 KiB/s is a fraction of bytes: rounded like every other value, never 21.36763551087345 B.
  const digits = u === 0 && Number.isInteger(v) ? 0 : v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${units[u]}`;
}

/** "1 chunk", "3 chunks". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * Durations in microseconds as one line shows them: every value in the same unit (µs, or ms when the largest is
 * 10 ms or more), three significant digits at most, so "816 µs" never stands beside "25856 µs" or "816.2 µs".
 */
export function formatMicrosAll(values: number[]): string[] {
  const ms = Math.max(...values) >= 10_000;
  return values.map((us) => {
    const v = ms ? us / 1000 : us;
    return `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${ms ? "ms" : "µs"}`;
  });
}

/** A number for JSON output: `digits` decimals at most (no 0.5800618760000001), still a JSON number. */
export function roundTo(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export function formatRate(bytes: number, seconds: number): string {
  return seconds > 0 ? `${formatBytes(bytes / seconds)}/s` : "-";
}
