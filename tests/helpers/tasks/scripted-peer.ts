/**
 * The opening and the end the scripted peers of the task tests share (lying-host, nvidia-host, hostile-dpu,
 * hostile-stream-dpu): a host that connects to the DPU's Comch server, or a DPU that serves one host, on the
 * software device's usual PCI addresses; and a host's last words, one JSON line, before it closes and exits 0.
 */
import process from "node:process";
import { ComchClient, type ComchConnection, ComchServer, Device, ProgressEngine } from "../../../mod.ts";

const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";

export interface ScriptedHost {
  device: Device;
  pe: ProgressEngine;
  client: ComchClient;
  conn: ComchConnection;
}

/** The host side: connected to the DPU's Comch server `name` (20 s to connect). */
export async function connectToDpu(name = "dma copy server"): Promise<ScriptedHost> {
  const device = Device.open(HOST_PCI);
  const pe = new ProgressEngine();
  const client = await ComchClient.connect({ device, name, pe, timeoutMs: 20_000 });
  return { device, pe, client, conn: client.connection };
}

/** Prints `out` as one JSON line (what the test reads), closes the host's objects and exits 0. */
export async function reportAndExit(out: unknown, host: ScriptedHost): Promise<never> {
  process.stdout.write(JSON.stringify(out) + "\n");
  await host.client.close();
  host.pe.close();
  host.device.close();
  process.exit(0);
}

/** The DPU side: Comch server `name` for the host, `listening` on stderr once it listens, its first host accepted (30 s). */
export async function acceptHost(name: string, listening: string): Promise<{ device: Device; pe: ProgressEngine; conn: ComchConnection }> {
  const device = Device.open(DPU_PCI);
  const pe = new ProgressEngine();
  const rep = device.openRepresentor(HOST_PCI);
  const server = ComchServer.start({ device, rep, name, pe });
  process.stderr.write(`${listening}\n`);
  const conn = await server.accept({ timeoutMs: 30_000 });
  return { device, pe, conn };
}
