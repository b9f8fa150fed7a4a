/**
 * The one way a task that makes a new file of its own (encrypt, decrypt, ec-recover) writes it: into a temporary file
 * beside the output, named only once every byte is written, so an interrupted or failed run leaves no output.
 */
import { dirname } from "node:path";
import { AtomicFile, sweepStaleTemporaries, wordingFor } from "./atomic-file.ts";

/**
 * Runs `write` into a temporary file beside `output` (a killed run's leftovers swept first) and gives it the output's
 * name once `write` resolves; a failure anywhere removes it, so no partial output is ever left under the name.
 */
export async function writeOutput(output: string, task: string, write: (out: AtomicFile) => Promise<void>): Promise<void> {
  sweepStaleTemporaries(dirname(output), task, output);
  const out = AtomicFile.create(output, undefined, wordingFor(task));
  try {
    await write(out);
    await out.commit();
  } catch (e) {
    out.abort();
    throw e;
  }
}
