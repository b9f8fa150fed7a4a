/**
 * The request loop of a child helper that a test drives line by line (chain-dpu.ts, dpu-side.ts): one JSON request
 * per stdin line, handled one after the other, one JSON answer per stdout line ({error, docaName} when the handler
 * throws, so the test sees the DOCA error's name). At EOF, once the last answer is out, `onEnd` closes what the
 * helper holds and the process exits 0.
 */
import { createInterface } from "node:readline";
import process from "node:process";

/** One JSON line on stdout: an answer, or an event the helper reports on its own. */
export function reply(message: unknown): void {
  process.stdout.write(JSON.stringify(message) + "\n");
}

export function serveJsonRequests(
  handle: (req: Record<string, unknown>) => Promise<unknown>,
  onEnd: () => Promise<void>,
): void {
  const lines = createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  lines.on("line", (line) => {
    chain = chain.then(async () => {
      try {
        reply(await handle(JSON.parse(line)));
      } catch (e) {
        reply({ error: e instanceof Error ? `${e.name}: ${e.message}` : String(e), docaName: (e as { docaName?: string }).docaName });
      }
    });
  });
  lines.on("close", () => {
    void chain.then(async () => {
      await onEnd();
      process.exit(0);
    });
  });
}
