/**
 * What a side says while it waits for its peer, and what a timeout suggests: the likely causes, in the order a
 * person should check them (the other side not started, a different server name, different DOCA_SIM_DIR on the
 * software device).
 */
import process from "node:process";
import { softwareDeviceFolderNote } from "../common/environment.ts";
import type { ComchConnection, ComchServer } from "../../mod.ts";
import { Messenger, type MessageChannel } from "../wire/messenger.ts";

/** The software device's rendezvous folder as this side sees it, for messages ("" on real DOCA). */
function simDirNote(env: Record<string, string | undefined>): string {
  return softwareDeviceFolderNote(env);
}

/** The one line a waiting side prints (once). */
export function waitingLine(waitsFor: "host" | "dpu", serverName: string, timeoutMs: number, env = process.env): string {
  const what = waitsFor === "host"
    ? `waiting for the host on Comch server "${serverName}"`
    : `connecting to the DPU side's Comch server "${serverName}"`;
  return `${what} (up to ${timeoutMs / 1000} s; ${simDirNote(env)})`;
}

/** The likely causes of "the peer never came", to append to a timeout's message. */
export function likelyCauses(peer: "host" | "dpu", serverName: string, env = process.env): string {
  const other = peer === "dpu" ? "the DPU side (dma-copy -r REP_PCI …)" : "the host side (dma-copy -f FILE …)";
  return `likely causes: ${other} is not started yet or has already exited; it uses another --server-name ` +
    `(this side uses "${serverName}"); on the software device, the two sides must share DOCA_SIM_DIR (here ` +
    `${simDirNote(env)}) and run as the same user`;
}

/**
 * While the DPU serves one host, any other host that connects to the same server is told at once that the DPU is
 * busy with another copy (a failure reason, then NVIDIA's failure status), instead of waiting and then seeing a
 * disconnection. Runs until stop() or until the server closes.
 */
export function turnAwayOtherHosts(server: ComchServer, busyWith: string, timeoutMs: number): { stop(): void } {
  let stopped = false;
  void (async () => {
    while (!stopped) {
      let conn: ComchConnection;
      try {
        conn = await server.accept({ timeoutMs: 3_600_000 });
      } catch {
        if (stopped) return;
        continue; // an hour without a second host: keep listening while the copy runs
      }
      if (stopped) return;
      const messenger = new Messenger(conn as unknown as MessageChannel, { timeoutMs, peer: "another host" });
      await messenger.sendFailure(`the DPU side is busy with another copy (${busyWith}); try again when it has finished`, true);
    }
  })().catch(() => {});
  return {
    stop() {
      stopped = true;
    },
  };
}
