#!/usr/bin/env -S deno run --no-prompt --v8-flags=--max-semi-space-size=2 --allow-ffi --allow-env --allow-read --allow-write --allow-run --allow-sys=statfs
/**
 * DMA Copy: copies a file between the host and the DPU over DOCA DMA, speaking the message protocol of NVIDIA's
 * DOCA DMA Copy application (so either side may be NVIDIA's doca_dma_copy) and, between two doca-ts sides, an
 * extension for files of any size with SHA-256 verification (docs/PROTOCOL.md). Run it once on each side:
 *
 *   host:  deno task dma-copy -f /tmp/big.bin -p 0000:b1:00.1
 *   DPU:   deno task dma-copy -f /tmp/big.bin -p 0000:03:00.1 -r 0000:b1:00.1 --side dpu
 *
 * Importable (tasks/mod.ts): `await dmaCopy(options)` runs one side in this process and resolves with its Summary.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import type { Device } from "../ffi/doca/common/device.ts";
import { loadDoca } from "../ffi/native/library.ts";
import { TimeoutError } from "../ffi/native/errors.ts";
import { ProgressEngine } from "../ffi/engine/pe.ts";
import { applySide, connectClient, openDeviceOf, requireServerSide, startServer } from "./common/device.ts";
import { InterruptedError, raceAbort, stopOnSignals } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printError, printJson } from "./common/output.ts";
import { formatDuration } from "./common/units.ts";
import { createLogger, LogLevel } from "./common/log-level.ts";
import { type MessageChannel, Messenger, PeerFailedError, PeerLostError } from "./wire/messenger.ts";
import { encodeDirection, expectType, MsgType } from "./wire/protocol.ts";
import { checkTargetFolder, TargetLock } from "./transfer/atomic-file.ts";
import { runPlace } from "./transfer/run-place.ts";
import { dpuTransfer, RefusedError } from "./dma-copy/dpu-side.ts";
import { hostTransfer } from "./dma-copy/host-side.ts";
import { type LocalFile, probeLocalFile } from "./transfer/local-file.ts";
import { DMA_COPY_HELP, type DmaCopyOptions, parseDmaCopyArgs } from "./dma-copy/options.ts";
import { formatBytes, formatRate, PeakRss, ProgressBar } from "./transfer/progress.ts";
import { clearStatusLine } from "./common/status-line.ts";
import { likelyCauses, turnAwayOtherHosts, waitingLine } from "./dma-copy/peer-wait.ts";
import type { SessionContext, Summary, TransferResult } from "./dma-copy/session.ts";
import { checkOptions, checkRunOptions, type OptionRules, PATH, TIMEOUT_OPTION } from "./common/options-check.ts";
import { setSpeakingSide } from "./common/task-name.ts";

export type { DmaCopyOptions, Summary };
export { parseDmaCopyArgs };

const VERSION = "0.1.0";

/** dmaCopy's options, checked at run time (plain JavaScript callers; parseDmaCopyArgs(argv) makes them from flags). */
const DMA_COPY_OPTIONS: OptionRules = {
  file: PATH("-f/--file"),
  pciAddr: { type: "string", flag: "-p/--pci-addr/--dev-pci" },
  repPci: { type: "string", flag: "-r/--rep-pci" },
  side: { type: ["host", "dpu"], required: true, flag: "--side" },
  logLevel: { type: "integer", required: true, flag: "-l/--log-level" },
  sdkLogLevel: { type: "integer", flag: "--sdk-log-level" },
  timeoutMs: TIMEOUT_OPTION,
  quiet: { type: "boolean", required: true, flag: "--quiet" },
  jsonOutput: { type: "boolean", required: true, flag: "--json-output" },
  stats: { type: "boolean", required: true, flag: "--stats" },
  serverName: { type: "string", required: true, flag: "--server-name" },
  slots: { type: "integer", required: true, flag: "--slots" },
  chunkSize: { type: "integer", flag: "--chunk-size" },
  classic: { type: "boolean", required: true, flag: "--classic" },
};

/**
 * Runs one side of the copy in this process. Resolves only when the copy is complete: when this side receives,
 * the file is durable under its name; when it sends (extended protocol), the receiver said it committed the file.
 * Rejects with a message that says what went wrong; `signal` (e.g. Ctrl-C) interrupts it cleanly: the peer is told,
 * DOCA objects are closed, no temporary file stays, and the rejection is an InterruptedError.
 */
export async function dmaCopy(options: DmaCopyOptions, run: { signal?: AbortSignal } = {}): Promise<Summary> {
  checkOptions("dmaCopy", options, DMA_COPY_OPTIONS);
  checkRunOptions("dmaCopy", run);
  const { signal } = run;
  setSpeakingSide(options.side === "host" ? "host side" : "DPU side"); // shared code's lines (a lock taken over) too
  const log = createLogger(options.logLevel, speakerOf(options.side));
  const rss = options.stats ? new PeakRss().start() : undefined;
  const local = probeLocalFile(options.file);
  // A side without the file will receive it: check the target folder before waiting for the peer. The host fails at
  // once. The DPU says so at once (it found a missing folder only once a host connected, up to --timeout later) and
  // still waits, so that the host is told why when it comes (the DPU refuses it then, checking again).
  if (!local.have && options.side === "host") checkTargetFolder(options.file, undefined, options.file, undefined, "-f/--file");
  if (!local.have && options.side === "dpu") {
    try {
      checkTargetFolder(options.file, undefined, options.file, undefined, "-f/--file");
    } catch (e) {
      log.warn(`${(e as Error).message}; the host that connects will be refused and told why (fix it now, or Ctrl-C)`);
    }
  }
  // One receiver per target: another copy writing this name makes this one fail now, not after connecting.
  if (!local.have) TargetLock.checkFree(options.file);
  // The receiver names its temporary file after this run's place, which Deno learns from a child process (5-10 ms):
  // learnt now, while the DPU waits for its host, not after the host said what to copy.
  if (!local.have) runPlace();
  // The software device reads its side once, at its first listing: options.side decides it here as --side does in
  // the CLI, so a program calling dmaCopy({ side: "dpu" }) needs no DOCA_SIM_SIDE (harmless with real DOCA)
  applySide(options.side);
  using device = openDeviceOf(options.pciAddr);
  using pe = new ProgressEngine();
  const showBar = !options.quiet && !options.jsonOutput && process.stderr.isTTY === true;
  const context = (messenger: Messenger): SessionContext => ({
    options,
    device,
    pe,
    messenger,
    log,
    signal,
    progress: (total) => new ProgressBar(speakerOf(options.side), total, { enabled: showBar }),
  });
  log.debug(`device ${device.info.pciAddr}; ${local.have ? `have ${options.file} (${local.size} bytes)` : `will create ${options.file}`}`);

  let result: TransferResult;
  let started = 0;
  /** The transfer finished: from then on a failing close is an error of its own, before it the first error wins. */
  let copied = false;
  const doing = (peer: string) => local.have ? `sending ${options.file} to ${peer}` : `receiving ${options.file} from ${peer}`;
  if (options.side === "host") {
    if (options.logLevel >= LogLevel.INFO) log.info(waitingLine("dpu", options.serverName, options.timeoutMs));
    const client = await raceAbort(
      connectClient({ device, name: options.serverName, pe, timeoutMs: options.timeoutMs }),
      signal,
      `connecting to the DPU side's Comch server "${options.serverName}"`,
    ).catch((e: Error) => {
      if (e instanceof InterruptedError) throw interrupted(e, doing("the DPU side"), local, options, { peerCame: false });
      throw new PeerLostError(
        `could not reach the DPU side: no Comch server "${options.serverName}" accepted within ` +
          `${options.timeoutMs / 1000} s (--timeout); ${likelyCauses("dpu", options.serverName)}` +
          // the wait's end is the sentence itself; another failure's own words follow it
          (e instanceof TimeoutError ? "" : ` (${e.message})`),
        { cause: e },
      );
    });
    const messenger = new Messenger(client.connection as MessageChannel, { timeoutMs: options.timeoutMs, peer: "the DPU side", signal });
    let peerIsDocaTs = false;
    try {
      started = performance.now();
      await messenger.send(encodeDirection({ fileInHost: local.have, fileSize: local.have ? local.size : 0, docaTs: !options.classic }));
      const answer = await messenger.recvAny("the DPU's answer to the direction message");
      if (answer.type === MsgType.STATUS && !answer.isSuccess) throw refusal(messenger, device, options, local);
      const dir = expectType(answer, MsgType.DIRECTION);
      peerIsDocaTs = dir.docaTs;
      result = await hostTransfer(context(messenger), local, dir);
      copied = true;
    } catch (e) {
      if (!(e instanceof PeerFailedError) && !peerGone(e)) {
        // Stopped before the DPU's answer was read: it may be queued already (a doca-ts DPU then hears why)
        if (!peerIsDocaTs && !options.classic) peerIsDocaTs = await messenger.peerSpeaksDocaTs(200);
        await messenger.sendFailure(`host: ${(e as Error).message}`, peerIsDocaTs);
      }
      throw interrupted(e, doing("the DPU side"), local, options);
    } finally {
      // A close that fails after the copy failed must not replace the reason (the peer's, or the stop's)
      await client.close().catch((e) => {
        if (copied) throw e;
      });
    }
  } else {
    if (!options.repPci) throw new Error("the DPU side needs -r/--rep-pci");
    requireServerSide(device, "dma-copy --side dpu");
    using rep = device.openRepresentor(options.repPci);
    const server = startServer({ device, rep, name: options.serverName, pe });
    let turnAway: { stop(): void } | undefined;
    try {
      // Scripts that start the host once the DPU listens (tasks/common/run-pair.ts) look for this line.
      const listening = `waiting for the host on Comch server "${options.serverName}"`;
      if (options.logLevel >= LogLevel.INFO) log.info(waitingLine("host", options.serverName, options.timeoutMs));
      else if (process.env.DOCA_TS_ANNOUNCE_LISTEN) printError(listening);
      const connection = await raceAbort(server.accept({ timeoutMs: options.timeoutMs }), signal, "waiting for the host side to connect")
        .catch((e: Error) => {
          if (!(e instanceof TimeoutError)) throw e;
          throw new PeerLostError(`no host connected within ${options.timeoutMs / 1000} s (--timeout); ${likelyCauses("host", options.serverName)}`, { cause: e });
        });
      // Serve one host; any other host that connects meanwhile hears "busy", not a silent wait and a disconnection.
      turnAway = turnAwayOtherHosts(server, `${local.have ? "sending" : "receiving"} ${options.file}`, options.timeoutMs);
      const messenger = new Messenger(connection as MessageChannel, { timeoutMs: options.timeoutMs, peer: "the host side", signal });
      let peerIsDocaTs = false;
      try {
        started = performance.now();
        const dir = await messenger.recv(MsgType.DIRECTION, "the host's direction message");
        peerIsDocaTs = dir.docaTs && !options.classic;
        result = await dpuTransfer(context(messenger), local, dir);
        copied = true;
      } catch (e) {
        if (!(e instanceof PeerFailedError) && !peerGone(e)) {
          await messenger.sendFailure(`DPU: ${(e as Error).message}`, peerIsDocaTs);
        }
        if (e instanceof RefusedError) throw new Error(`refused: ${e.message}`);
        throw interrupted(e, doing("the host side"), local, options);
      }
    } catch (e) {
      // Reached only before a host connected (the inner catch describes the rest): nothing was received yet
      throw interrupted(e, undefined, local, options, { peerCame: false });
    } finally {
      turnAway?.stop();
      // A close that fails after the copy failed must not replace the reason (the host's, or the stop's): a host
      // already gone leaves doca_comch_server_disconnect nothing valid to disconnect
      await server.close().catch((e) => {
        if (copied) throw e;
      });
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const peak = rss?.stop();
  return {
    side: options.side,
    file: options.file,
    seconds,
    bytesPerSecond: seconds > 0 ? result.bytes / seconds : 0,
    ...result,
    peakRssBytes: peak?.bytes,
    peakRssSource: peak?.source,
  };
}

/**
 * Whether the peer is past hearing why this side ends: it failed (and said so) or vanished. A peer that only stayed
 * silent past --timeout (stopped, swapped out) may still be connected: it is told this side gave up, and says so
 * when it goes on instead of "disconnected".
 */
const peerGone = (e: unknown) => e instanceof PeerLostError && !e.silent;

/**
 * An interruption says what this side was doing (`doing`, left out where its own words say it) and what it left behind: the
 * file unchanged, or not created, with "the partial data is removed" only once a peer may have sent some. Other
 * errors pass unchanged.
 */
function interrupted(e: unknown, doing: string | undefined, local: LocalFile, options: DmaCopyOptions, { peerCame = true } = {}): unknown {
  if (!(e instanceof InterruptedError) || described.has(e)) return e;
  const left = local.have
    ? `${options.file} is unchanged`
    : `${options.file} was not created${peerCame ? " (the partial data is removed)" : ""}`;
  const context = doing ? ` (${doing})` : "";
  const error = new InterruptedError(e.signal, `${speakerOf(options.side)}: ${e.message}${context}; ${left}`);
  described.add(error);
  return error;
}

/** Interruptions interrupted() already described (a second pass leaves them as they are). */
const described = new WeakSet<InterruptedError>();

/** The host's error when the DPU answers the direction message with a failure status; names both sides' files. */
function refusal(messenger: Messenger, device: Device, options: DmaCopyOptions, local: LocalFile): Error {
  const here = `host: ${options.file} ${local.have ? `exists (${local.size} bytes)` : "does not exist"}`;
  if (messenger.reason) return new PeerFailedError(`the DPU refused the copy: ${messenger.reason} (${here})`);
  const maxBuf = device.info.caps.dmaMaxBufSize;
  const big = local.have && local.size > maxBuf;
  let hint: string;
  if (options.classic) {
    hint = big
      ? ` With --classic the copy is NVIDIA's single-buffer protocol: at most one DMA buffer (${maxBuf} bytes here), ` +
        `and the file has ${local.size} bytes. Drop --classic on both sides to copy it in chunks.`
      : " With --classic the DPU does not hear doca-ts's reasons: its own output says why.";
  } else {
    hint = big
      ? ` The file has ${local.size} bytes, more than one DMA buffer (${maxBuf} bytes here): the DPU is NVIDIA's ` +
        `doca_dma_copy or doca-ts with --classic, which copy at most one DMA buffer per file.`
      : " NVIDIA's doca_dma_copy refuses files present on both or neither side and files larger than its max DMA buffer.";
  }
  return new PeerFailedError(`the DPU refused the copy (failure status, no reason given; ${here}).${hint}`);
}

export function formatSummary(s: Summary): string {
  const verb = s.role === "send" ? "sent" : "received";
  const how = s.mode === "extended"
    ? `${s.chunks} chunk${s.chunks === 1 ? "" : "s"} of ≤ ${formatBytes(s.chunkSize)}, ${s.slots} in flight, SHA-256 ${s.sha256?.slice(0, 16)}… verified`
    : s.role === "send" && s.side === "dpu"
    ? "classic single buffer; NVIDIA's protocol has no receipt: the host writes its file after this"
    : "classic single buffer";
  const rss = s.peakRssBytes !== undefined ? `, peak RSS ${formatBytes(s.peakRssBytes)} (${s.peakRssSource})` : "";
  return `${speakerOf(s.side)}: ${verb} ${s.file} (${formatBytes(s.bytes)}) in ${formatDuration(s.seconds)}, ` +
    `${formatRate(s.bytes, s.seconds)} [${how}]${rss}`;
}

/**
 * How every line of one side begins: the task's name, then its side in words ("dma-copy: host side: …"): one prefix
 * rule for all tasks ("TASK: "), and in a terminal or log where both sides write, each line still says whose it is.
 */
export function speakerOf(side: "host" | "dpu"): string {
  return `dma-copy: ${side === "host" ? "host" : "DPU"} side`;
}

export async function main(argv: string[]): Promise<number> {
  const command = parseDmaCopyArgs(argv);
  if (command.kind === "help") {
    print(DMA_COPY_HELP);
    return 0;
  }
  if (command.kind === "version") {
    const info = loadDoca();
    print(`doca-ts dma-copy ${VERSION}; DOCA ${info.version} from ${info.dir}${info.isSoftwareDevice ? " (software device)" : ""}`);
    return 0;
  }
  const options = command.options;
  applySide(options.side);
  const summary = await dmaCopy(options, { signal: stopOnSignals() });
  if (options.jsonOutput) printJson(summary);
  else if (!options.quiet) print(formatSummary(summary));
  return 0;
}

// An error ends the copy with the bar possibly drawn: clear it so "error: …" starts on a clean line. Every line runMain
// prints names the side once dmaCopy has set it (task-name.ts's speaker).
if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)).finally(clearStatusLine));
