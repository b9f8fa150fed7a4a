#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read
/**
 * Comch control path, DPU side: a Comch server that prints every text message a client sends and answers it
 * (the flow of NVIDIA's comch_ctrl_path server sample). Pairs with tasks/comch-client.ts.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { parseSide, positiveInt, positiveSecondsMs, serverName, UsageError } from "./common/cli.ts";
import { applySide } from "./common/device.ts";
import { acceptHost, openServerSide } from "./comch/server-side.ts";
import { raceAbort, stopOnSignals, STOPPED_STATUSES } from "./common/interrupt.ts";
import { peerLeft, unlessStopNotice } from "./comch/stop-notice.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printable } from "../ffi/engine/printable.ts";
import { printError } from "./common/output.ts";
import { peerSilent, wordTimeout } from "./common/peer-words.ts";
import { parseTaskFlags, SHARED_FLAGS, taskFlags } from "./common/task-flags.ts";
import { checkOptions, type OptionRules, PCI_ADDR_OPTION, SIGNAL_OPTION } from "./common/options-check.ts";

export const DEFAULT_SERVICE = "comch_ctrl_path_sample";

/** The flags comch-client accepts too: one message exchange's device, server name, text, count, timeout and side. */
export const EXCHANGE_FLAGS = taskFlags(
  {
    name: { type: "string", short: "s" },
    text: { type: "string", short: "t" },
  },
  "pci-addr", "count", "timeout", "side", "version", "help",
);

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = { ...EXCHANGE_FLAGS, "rep-pci": SHARED_FLAGS["rep-pci"] };

/** --count (default 1) and --timeout as both ends read them, and --side applied (default: where the task runs). */
export function exchangeOptions(
  values: { count?: string; timeout?: string; side?: string },
  side: "host" | "dpu",
): { count: number; timeoutMs: number | undefined } {
  const count = values.count === undefined ? 1 : positiveInt(values.count, "--count");
  const timeoutMs = values.timeout === undefined ? undefined : positiveSecondsMs(values.timeout, "--timeout");
  applySide(parseSide(values.side, process.env, side));
  return { count, timeoutMs };
}
const TASK = "comch-server";

const HELP = `Usage: comch-server -r REP_PCI [-p PCI] [-s NAME] [-t TEXT] [--count N] [--timeout SECONDS]
                    [--side host|dpu]

Runs on the DPU (software device: --side dpu, the default here, else DOCA_SIM_SIDE). Starts a Comch server named
NAME (default "${DEFAULT_SERVICE}") on device PCI for the host function represented by REP_PCI, waits for one
client, then for each message it receives prints it and answers TEXT (default "Message from the server"; "{}" in
TEXT is replaced by the received text). Exits 0 after N messages (default 1).
Waits: without --timeout it waits for the client and for each message forever (Ctrl-C stops it); with --timeout
SECONDS each of those waits is limited. A client that leaves before N messages is an error (exit 1): "the host
side stopped: …" with the reason a comch-client sends, else "the host side closed the connection after M of N
messages". Stopped or giving up, this side tells a comch-client why (one message starting with a NUL byte, which
NVIDIA's sample client prints as an empty text). Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: -r/--rep-pci REP_PCI, -p/--pci-addr PCI (default: the first device), -s/--name NAME, -t/--text TEXT,
--count N, --timeout SECONDS, --side host|dpu, --version (versions of doca-ts and DOCA), -h/--help.`;

export interface ServerRun {
  received: string[];
}

/** runComchServer's options, checked at run time (plain JavaScript callers). */
const SERVER_OPTIONS: OptionRules = {
  pciAddr: PCI_ADDR_OPTION,
  repPci: { type: "string", required: true, flag: "-r/--rep-pci" },
  name: { type: "string", flag: "-s/--name" },
  reply: { type: "string", flag: "-t/--text" },
  count: { type: "integer", flag: "--count" },
  timeoutMs: { type: "number", flag: "--timeout" },
  onMessage: { type: "function" },
  onListening: { type: "function" },
  signal: SIGNAL_OPTION,
};

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
  /** Aborting it (Ctrl-C) ends the current wait with an InterruptedError. */
  signal?: AbortSignal;
}): Promise<ServerRun> {
  checkOptions("runComchServer", opts, SERVER_OPTIONS);
  const name = opts.name ?? DEFAULT_SERVICE;
  const side = openServerSide(opts, "comch-server", name);
  const received: string[] = [];
  try {
    opts.onListening?.();
    const conn = await acceptHost(side.server, {
      name,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      who: "client",
      starter: "the host side (comch-client …)",
      waiting: "waiting for a client",
    });
    const count = opts.count ?? 1;
    try {
      while (received.length < count) {
        const what = `waiting for message ${received.length + 1} of ${count} from the host side`;
        const bytes = await raceAbort(wordTimeout(conn.recv({ timeoutMs: opts.timeoutMs }), () => peerSilent(what, opts.timeoutMs!, "the host side")), opts.signal, what)
          .catch(async (e) => {
            throw await peerLeft(e, conn, "the host side", `after ${received.length} of ${count} messages`);
          });
        const text = new TextDecoder().decode(unlessStopNotice(bytes, "the host side"));
        received.push(text);
        opts.onMessage?.(text);
        await conn.send(new TextEncoder().encode((opts.reply ?? "Message from the server").replaceAll("{}", text))).catch(async (e) => {
          throw await peerLeft(e, conn, "the host side", `before answer ${received.length} of ${count}`);
        });
      }
    } catch (e) {
      // The server tells its client nothing: NVIDIA's sample client, waiting for its answer, would take any message
      // as that answer and end as if served. The client words the server's departure itself (stop-notice.ts).
      throw e;
    }
  } finally {
    await side[Symbol.asyncDispose]();
  }
  return { received };
}

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, TASK);
  if (values === undefined) return 0;
  if (!values["rep-pci"]) throw new UsageError("missing -r/--rep-pci: the representor of the host function to serve");
  const { count, timeoutMs } = exchangeOptions(values, "dpu");
  const name = serverName(values.name, "-s/--name") ?? DEFAULT_SERVICE;
  const run = await runComchServer({
    onListening: () => printError(`comch-server: waiting for a client on "${name}"${timeoutMs ? ` (up to ${timeoutMs / 1000} s)` : ""}`),
    pciAddr: values["pci-addr"],
    repPci: values["rep-pci"],
    name,
    reply: values.text,
    count,
    timeoutMs,
    onMessage: (text) => print(`comch-server: received "${printable(text)}"`),
    signal: stopOnSignals(),
  });
  print(`comch-server: done after ${run.received.length} message(s)`);
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
