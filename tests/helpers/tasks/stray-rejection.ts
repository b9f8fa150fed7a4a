/**
 * A task that starts work it awaits only later, which fails meanwhile (storage-relay's request pump once sent a
 * request, awaited the send only when the session ended, and the target died mid-run): runMain must fail the task
 * with that error in one line, at once, never print Deno's "Uncaught (in promise)" trace or let Node crash.
 */
import { runMain } from "../../../tasks/common/main.ts";

await runMain(async () => {
  const send = new Promise<void>((_, reject) => setTimeout(() => reject(new Error("the peer went away while a message was on its way")), 50));
  await new Promise((resolve) => setTimeout(resolve, 20_000)); // other work, long after the send failed
  await send;
  return 0;
});
