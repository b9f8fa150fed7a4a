/**
 * An output that is one of the task's own inputs would be destroyed as it is read (`compress a -o a -f` wrote a's gzip
 * over a). Refused before any work, as a usage error naming both, --force or not: the same file is the same device
 * and inode (a hard link, a symbolic link to it), or the same path once folders and links are resolved.
 */
import { realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UsageError } from "./cli.ts";

/** One input of a task: its path, how the user wrote it, and the flag that named it (if any). */
export interface NamedInput {
  path: string;
  shownAs?: string;
  flag?: string;
}

/** `path` with its folders and links resolved as far as they exist (the last part may not exist yet). */
function resolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

function identity(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/** True when `a` and `b` name the same file (same device and inode, or the same resolved path). */
export function sameFile(a: string, b: string): boolean {
  if (resolved(a) === resolved(b)) return true;
  const ia = identity(a);
  return ia !== undefined && ia === identity(b);
}

/** Throws a UsageError when `output` is the same file as one of `inputs`; `flag`: the flag that named the output. */
export function refuseOutputIsInput(output: string, inputs: (string | NamedInput)[], shownAs = output, flag = "-o/--output"): void {
  for (const entry of inputs) {
    const input = typeof entry === "string" ? { path: entry } : entry;
    if (!sameFile(output, input.path)) continue;
    const named = `${input.flag ? `${input.flag} ` : "the input "}${input.shownAs ?? input.path}`;
    throw new UsageError(
      `${flag}: ${shownAs} is the same file as ${named}: writing it would destroy what is read, --force or not; choose another output`,
    );
  }
}
