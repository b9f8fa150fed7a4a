/**
 * Child of tests/ffi-env-at-run-time.test.ts: started with DOCA_SIM_SIDE and DOCA_SIM_DIR unset, it sets them in
 * process.env at run time (as a library user's script does), then starts a Comch server on the DPU side and prints
 * {devices, files}: the devices of the side it chose and what the software device created in the folder.
 */
import process from "node:process";
import { readdirSync } from "node:fs";
import { ComchServer, Device, listDevices, ProgressEngine } from "../../mod.ts";

const [dir, name] = process.argv.slice(2);
process.env.DOCA_SIM_SIDE = "dpu";
process.env.DOCA_SIM_DIR = dir;
const devices = listDevices().map((d) => d.pciAddr);
using device = Device.open("0000:03:00.1");
using pe = new ProgressEngine();
using rep = device.openRepresentor("0000:b1:00.1");
const server = ComchServer.start({ device, rep, name, pe });
const files = readdirSync(dir);
await server.close();
console.log(JSON.stringify({ devices, files }));
