/**
 * The DPU end of a Comch task that serves one host (comch-server, comch-stream's consumer): what it opens before
 * waiting for its client, and that wait, worded as every task words a peer that never came (peer-words.ts).
 */
import type { ComchConnection, ComchServer, Device, DeviceRep } from "../../mod.ts";
import { ProgressEngine } from "../../mod.ts";
import { applyRoleSide, openDeviceOf, requireServerSide, startServer } from "../common/device.ts";
import { raceAbort } from "../common/interrupt.ts";
import { comchCauses, noPeerWithin, wordTimeout } from "../common/peer-words.ts";

export interface ServerSide extends AsyncDisposable {
  device: Device;
  pe: ProgressEngine;
  rep: DeviceRep;
  server: ComchServer;
}

/**
 * The DPU side applied for the role (unless DOCA_SIM_SIDE chose), the device (one that can serve: else `task`'s
 * words), a progress engine, the host's representor and the Comch server `name`. Disposed as `using` each would be:
 * the server closed (awaited) first, then the representor, the engine and the device.
 */
export function openServerSide(opts: { pciAddr?: string; repPci: string }, task: string, name: string): ServerSide {
  applyRoleSide("dpu");
  const opened: Disposable[] = [];
  const closeOpened = () => {
    for (const r of opened.reverse()) r[Symbol.dispose]();
  };
  try {
    const device = openDeviceOf(opts.pciAddr);
    opened.push(device);
    requireServerSide(device, task);
    const pe = new ProgressEngine();
    opened.push(pe);
    const rep = device.openRepresentor(opts.repPci);
    opened.push(rep);
    const server = startServer({ device, rep, name, pe });
    return {
      device, pe, rep, server,
      async [Symbol.asyncDispose]() {
        try {
          await server.close();
        } finally {
          closeOpened();
        }
      },
    };
  } catch (e) {
    closeOpened();
    throw e;
  }
}

/**
 * The host's connection, accepted within `timeoutMs`; none: "no `who` connected to Comch server "NAME" within … s
 * (--timeout); likely causes: `starter` is not started yet …". A stop (`signal`) while `waiting` ends the wait.
 */
export function acceptHost(
  server: ComchServer,
  o: { name: string; timeoutMs: number | undefined; signal: AbortSignal | undefined; who: string; starter: string; waiting: string },
): Promise<ComchConnection> {
  return raceAbort(
    wordTimeout(server.accept({ timeoutMs: o.timeoutMs }), () =>
      noPeerWithin(`no ${o.who} connected to Comch server "${o.name}"`, o.timeoutMs!, comchCauses(o.starter, "-s/--name", o.name))),
    o.signal,
    o.waiting,
  );
}
