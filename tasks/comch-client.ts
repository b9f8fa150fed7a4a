#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read
/**
 * Comch control path, host side: connects to a Comch server, sends text messages and prints the answers (the flow
 * of NVIDIA's comch_ctrl_path client sample). Pairs with tasks/comch-server.ts.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { ComchClient, openDevice, ProgressEngine } from "../mod.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { DEFAULT_SERVICE } from "./comch-server.ts";

const HELP = `Usage: comch-client [-p PCI] [-s NAME] [-t TEXT] [--count N] [--timeout SECONDS]

Runs on the host. Connects to the Comch server NAME (default "${DEFAULT_SERVICE}") through device PCI (default:
the first device), sends TEXT (default "Message from the client") N times (default 1), printing each answer.
Fails if the server does not answer within the timeout (default 10 s).`;

export async function runComchClient(opts: {
  pciAddr?: string;
  name?: string;
  text?: string;
  count?: number;
  timeoutMs?: number;
}): Promise<string[]> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  using device = openDevice(opts.pciAddr);
  using pe = new ProgressEngine();
  const client = await ComchClient.connect({ device, name: opts.name ?? DEFAULT_SERVICE, pe, timeoutMs });
  const answers: string[] = [];
  try {
    for (let i = 0; i < (opts.count ?? 1); i++) {
      await client.connection.send(new TextEncoder().encode(opts.text ?? "Message from the client"));
      answers.push(new TextDecoder().decode(await client.connection.recv({ timeoutMs })));
    }
  } finally {
    await client.close();
  }
  return answers;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "pci-addr": { type: "string", short: "p" },
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
  const answers = await runComchClient({
    pciAddr: values["pci-addr"],
    name: values.name,
    text: values.text,
    count: values.count ? Number(values.count) : 1,
    timeoutMs: values.timeout ? Number(values.timeout) * 1000 : undefined,
  });
  for (const a of answers) print(`comch-client: server answered "${a}"`);
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
