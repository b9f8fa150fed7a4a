/**
 * An output name that is a folder or a special file (device, FIFO, socket): no run can write its file there, so it is
 * a usage error before any work, in the words of the task that refuses it. The rule that follows names only what
 * that task has: a task with --force says --force replaces only a regular file (accel/output-file.ts); a task that
 * never replaces anything (dma-copy, rdma-copy, encrypt, decrypt, ec-recover) says that, and never names a flag it
 * does not have. Called before checkTargetFolder, whose own refusal speaks of --force.
 */
import { UsageError } from "../common/cli.ts";
import { type NamedInput, refuseOutputIsInput } from "../common/same-file.ts";
import { checkTargetFolder, takenAs, wordingFor } from "./atomic-file.ts";

/** Throws a UsageError naming `flag` when `target` is a folder or a special file; `task` says what it never replaces. */
export function refuseNonFileOutput(target: string, shownAs: string, flag: string, task: string): void {
  const what = takenAs(target);
  if (what !== "a folder" && what !== "a special file") return;
  throw new UsageError(`${flag}: ${shownAs} is ${what}, not a file: the output must be a file name (${task} never replaces anything)`);
}

/**
 * Every check a task that writes one new -o/--output file makes before any work (encrypt, decrypt, ec-recover): the
 * output is none of `inputs`, not a folder or a special file, and its folder is writable with the name still free.
 */
export function checkNewOutput(output: string, inputs: (string | NamedInput)[], task: string): void {
  refuseOutputIsInput(output, inputs);
  refuseNonFileOutput(output, output, "-o/--output", task);
  checkTargetFolder(output, undefined, output, wordingFor(task), "-o/--output");
}
