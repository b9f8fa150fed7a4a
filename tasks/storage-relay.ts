#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-net
/**
 * storage-relay: the DPU side of NVIDIA's storage reference application (zero-copy flow) in TypeScript, in the place
 * of their comch_to_rdma_zero_copy: NVIDIA's initiator_comch (host) and target_rdma (storage target) talk to it
 * unmodified, and the storage's data never passes through this process (tasks/storage/relay.ts).
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { ProgressEngine } from "../mod.ts";
import { parseSide, positiveSecondsMs, serverName, UsageError } from "./common/cli.ts";
import { applySide, openDeviceOf, requireServerSide, startServer } from "./common/device.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { stopOnSignals, STOPPED_STATUSES } from "./common/interrupt.ts";
import { printError } from "./common/output.ts";
import { DEFAULT_CHANNEL, runStorageRelay } from "./storage/relay.ts";
import { parseTaskFlags, taskFlags } from "./common/task-flags.ts";

/** Every flag this task accepts. */
export const FLAGS = taskFlags(
  {
    representor: { type: "string", short: "r" },
    "storage-server": { type: "string" },
    "command-channel-name": { type: "string" },
    "control-timeout": { type: "string" },
    cpu: { type: "string", multiple: true },
  },
  "device", "side", "version", "help",
);

const HELP = `Usage: storage-relay -d PCI -r REP_PCI --storage-server IP:PORT [--command-channel-name NAME]
                     [--control-timeout SECONDS] [--cpu N ...] [--side host|dpu]

Runs on the DPU (software device: --side dpu, the default here, else DOCA_SIM_SIDE) in the place of NVIDIA's
comch_to_rdma_zero_copy (their flags): connects to the storage target at IP:PORT (NVIDIA's target_rdma), serves one
host (NVIDIA's initiator_comch) on the Comch channel NAME (default "${DEFAULT_CHANNEL}") of device PCI for the host
function REP_PCI, and relays its session: the host's memory is re-exported to the target (the data moves between
them directly), io requests and answers are passed on. Waits: for the host without limit (Ctrl-C stops it) while
the target stays connected (a target that hangs up ends the relay at once); for the target's answers, each set-up
step and the rest of a message begun by either peer up to --control-timeout (default 5 s). An init request out of
range (one core, 1 to 4096 transactions) is refused before anything reaches the target. --cpu is accepted for NVIDIA's
command line and ignored (one core is served). Exit status 0 after the host shut the storage down, 2 for bad flags,
${STOPPED_STATUSES}, 1 otherwise. Flags: -d/--device, -r/--representor, --storage-server,
--command-channel-name, --control-timeout, --cpu, --side, --version (versions of doca-ts and DOCA), -h/--help.`;

function parseServer(value: string | undefined): { host: string; port: number } {
  if (!value) throw new UsageError("missing --storage-server IP:PORT: the storage target to relay to");
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new UsageError(`--storage-server: "${value}" is not IPv4:PORT`);
  return { host: m[1], port };
}

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, "storage-relay");
  if (values === undefined) return 0;
  if (!values.representor) throw new UsageError("missing -r/--representor: the representor of the host function to serve");
  const storage = parseServer(values["storage-server"]);
  const timeoutMs = values["control-timeout"] === undefined ? 5000 : positiveSecondsMs(values["control-timeout"], "--control-timeout");
  applySide(parseSide(values.side, process.env, "dpu"));
  const channel = serverName(values["command-channel-name"], "--command-channel-name") ?? DEFAULT_CHANNEL;
  using device = openDeviceOf(values.device);
  requireServerSide(device, "storage-relay");
  using pe = new ProgressEngine();
  using rep = device.openRepresentor(values.representor);
  const stats = await runStorageRelay({
    device,
    rep,
    pe,
    storage,
    channel,
    timeoutMs,
    startServer: (name) => startServer({ device, rep, name, pe }),
    log: (line) => printError(line),
    signal: stopOnSignals(),
  });
  print(`storage-relay: ${stats.requests} requests and ${stats.answers} answers relayed in ${stats.seconds.toFixed(3)} s`);
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
