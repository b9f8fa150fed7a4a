/**
 * The accelerator tasks' progress: the shared line (tasks/common/progress.ts), and withProgress for the tasks whose
 * work reports (done, total) through a callback.
 */
import { Progress as SharedProgress, type ProgressOptions, progressText } from "../common/progress.ts";

export { progressText };

/** The shared line, silent for the first second by default (compress, decompress, sha: a short run prints nothing). */
export class Progress extends SharedProgress {
  constructor(label: string | undefined, options: ProgressOptions = {}) {
    super(label, { delayMs: 1000, ...options });
  }
}

/**
 * Runs `work` with a progress line (drawn from the start) fed by its onProgress, erased when the work ends, well or
 * not, so that the summary or the error starts on a clean line. `label` undefined: silent (--json).
 */
export async function withProgress<T>(label: string | undefined, work: (onProgress: (done: number, total: number) => void) => Promise<T>): Promise<T> {
  const progress = new SharedProgress(label);
  try {
    return await work((done, total) => progress.update(done, total));
  } finally {
    progress.end();
  }
}
