/**
 * Command line of tasks/dma-copy.ts, compatible with NVIDIA's doca_dma_copy (-f, -p/--pci-addr or --dev-pci, -r,
 * -l, --sdk-log-level, -j, -v, -h) plus doca-ts's own flags. parseDmaCopyArgs never exits: it returns what to do or
 * throws UsageError naming the bad input.
 */
import process from "node:process";
import { parseFlags, parseSide, positiveInt, positiveSecondsMs, serverName, UsageError } from "../common/cli.ts";
import { readJsonConfig } from "../common/json-config.ts";
import { isMissingPermission } from "../common/permission.ts";
import { printable } from "../../ffi/engine/printable.ts";
import { userPath } from "../common/user-path.ts";
import { LogLevel, parseLogLevel } from "../common/log-level.ts";
import { STOPPED_STATUSES } from "../common/interrupt.ts";
import { SOFTWARE_DEVICE_FOLDER_HELP } from "../common/environment.ts";
import { type ParsedCommand, taskFlags } from "../common/task-flags.ts";

export const SERVER_NAME = "dma copy server";
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_SLOTS = 8;

export type Side = "host" | "dpu";

export interface DmaCopyOptions {
  /** File to send (when it exists here) or to create (when the peer has it). */
  file: string;
  /** This side's DOCA device; default: the first device the library lists. */
  pciAddr?: string;
  /** DPU only: the representor of the host function to serve. */
  repPci?: string;
  side: Side;
  logLevel: number;
  sdkLogLevel?: number;
  /** Every wait on the peer, in milliseconds. */
  timeoutMs: number;
  quiet: boolean;
  jsonOutput: boolean;
  /** Print peak RSS (VmHWM) at exit. */
  stats: boolean;
  /** Comch server name; NVIDIA's application uses "dma copy server". */
  serverName: string;
  /** Extension: slots in the host's window (several DMA tasks in flight). */
  slots: number;
  /** Extension: chunk size cap in bytes (default: the DPU device's max DMA buf size). */
  chunkSize?: number;
  /** Never use the extension (behave exactly like NVIDIA's application). */
  classic: boolean;
}

export type ParsedDmaCopy = ParsedCommand<DmaCopyOptions>;

export { UsageError };

export const DMA_COPY_HELP = `Usage: dma-copy -f FILE [options]

Copies FILE between the host and the DPU over DOCA DMA (the side that has the file sends it, the other writes it).
Speaks the message protocol of NVIDIA's DOCA DMA Copy application, so either side may be NVIDIA's doca_dma_copy;
between two doca-ts sides files of any size move in chunks, verified by SHA-256 (docs/PROTOCOL.md).
The receiving side writes a hidden temporary file in the target folder, fsyncs and renames it, then tells the
sender; the sender exits 0 only after that (between doca-ts sides; see docs/PROTOCOL.md for NVIDIA's protocol).
One receiver per target: a second copy writing the same name fails at once, naming the first (lock file
.NAME.doca-ts.lock), and a file that appears under the name meanwhile is never replaced. A DPU busy with one host
answers any other host that it is busy.
On failure or Ctrl-C the temporary file is removed and the target name is never created; a run killed outright
(SIGKILL) leaves its temporary file, which a later run in that folder removes at once (one from another machine
or container sharing the folder: once nobody wrote to it for 2 minutes).
Relative paths are relative to the folder you ran the command from (INIT_CWD under npm run / deno task).
${SOFTWARE_DEVICE_FOLDER_HELP}

  -f, --file PATH          file to send, or to create when the peer has it (mandatory)
  -p, --pci-addr PCI       DOCA device PCI address (alias --dev-pci); default: the first device found
  -r, --rep-pci PCI        representor PCI address of the host function (mandatory on the DPU)
      --side host|dpu      which side this process is (default: DOCA_SIM_SIDE, else dpu with -r, else host)
  -l, --log-level LEVEL    10 disable, 20 critical, 30 error, 40 warning, 50 info (default), 60 debug, 70 trace
      --sdk-log-level LVL  accepted for compatibility with NVIDIA's flags; doca-ts has no SDK log to configure
  -j, --json FILE          read flags from a JSON file (keys are the long flag names); command line wins
      --timeout SECONDS    limit on every wait for the peer: connecting, the DPU waiting for the host,
                           each message (default ${DEFAULT_TIMEOUT_SECONDS} s; nothing the peer sends extends it)
      --slots N            chunks in flight between doca-ts peers (default ${DEFAULT_SLOTS})
      --chunk-size BYTES   chunk size cap between doca-ts peers (default: the DPU's max DMA buffer size)
      --classic            never use the doca-ts extension (single buffer, like NVIDIA's application)
      --server-name NAME   Comch server name (default "${SERVER_NAME}")
      --quiet              no progress bar or summary, errors only
      --json-output        print the summary as one JSON object on stdout
      --stats              add peak RSS (VmHWM) to the summary
  -v, --version            print versions and exit
  -h, --help               this text

Exit status: 0 when the file was copied (verified, and committed by the receiver), 2 for bad flags, ${STOPPED_STATUSES},
1 with a message on stderr otherwise.`;

export const FLAGS = taskFlags(
  {
    file: { type: "string", short: "f" },
    "dev-pci": { type: "string" },
    "log-level": { type: "string", short: "l" },
    "sdk-log-level": { type: "string" },
    json: { type: "string", short: "j" },
    slots: { type: "string" },
    classic: { type: "boolean" },
    "server-name": { type: "string" },
    quiet: { type: "boolean" },
    "json-output": { type: "boolean" },
    stats: { type: "boolean" },
    version: { type: "boolean", short: "v" },
  },
  "pci-addr", "rep-pci", "side", "timeout", "chunk-size", "help",
);

/** What a bare --json is told: every other task's --json is the JSON switch, here (as in NVIDIA's application) a file. */
const JSON_HINT = "-j/--json FILE reads flags from a JSON file, as NVIDIA's doca_dma_copy; for the summary as JSON use --json-output";

const PCI = /^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$/;

function pci(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (!PCI.test(value)) throw new UsageError(`${flag}: ${JSON.stringify(value)} is not a PCI address like 0000:03:00.1 or 03:00.1`);
  return value;
}

export function parseDmaCopyArgs(argv: string[], env: Record<string, string | undefined> = process.env): ParsedDmaCopy {
  const { values } = parseFlags(argv, FLAGS, { valueHints: { json: JSON_HINT } }) as { values: Record<string, string | boolean | undefined> };
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };

  let merged: Record<string, string | boolean | undefined> = values;
  if (typeof values.json === "string") {
    // Relative to the folder the command ran from, as -f is (user-path.ts); messages name the path it resolved to
    const jsonPath = userPath(values.json, env);
    let fromFile: Record<string, string | boolean>;
    try {
      fromFile = readJsonConfig(jsonPath);
    } catch (e) {
      if (isMissingPermission(e)) throw e;
      throw new UsageError((e as Error).message);
    }
    for (const key of Object.keys(fromFile)) {
      if (!(key in FLAGS) || key === "json") throw new UsageError(`-j/--json ${jsonPath}: unknown flag "${printable(key, 100)}"`);
      const kind = FLAGS[key as keyof typeof FLAGS].type;
      if (kind === "boolean" && typeof fromFile[key] !== "boolean") throw new UsageError(`-j/--json ${jsonPath}: "${key}" must be true or false`);
    }
    merged = { ...fromFile, ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) };
  }
  const str = (k: string) => (typeof merged[k] === "string" ? merged[k] as string : undefined);

  const given = str("file");
  if (!given) throw new UsageError("missing -f/--file: the file to send or to create");
  const file = userPath(given, env);
  const pciAddr = str("pci-addr");
  const devPci = str("dev-pci");
  if (pciAddr && devPci && pciAddr !== devPci) {
    throw new UsageError(`-p/--pci-addr ${pciAddr} and --dev-pci ${devPci} name different devices; give one`);
  }
  const repPci = pci(str("rep-pci"), "-r/--rep-pci");
  // Only the DPU side takes -r (as with NVIDIA's application): it implies the side when nothing else says.
  const sideText = parseSide(str("side"), env, repPci ? "dpu" : "host");
  if (sideText === "dpu" && !repPci) throw new UsageError("missing -r/--rep-pci: the DPU side needs the representor of the host function");

  let logLevel: number = LogLevel.INFO;
  let sdkLogLevel: number | undefined;
  try {
    if (str("log-level") !== undefined) logLevel = parseLogLevel(str("log-level")!, "-l/--log-level");
    if (str("sdk-log-level") !== undefined) sdkLogLevel = parseLogLevel(str("sdk-log-level")!, "--sdk-log-level");
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const timeoutMs = str("timeout") === undefined ? DEFAULT_TIMEOUT_SECONDS * 1000 : positiveSecondsMs(str("timeout")!, "--timeout");
  const quiet = merged.quiet === true;
  return {
    kind: "run",
    options: {
      file,
      pciAddr: pci(pciAddr ?? devPci, pciAddr ? "-p/--pci-addr" : "--dev-pci"),
      repPci,
      side: sideText,
      logLevel: quiet ? Math.min(logLevel, LogLevel.ERROR) : logLevel,
      sdkLogLevel,
      timeoutMs,
      quiet,
      jsonOutput: merged["json-output"] === true,
      stats: merged.stats === true,
      serverName: serverName(str("server-name"), "--server-name") ?? SERVER_NAME,
      slots: str("slots") === undefined ? DEFAULT_SLOTS : positiveInt(str("slots")!, "--slots", 1024),
      chunkSize: str("chunk-size") === undefined ? undefined : positiveInt(str("chunk-size")!, "--chunk-size"),
      classic: merged.classic === true,
    },
  };
}
