/**
 * SHA-256 of a file for a task that checks its own result (demo, rdma-demo): read 4 MiB at a time (a 4 GiB file does
 * not fit one read), with an event-loop turn between reads, so a stop while a large copy is checked is heard at
 * once rather than after the task ended (one synchronous hash of the whole file hid a late Ctrl-C).
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { setImmediate } from "node:timers";
import { interruption } from "./interrupt.ts";

export async function sha256OfFile(path: string, signal: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const block = new Uint8Array(4 << 20);
    for (let n; (n = readSync(fd, block, 0, block.length, null)) > 0;) {
      hash.update(block.subarray(0, n));
      await new Promise((resolve) => setImmediate(resolve));
      if (signal.aborted) throw interruption(signal, "checking the copies' SHA-256");
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}
