/**
 * A task whose stop arrives after its last look at the signal, the way a task whose output was just committed (or
 * whose child got the same Ctrl-C and failed) would see it. argv[2]: the signal it sends itself; argv[3]: how the
 * work ends after it:
 *   "heard" (default)  the handler ran (the signal is aborted), then it returns 0;
 *   "sync"             the stop arrives during synchronous work (hashing a large file), then it returns 0 at once;
 *   "fail"             as "sync", then it fails (returns 1);
 *   "throw"            as "sync", then it throws an error.
 * runMain must report the stop (its status and one "interrupted" line), never exit 0 or 1.
 */
import process from "node:process";
import { runMain } from "../../../tasks/common/main.ts";
import { stopOnSignals } from "../../../tasks/common/interrupt.ts";

const how = process.argv[3] ?? "heard";

await runMain(async () => {
  const signal = stopOnSignals();
  process.kill(process.pid, process.argv[2] as "SIGINT" | "SIGTERM");
  if (how === "heard") {
    for (let i = 0; i < 100 && !signal.aborted; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    process.stdout.write(signal.aborted ? "done after the stop\n" : "no stop seen\n");
    return 0;
  }
  // synchronous work: the handler cannot run before it ends
  const until = Date.now() + 300;
  while (Date.now() < until) { /* busy */ }
  process.stdout.write(signal.aborted ? "stop heard during synchronous work\n" : "work done\n");
  if (how === "throw") throw new Error("a child exited with status 130");
  return how === "fail" ? 1 : 0;
});
