/** Command line of tasks/rdma-copy.ts; parseRdmaCopyArgs never exits: it returns what to do or throws UsageError. */
import process from "node:process";
import { parseFlags, positiveInt, positiveSecondsMs, UsageError } from "../common/cli.ts";
import { userPath } from "../common/user-path.ts";
import { type Endpoint, type Exchange, parseEndpoint } from "../rdma/link.ts";
import { type CopyMode, MAX_CHUNK, MAX_SLOTS } from "./transfer.ts";
import { STOPPED_STATUSES } from "../common/interrupt.ts";
import { type ParsedCommand, taskFlags } from "../common/task-flags.ts";

export const DEFAULT_CHUNK = 1024 * 1024;
export const DEFAULT_SLOTS = 8;
export const DEFAULT_TIMEOUT_SECONDS = 30;

export interface RdmaCopyOptions {
  role: "send" | "receive";
  file: string;
  endpoint: Endpoint;
  exchange: Exchange;
  mode: CopyMode;
  /** DOCA device: PCI address or IB device name; default the first device. */
  device?: string;
  chunk: number;
  slots: number;
  timeoutMs: number;
  quiet: boolean;
  jsonOutput: boolean;
}

export const RDMA_COPY_HELP = `Usage: rdma-copy --send FILE   (--connect HOST:PORT | --listen [ADDR:]PORT) [options]
       rdma-copy --receive FILE (--listen [ADDR:]PORT | --connect HOST:PORT) [options]

Copies FILE from one machine to another over DOCA RDMA (on the software device: RC connections over TCP, so two
hosts, two network namespaces or one machine all work). One side sends, the other receives; either side may be the
one that listens. The data moves through a window of --slots chunks of --chunk bytes, by RDMA write (the sender
writes into the receiver's window) or RDMA read (the receiver reads from the sender's window), SHA-256 on both
sides. The receiver writes a hidden temporary file beside FILE, fsyncs and renames it when the checksums match,
and sends a receipt; the sender exits 0 only after that receipt. Ctrl-C (or SIGTERM) stops either side cleanly:
the peer is told, no temporary file stays.

      --send FILE            send FILE (must exist)
      --receive FILE         create FILE from what the peer sends (its folder must exist; never half-written)
      --listen [ADDR:]PORT   wait for the peer on PORT (1..65535), on ADDR only when given (default: every
                             address; DOCA's own RDMA CM always listens on every address of the device)
      --connect HOST:PORT    connect to the peer listening at HOST (an IP address) : PORT
      --exchange cm|tcp      how the connection is made: cm = RDMA CM on PORT (default); tcp = the two sides
                             swap exported connection details over a TCP socket on PORT, then connect
      --mode write|read      sender only: RDMA write into the receiver (default) or RDMA read by the receiver
  -d, --device DEV           DOCA device: PCI address or IB device name (default: the first device)
      --chunk BYTES          sender only: chunk size (default ${DEFAULT_CHUNK}, at most ${MAX_CHUNK})
      --slots N              sender only: chunks in flight (default ${DEFAULT_SLOTS}, at most ${MAX_SLOTS})
      --timeout SECONDS      limit on every wait for the peer (default ${DEFAULT_TIMEOUT_SECONDS})
      --quiet                no progress bar or summary, errors only
      --json                 print the summary as one JSON object on stdout
      --version              print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help                 this text

Exit status: 0 when the file was copied (verified and committed by the receiver), 2 for bad flags, ${STOPPED_STATUSES},
1 with a message on stderr otherwise.`;

/** Every flag rdma-copy accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {
    send: { type: "string" },
    receive: { type: "string" },
    mode: { type: "string" },
    chunk: { type: "string" },
    slots: { type: "string" },
    quiet: { type: "boolean" },
  },
  "listen", "connect", "exchange", "device", "timeout", "json", "version", "help",
);

export type ParsedRdmaCopy = ParsedCommand<RdmaCopyOptions>;

export function parseRdmaCopyArgs(argv: string[], env: Record<string, string | undefined> = process.env): ParsedRdmaCopy {
  const { values: v } = parseFlags(argv, FLAGS);
  if (v.help) return { kind: "help" };
  if (v.version) return { kind: "version" };
  if ((v.send === undefined) === (v.receive === undefined)) throw new UsageError("give exactly one of --send FILE and --receive FILE");
  const role = v.send !== undefined ? "send" : "receive";
  const given = (v.send ?? v.receive)!;
  if (given === "") throw new UsageError(`--${role}: expected a file path`);
  const endpoint = parseEndpoint(v.listen, v.connect);
  const exchange = v.exchange ?? "cm";
  if (exchange !== "cm" && exchange !== "tcp") throw new UsageError(`--exchange: expected cm or tcp, got ${JSON.stringify(exchange)}`);
  const mode = v.mode ?? "write";
  if (mode !== "write" && mode !== "read") throw new UsageError(`--mode: expected write or read, got ${JSON.stringify(mode)}`);
  for (const flag of ["mode", "chunk", "slots"] as const) {
    if (role === "receive" && v[flag] !== undefined) throw new UsageError(`--${flag}: only the sender chooses it (the receiver follows its offer)`);
  }
  return {
    kind: "run",
    options: {
      role,
      file: userPath(given, env),
      endpoint,
      exchange,
      mode,
      device: v.device || undefined,
      chunk: v.chunk === undefined ? DEFAULT_CHUNK : positiveInt(v.chunk, "--chunk", MAX_CHUNK),
      slots: v.slots === undefined ? DEFAULT_SLOTS : positiveInt(v.slots, "--slots", MAX_SLOTS),
      timeoutMs: v.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS * 1000 : positiveSecondsMs(v.timeout, "--timeout"),
      quiet: v.quiet === true,
      jsonOutput: v.json === true,
    },
  };
}
