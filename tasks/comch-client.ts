#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read
/**
 * Comch control path, host side: connects to a Comch server, sends text messages and prints the answers (the flow
 * of NVIDIA's comch_ctrl_path client sample). Pairs with tasks/comch-server.ts.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { ProgressEngine, TimeoutError } from "../mod.ts";
import { serverName } from "./common/cli.ts";
import { applyRoleSide, connectClient, openDeviceOf } from "./common/device.ts";
import { raceAbort, stopOnSignals, STOPPED_STATUSES } from "./common/interrupt.ts";
import { peerLeft, tellPeerWhy, unlessStopNotice } from "./comch/stop-notice.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { comchCauses, noPeerWithin, peerSilent, wordTimeout } from "./common/peer-words.ts";
import { printable } from "../ffi/engine/printable.ts";
import { DEFAULT_SERVICE, exchangeOptions, EXCHANGE_FLAGS } from "./comch-server.ts";
import { parseTaskFlags } from "./common/task-flags.ts";
import { checkOptions, type OptionRules, PCI_ADDR_OPTION, SIGNAL_OPTION } from "./common/options-check.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = EXCHANGE_FLAGS;
const TASK = "comch-client";

const HELP = `Usage: comch-client [-p PCI] [-s NAME] [-t TEXT] [--count N] [--timeout SECONDS] [--side host|dpu]

Runs on the host. Connects to the Comch server NAME (default "${DEFAULT_SERVICE}") through device PCI (default:
the first device), sends TEXT (default "Message from the client") N times (default 1), printing each answer.
Waits: connecting and each answer are limited to --timeout (default 10 s). --side: the software device's side
(default host, else DOCA_SIM_SIDE). A server that leaves first is an error: "the DPU side stopped: …" with the
reason a comch-server sends, else "the DPU side closed the connection …". Stopped or giving up, this side tells a
comch-server why (one message starting with a NUL byte, which NVIDIA's sample server prints as an empty text).
Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: -p/--pci-addr PCI, -s/--name NAME, -t/--text TEXT, --count N, --timeout SECONDS, --side host|dpu,
--version (versions of doca-ts and DOCA), -h/--help.`;

/** runComchClient's options, checked at run time (plain JavaScript callers). */
const CLIENT_OPTIONS: OptionRules = {
  pciAddr: PCI_ADDR_OPTION,
  name: { type: "string", flag: "-s/--name" },
  text: { type: "string", flag: "-t/--text" },
  count: { type: "integer", flag: "--count" },
  timeoutMs: { type: "number", flag: "--timeout" },
  signal: SIGNAL_OPTION,
};

export async function runComchClient(opts: {
  pciAddr?: string;
  name?: string;
  text?: string;
  count?: number;
  timeoutMs?: number;
  /** Aborting it (Ctrl-C) ends the current wait with an InterruptedError. */
  signal?: AbortSignal;
}): Promise<string[]> {
  checkOptions("runComchClient", opts, CLIENT_OPTIONS);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const name = opts.name ?? DEFAULT_SERVICE;
  applyRoleSide("host");
  using device = openDeviceOf(opts.pciAddr);
  using pe = new ProgressEngine();
  const client = await raceAbort(connectClient({ device, name, pe, timeoutMs }), opts.signal, `connecting to the Comch server "${name}"`)
    .catch((e: Error) => {
      if (!(e instanceof TimeoutError)) throw e;
      // The same causes dma-copy lists, in the order to check them.
      throw new Error(noPeerWithin(`no Comch server "${name}" answered`, timeoutMs, comchCauses("the DPU side (comch-server -r REP_PCI …)", "-s/--name", name)), { cause: e });
    });
  const answers: string[] = [];
  const conn = client.connection;
  const count = opts.count ?? 1;
  try {
    for (let i = 0; i < count; i++) {
      await conn.send(new TextEncoder().encode(opts.text ?? "Message from the client")).catch(async (e) => {
        throw await peerLeft(e, conn, "the DPU side", `before message ${i + 1} of ${count}`);
      });
      const what = `waiting for answer ${i + 1} of ${count} from the DPU side`;
      const answer = await raceAbort(wordTimeout(conn.recv({ timeoutMs }), () => peerSilent(what, timeoutMs, "the DPU side")), opts.signal, what)
        .catch(async (e) => {
          throw await peerLeft(e, conn, "the DPU side", `while this side was ${what}`);
        });
      answers.push(new TextDecoder().decode(unlessStopNotice(answer, "the DPU side")));
    }
  } catch (e) {
    await tellPeerWhy(conn, e); // a doca-ts server hears why (stop-notice.ts); NVIDIA's sample prints an empty text
    throw e;
  } finally {
    await client.close();
  }
  return answers;
}

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, TASK);
  if (values === undefined) return 0;
  const { count, timeoutMs } = exchangeOptions(values, "host");
  const answers = await runComchClient({
    pciAddr: values["pci-addr"],
    name: serverName(values.name, "-s/--name"),
    text: values.text,
    count,
    timeoutMs,
    signal: stopOnSignals(),
  });
  for (const a of answers) print(`comch-client: server answered "${printable(a)}"`);
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
