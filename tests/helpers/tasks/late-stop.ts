/**
 * A task whose stop arrives after its last look at the signal: it sends itself SIGNAL (argv[2]) as its work ends and
 * returns 0, the way a task whose output was just committed would. runMain must report the stop, not exit 0.
 */
import process from "node:process";
import { runMain } from "../../../tasks/common/main.ts";
import { stopOnSignals } from "../../../tasks/common/interrupt.ts";

await runMain(async () => {
  const signal = stopOnSignals();
  process.kill(process.pid, process.argv[2] as "SIGINT" | "SIGTERM");
  // the handler runs: the signal is aborted, but the work is already done
  for (let i = 0; i < 100 && !signal.aborted; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  process.stdout.write(signal.aborted ? "done after the stop\n" : "no stop seen\n");
  return 0;
});
