#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read
/**
 * Comch control path, DPU side: a Comch server that prints every text message a client sends and answers it
 * (the flow of NVIDIA's comch_ctrl_path server sample). Pairs with tasks/comch-client.ts.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { ComchServer, openDevice, ProgressEngine } from "../mod.ts";
import { isMain, print, runMain } from "./common/main.ts";

export const DEFAULT_SERVICE = "comch_ctrl_path_sample";

const HELP = `Usage: comch-server -r REP_PCI [-p PCI] [-s NAME] [-t TEXT] [--count N] [--timeout SECONDS]

Runs on the DPU (software device: DOCA_SIM_SIDE=dpu). Starts a Comch server named NAME (default
"${DEFAULT_SERVICE}") on device PCI for the host function represented by REP_PCI, waits for one client, then for
each message it receives prints it and answers TEXT (default "Message from the server"; "{}" in TEXT is replaced by
the received text). Exits after N messages (default 1) or when the client disconnects.`;

export interface ServerRun {
  received: string[];
}

export async function runComchServer(opts: {
  pciAddr?: string;
  repPci: string;
  name?: string;
  reply?: string;
  count?: number;
  timeoutMs?: number;
  onMessage?: (text: string) => void;
  /** Called once the server is started (scripts start the client after it). */
  onListening?: () => void;
}): Promise<ServerRun> {
  using device = openDevice(opts.pciAddr);
  using pe = new ProgressEngine();
  using rep = device.openRepresentor(opts.repPci);
  const server = ComchServer.start({ device, rep, name: opts.name ?? DEFAULT_SERVICE, pe });
  const received: string[] = [];
  try {
    opts.onListening?.();
    const conn = await server.accept({ timeoutMs: opts.timeoutMs });
    const count = opts.count ?? 1;
    while (received.length < count) {
      let bytes: Uint8Array;
      try {
        bytes = await conn.recv({ timeoutMs: opts.timeoutMs });
      } catch (e) {
        if (!conn.connected) break; // client left
        throw e;
      }
      const text = new TextDecoder().decode(bytes);
      received.push(text);
      opts.onMessage?.(text);
      await conn.send(new TextEncoder().encode((opts.reply ?? "Message from the server").replaceAll("{}", text)));
    }
  } finally {
    await server.close();
  }
  return { received };
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "pci-addr": { type: "string", short: "p" },
      "rep-pci": { type: "string", short: "r" },
      name: { type: "string", short: "s" },
      text: { type: "string", short: "t" },
      count: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    print(HELP);
    return 0;
  }
  if (!values["rep-pci"]) throw new Error("missing -r/--rep-pci: the representor of the host function to serve");
  const run = await runComchServer({
    onListening: () => process.stderr.write(`comch-server: waiting for a client on "${values.name ?? DEFAULT_SERVICE}"\n`),
    pciAddr: values["pci-addr"],
    repPci: values["rep-pci"],
    name: values.name,
    reply: values.text,
    count: values.count ? Number(values.count) : 1,
    timeoutMs: values.timeout ? Number(values.timeout) * 1000 : undefined,
    onMessage: (text) => print(`comch-server: received "${text}"`),
  });
  print(`comch-server: done after ${run.received.length} message(s)`);
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
