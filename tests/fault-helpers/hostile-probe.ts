/**
 * Run by tests/fault-hostile.test.ts under each runtime: one call that needs the software device's configuration or
 * its runtime folder, with DOCA_SIM_CONFIG / DOCA_SIM_DIR set by the test. Prints one JSON line
 * {"case", "threw", "message", "result"} and exits 0; a crash or a hang shows as a signal or a missing line.
 *
 *   devices        listDevices(): every device with its names and caps (configuration input)
 *   comch-server   (DPU side) ComchServer.start on the representor of 0000:b1:00.1 (runtime folder)
 *   comch-client   (host side) ComchClient.connect with a 2 s timeout (runtime folder)
 */
import process from "node:process";
import { ComchClient, ComchServer, Device, listDevices, ProgressEngine } from "../../mod.ts";

const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";

const cases: Record<string, () => unknown> = {
  devices: () => listDevices(),
  "comch-server": async () => {
    const dev = Device.open(DPU_PCI);
    const rep = dev.openRepresentor(HOST_PCI);
    const pe = new ProgressEngine();
    try {
      const server = ComchServer.start({ device: dev, rep, name: "hostile-probe", pe });
      await server.close();
      return "started";
    } finally {
      pe.close();
      rep.close();
      dev.close();
    }
  },
  "comch-client": async () => {
    const dev = Device.open(HOST_PCI);
    const pe = new ProgressEngine();
    try {
      const client = await ComchClient.connect({ device: dev, name: "hostile-probe", pe, timeoutMs: 2000 });
      await client.close();
      return "connected";
    } finally {
      pe.close();
      dev.close();
    }
  },
};

const name = process.argv[2] ?? "";
const run = cases[name];
if (!run) {
  console.error(`usage: hostile-probe.ts <${Object.keys(cases).join("|")}>`);
  process.exit(2);
}
try {
  const result = await run();
  console.log(JSON.stringify({ case: name, threw: false, result }));
} catch (e) {
  console.log(JSON.stringify({ case: name, threw: true, message: e instanceof Error ? e.message : String(e) }));
}
process.exit(0);
