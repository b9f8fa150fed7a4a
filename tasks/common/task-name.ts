/** The name every message of a task starts with. */
import process from "node:process";

/** The running task's name: its script's file name without the extension ("dma-copy"), or "" if unknown. */
export function taskName(): string {
  const script = process.argv[1] ?? "";
  return /([^/\\]+?)(\.(ts|js|mjs|mts))?$/.exec(script)?.[1] ?? "";
}
