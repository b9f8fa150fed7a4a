/** The name every message of a task starts with. */
import process from "node:process";

/** The running task's name: its script's file name without the extension ("dma-copy"), or "" if unknown. */
export function taskName(): string {
  const script = process.argv[1] ?? "";
  return /([^/\\]+?)(\.(ts|js|mjs|mts))?$/.exec(script)?.[1] ?? "";
}

let sideWords = "";

/**
 * A task with two sides says which one it is after its name ("dma-copy: DPU side: …"); it sets the words once it
 * knows, so lines printed by shared code (a lock taken over, an interruption) carry them as its own lines do.
 */
export function setSpeakingSide(words: string): void {
  sideWords = words;
}

/** The prefix of a line shared code prints for the task: "dma-copy: DPU side", "compress", or "" if unknown. */
export function speaker(): string {
  return [taskName(), sideWords].filter(Boolean).join(": ");
}
