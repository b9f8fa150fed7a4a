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

/** The unit a duration of `seconds` is shown in: µs below 1 ms, ms below 1 s, else s (the one rule, tasks/README.md). */
function durationUnit(seconds: number): { scale: number; unit: string } {
  return seconds < 0.001 ? { scale: 1e6, unit: "µs" } : seconds < 1 ? { scale: 1e3, unit: "ms" } : { scale: 1, unit: "s" };
}

/** `value` (already in its unit) with three significant digits at most: "816 µs", "25.9 ms", "1.25 s", "4032 s". */
function threeDigits(value: number, unit: string): string {
  return `${value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2)} ${unit}`;
}

/**
 * One duration for people, in the unit its size calls for (µs below 1 ms, ms below 1 s, else s), three significant
 * digits: "42.0 ms", "1.25 s", "816 µs". The one duration formatter of the tasks' human lines.
 */
export function formatDuration(seconds: number): string {
  const { scale, unit } = durationUnit(seconds);
  return threeDigits(seconds * scale, unit);
}

/**
 * Several durations of one report (a line of percentiles) in one unit, the one formatDuration picks for the largest:
 * "0.82 ms" stands beside "4.03 ms", never "816 µs" beside "4.03 ms" nor "4032 µs".
 */
export function formatDurationsAll(seconds: number[]): string[] {
  const { scale, unit } = durationUnit(Math.max(...seconds));
  return seconds.map((s) => threeDigits(s * scale, unit));
}

/** formatDurationsAll for values in microseconds (rdma-ping's latencies). */
export function formatMicrosAll(values: number[]): string[] {
  return formatDurationsAll(values.map((us) => us / 1e6));
}

/** A number for JSON output: `digits` decimals at most (no 0.5800618760000001), still a JSON number. */
export function roundTo(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * `bytes` over `seconds` for --json's `bytesPerSecond` (0 when no time was measured): the rate formatRate prints
 * for the same two numbers, so a task's JSON and its line never disagree.
 */
export function bytesPerSecond(bytes: number, seconds: number): number {
  return seconds > 0 ? bytes / seconds : 0;
}

export function formatRate(bytes: number, seconds: number): string {
  return seconds > 0 ? `${formatBytes(bytes / seconds)}/s` : "-";
}
