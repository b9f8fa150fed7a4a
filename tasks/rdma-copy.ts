#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-net --allow-run --allow-sys=statfs
/**
 * rdma-copy: a file from one machine to another over DOCA RDMA (write or read), SHA-256 on both sides, committed by
 * the receiver (fsync + rename) before the sender reports success. Run it once on each machine:
 *
 *   receiver:  deno task rdma-copy --receive /tmp/copy.bin --listen 7471
 *   sender:    deno task rdma-copy --send /tmp/big.bin --connect 192.0.2.10:7471
 *
 * Importable (tasks/mod.ts): `await rdmaCopy(options, { signal })` runs one side in this process.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { statSync } from "node:fs";
import { Access } from "../ffi/native/constants.ts";
import { ProgressEngine } from "../ffi/engine/pe.ts";
import { DocaError } from "../ffi/native/errors.ts";
import { InterruptedError, stopOnSignals } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printable } from "../ffi/engine/printable.ts";
import { printError, printJson } from "./common/output.ts";
import { Link, LINK_OPTIONS, openRdmaDevice, PeerAbortError } from "./rdma/link.ts";
import { meansPeerGone, peerVanished } from "./common/peer-words.ts";
import { ProgressBar } from "./transfer/progress.ts";
import { formatBytes, formatDuration, formatRate } from "./common/units.ts";
import { optionsToRun } from "./common/task-flags.ts";
import { parseRdmaCopyArgs, RDMA_COPY_HELP, type RdmaCopyOptions } from "./rdma-copy/options.ts";
import { receiveFile, sendFile, type TransferResult } from "./rdma-copy/transfer.ts";
import { checkTargetFolder, TargetLock } from "./transfer/atomic-file.ts";
import { refuseNonFileOutput } from "./transfer/output-name.ts";
import { notAFileToCopy } from "./transfer/local-file.ts";
import { rethrowMissingPermission } from "./common/permission.ts";
import { checkOptions, checkRunOptions, type OptionRules, PATH, TIMEOUT_OPTION } from "./common/options-check.ts";

export type { RdmaCopyOptions, TransferResult };
export { parseRdmaCopyArgs };

/** rdmaCopy's options, checked at run time (plain JavaScript callers; parseRdmaCopyArgs(argv) makes them from flags). */
const RDMA_COPY_OPTIONS: OptionRules = {
  role: { type: ["send", "receive"], required: true, flag: "--send/--receive" },
  file: PATH(),
  ...LINK_OPTIONS,
  mode: { type: ["write", "read"], required: true, flag: "--mode" },
  device: { type: "string", flag: "--device" },
  chunk: { type: "integer", required: true, flag: "--chunk" },
  slots: { type: "integer", required: true, flag: "--slots" },
  timeoutMs: TIMEOUT_OPTION,
  quiet: { type: "boolean", required: true, flag: "--quiet" },
  jsonOutput: { type: "boolean", required: true, flag: "--json" },
};

/** Runs one side; resolves once the copy is complete and verified (sender: the receiver's receipt arrived). */
export async function rdmaCopy(options: RdmaCopyOptions, run: { signal?: AbortSignal } = {}): Promise<TransferResult> {
  checkOptions("rdmaCopy", options, RDMA_COPY_OPTIONS);
  checkRunOptions("rdmaCopy", run);
  let size = 0;
  if (options.role === "send") {
    let stat;
    try {
      stat = statSync(options.file);
    } catch (e) {
      rethrowMissingPermission(e);
      throw new Error(`--send ${options.file}: no such file`);
    }
    if (!stat.isFile()) throw notAFileToCopy("--send", options.file, stat); // dma-copy's words (transfer/local-file.ts)
    size = stat.size;
  } else {
    // A receiver that could not create the file says so before it waits for a sender (again once the size is known)
    refuseNonFileOutput(options.file, options.file, "--receive", "rdma-copy");
    checkTargetFolder(options.file, undefined, options.file, undefined, "--receive");
    TargetLock.checkFree(options.file); // another receiver, or a stranger's FIFO at the lock's name: said before listening
  }
  using device = openRdmaDevice(options.device);
  using pe = new ProgressEngine();
  const showBar = !options.quiet && !options.jsonOutput && process.stderr.isTTY === true;
  // The side whose window the peer reaches needs that access on its context and window.
  const exposes = options.role === "receive" ? Access.RDMA_WRITE : Access.RDMA_READ;
  // The peer by its role, in every sentence about what it did ("the receiver stopped: …", peer-words.ts)
  const peer = options.role === "send" ? "the receiver" : "the sender";
  const link = await Link.open({
    peer,
    device,
    pe,
    endpoint: options.endpoint,
    exchange: options.exchange,
    timeoutMs: options.timeoutMs,
    signal: run.signal,
    permissions: exposes,
    onListening: options.quiet ? undefined : (what) => printError(`rdma-copy: ${what}`),
  }).catch((e) => {
    throw leftBehind(e, options, false); // stopped before any peer came: nothing was received
  });
  // Windows are released after the link closed (its context stopped): see sendFile.
  const releases: (() => void)[] = [];
  const defer = (release: () => void) => releases.push(release);
  try {
    if (options.role === "send") {
      const bar = new ProgressBar("rdma-copy", size, { enabled: showBar });
      try {
        return await sendFile(link, options.file, size, { mode: options.mode, chunk: options.chunk, slots: options.slots, progress: bar, defer });
      } finally {
        bar.finish();
      }
    }
    return await receiveFile(link, options.file, {
      maxChunk: device.info.caps.rdma?.maxMessageSize || undefined,
      progress: (total) => new ProgressBar("rdma-copy", total, { enabled: showBar }),
      defer,
      warn: (message) => printError(`rdma-copy: warning: ${message}`),
    });
  } catch (e) {
    // The connection failed under us: the peer may have said why just before (its reason beats our symptom).
    if (!(e instanceof PeerAbortError) && !(e instanceof InterruptedError) && (link.channel.lost || e instanceof DocaError)) {
      const why = await link.channel.lastWords();
      if (why) throw why;
    }
    // Tell the peer (unless it told us, or it is gone); a Ctrl-C says so in its reason, with what this side was doing.
    if (!(e instanceof PeerAbortError)) await link.channel.abort((e as Error).message ?? String(e));
    // A peer gone without a word (its process killed): one sentence, not DOCA's CONNECTION_RESET of our last write
    if (meansPeerGone(e)) throw new Error(peerVanished(peer, (e as Error).message), { cause: e });
    throw leftBehind(e, options);
  } finally {
    await link.close().catch(() => {});
    for (const release of releases.reverse()) release();
  }
}

/** A stop names the file and its state, as dma-copy's does: the source unchanged, the target not created. */
function leftBehind(e: unknown, options: RdmaCopyOptions, peerCame = true): unknown {
  if (!(e instanceof InterruptedError)) return e;
  const state = options.role === "send"
    ? `${options.file} is unchanged`
    : `${options.file} was not created${peerCame ? " (the partial data is removed)" : ""}`;
  return new InterruptedError(e.signal, `${e.message}; ${state}`);
}

if (isMain(import.meta)) {
  runMain(async () => {
    const o = optionsToRun(parseRdmaCopyArgs(process.argv.slice(2)), RDMA_COPY_HELP, "rdma-copy");
    if (o === undefined) return;
    const result = await rdmaCopy(o, { signal: stopOnSignals() });
    if (o.jsonOutput) return printJson({ role: o.role, file: o.file, ...result, bytesPerSecond: result.seconds > 0 ? result.bytes / result.seconds : 0 });
    if (!o.quiet) {
      const verb = o.role === "send" ? "sent" : "received";
      print(
        `rdma-copy: ${verb} ${printable(o.file)} (${formatBytes(result.bytes)}) by RDMA ${result.mode} in ` +
          `${formatDuration(result.seconds)} (${formatRate(result.bytes, result.seconds)}), sha256 ${result.sha256}` +
          (o.role === "send" ? ", committed by the receiver" : ", fsync'd and renamed"),
      );
    }
  });
}
