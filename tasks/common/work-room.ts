/**
 * The check a demo makes before it writes anything: its work folder has room for the files a --size asks for. A
 * size that cannot fit is a bad flag (exit 2 naming it), said at once rather than as ENOSPC halfway through.
 */
import { statfsSync } from "node:fs";
import { UsageError } from "./cli.ts";
import { formatBytes } from "./units.ts";

/** Throws a UsageError naming --size when `folder` has less than `needed` bytes free; `what` says what they hold. */
export function checkWorkRoom(folder: string, size: number, needed: number, what: string, task: string): void {
  let free: number;
  try {
    const s = statfsSync(folder);
    free = Number(s.bavail) * Number(s.bsize);
  } catch (e) {
    const name = (e as Error)?.name;
    if (name === "NotCapable" || name === "PermissionDenied") {
      throw new Error(`cannot check the free space in ${folder}: Deno needs --allow-sys (deno task ${task} grants it)`);
    }
    throw new Error(`cannot check the free space in ${folder}: ${(e as Error).message}`);
  }
  if (needed > free) {
    throw new UsageError(
      `--size ${size}: the ${task === "demo" ? "demo" : task} needs ${formatBytes(needed)} in ${folder} (${what}) and it has ` +
        `${formatBytes(free)} free; choose a smaller --size or set TMPDIR to a folder with room`,
    );
  }
}
