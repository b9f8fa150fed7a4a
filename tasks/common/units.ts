/** Byte counts and rates for people: 1024-based units, three significant digits. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
}

export function formatRate(bytes: number, seconds: number): string {
  return seconds > 0 ? `${formatBytes(bytes / seconds)}/s` : "-";
}
