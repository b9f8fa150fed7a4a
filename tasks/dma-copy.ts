#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read --allow-write
/**
 * DMA Copy: copies a file between the host and the DPU over DOCA DMA, speaking the message protocol of NVIDIA's
 * DOCA DMA Copy application (so either side may be NVIDIA's doca_dma_copy) and, between two doca-ts sides, an
 * extension for files of any size with SHA-256 verification (docs/PROTOCOL.md). Run it once on each side:
 *
 *   host:  deno task dma-copy -f /tmp/big.bin -p 0000:b1:00.1
 *   DPU:   deno task dma-copy -f /tmp/big.bin -p 0000:03:00.1 -r 0000:b1:00.1 --side dpu
 *
 * Importable: `await dmaCopy(options)` runs one side in this process and resolves with its Summary.
 */
import process from "node:process";
import { ComchClient } from "../ffi/comch-client.ts";
import { ComchServer } from "../ffi/comch-server.ts";
import { type Device, openDevice as openDeviceOrFirst } from "../ffi/device.ts";
import { loadDoca } from "../ffi/library.ts";
import { setNativeEnv } from "../ffi/diagnostics.ts";
import { ProgressEngine } from "../ffi/pe.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { createLogger, LogLevel } from "./common/log-level.ts";
import { dpuTransfer, RefusedError } from "./dma-copy/dpu-side.ts";
import { hostTransfer } from "./dma-copy/host-side.ts";
import { probeLocalFile } from "./dma-copy/local-file.ts";
import { type MessageChannel, Messenger, PeerFailedError } from "./dma-copy/messenger.ts";
import { DMA_COPY_HELP, type DmaCopyOptions, parseDmaCopyArgs } from "./dma-copy/options.ts";
import { formatBytes, formatRate, PeakRss, ProgressBar } from "./dma-copy/progress.ts";
import { encodeDirection, expectType, MsgType } from "./dma-copy/protocol.ts";
import type { SessionContext, Summary, TransferResult } from "./dma-copy/session.ts";

export type { DmaCopyOptions, Summary };
export { parseDmaCopyArgs };

const VERSION = "0.1.0";

function openDevice(pciAddr: string | undefined): Device {
  return openDeviceOrFirst(pciAddr || undefined);
}

/** Runs one side of the copy in this process. Rejects with a message that says what went wrong. */
export async function dmaCopy(options: DmaCopyOptions): Promise<Summary> {
  const log = createLogger(options.logLevel, `dma-copy ${options.side}`);
  const rss = options.stats ? new PeakRss().start() : undefined;
  const local = probeLocalFile(options.file);
  using device = openDevice(options.pciAddr);
  using pe = new ProgressEngine();
  const showBar = !options.quiet && !options.jsonOutput && process.stderr.isTTY === true;
  const context = (messenger: Messenger): SessionContext => ({
    options,
    device,
    pe,
    messenger,
    log,
    progress: (total) => new ProgressBar(total, showBar),
  });
  log.debug(`device ${device.info.pciAddr}; ${local.have ? `have ${options.file} (${local.size} bytes)` : `will create ${options.file}`}`);

  let result: TransferResult;
  let started = 0;
  if (options.side === "host") {
    const client = await ComchClient.connect({ device, name: options.serverName, pe, timeoutMs: options.timeoutMs });
    const messenger = new Messenger(client.connection as MessageChannel, options.timeoutMs);
    let peerIsDocaTs = false;
    try {
      started = performance.now();
      await messenger.send(encodeDirection({ fileInHost: local.have, fileSize: local.have ? local.size : 0, docaTs: !options.classic }));
      const answer = await messenger.recvAny("the DPU's answer to the direction message");
      if (answer.type === MsgType.STATUS && !answer.isSuccess) throw refusal(messenger, device, local.have ? local.size : undefined);
      const dir = expectType(answer, MsgType.DIRECTION);
      peerIsDocaTs = dir.docaTs;
      result = await hostTransfer(context(messenger), local, dir);
    } catch (e) {
      if (!(e instanceof PeerFailedError)) await messenger.sendFailure(`host: ${(e as Error).message}`, peerIsDocaTs);
      throw e;
    } finally {
      await client.close();
    }
  } else {
    if (!options.repPci) throw new Error("the DPU side needs -r/--rep-pci");
    using rep = device.openRepresentor(options.repPci);
    const server = ComchServer.start({ device, rep, name: options.serverName, pe });
    try {
      // Scripts that start the host once the DPU listens (tasks/common/run-pair.ts) look for this line.
      const listening = `waiting for the host on Comch server "${options.serverName}"`;
      if (options.logLevel >= LogLevel.INFO) log.info(listening);
      else if (process.env.DOCA_TS_ANNOUNCE_LISTEN) process.stderr.write(`${listening}\n`);
      const connection = await server.accept({ timeoutMs: options.timeoutMs });
      const messenger = new Messenger(connection as MessageChannel, options.timeoutMs);
      let peerIsDocaTs = false;
      try {
        started = performance.now();
        const dir = await messenger.recv(MsgType.DIRECTION, "the host's direction message");
        peerIsDocaTs = dir.docaTs && !options.classic;
        result = await dpuTransfer(context(messenger), local, dir);
      } catch (e) {
        if (!(e instanceof PeerFailedError)) await messenger.sendFailure(`DPU: ${(e as Error).message}`, peerIsDocaTs);
        throw e instanceof RefusedError ? new Error(`refused: ${e.message}`) : e;
      }
    } finally {
      await server.close();
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

/** The host's error when the DPU answers the direction message with a failure status. */
function refusal(messenger: Messenger, device: Device, size: number | undefined): Error {
  const base = messenger.peerFailure("the direction answer");
  if (base.message.startsWith("peer failed:")) return new PeerFailedError(`the DPU refused the copy: ${base.message.slice(13)}`);
  const maxBuf = device.info.caps.dmaMaxBufSize;
  const hint = size !== undefined && size > maxBuf
    ? ` The file has ${size} bytes, more than one DMA buffer (${maxBuf} bytes here): the DPU is probably NVIDIA's ` +
      `doca_dma_copy, which supports at most one DMA buffer per file.`
    : " NVIDIA's doca_dma_copy refuses files present on both or neither side and files larger than its max DMA buffer.";
  return new PeerFailedError(`the DPU refused the copy (failure status, no reason given).${hint}`);
}

export function formatSummary(s: Summary): string {
  const verb = s.role === "send" ? "sent" : "received";
  const how = s.mode === "extended"
    ? `${s.chunks} chunk${s.chunks === 1 ? "" : "s"} of ≤ ${formatBytes(s.chunkSize)}, ${s.slots} in flight, SHA-256 ${s.sha256?.slice(0, 16)}… verified`
    : "classic single buffer";
  const rss = s.peakRssBytes !== undefined ? `, peak RSS ${formatBytes(s.peakRssBytes)} (${s.peakRssSource})` : "";
  return `dma-copy ${s.side}: ${verb} ${s.file} (${formatBytes(s.bytes)}) in ${s.seconds.toFixed(3)} s, ` +
    `${formatRate(s.bytes, s.seconds)} [${how}]${rss}`;
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
  // The software device learns its side from the C environment; Bun does not forward process.env writes to it.
  if (process.env.DOCA_SIM_SIDE !== options.side) {
    process.env.DOCA_SIM_SIDE = options.side;
    setNativeEnv("DOCA_SIM_SIDE", options.side);
  }
  const summary = await dmaCopy(options);
  if (options.jsonOutput) print(JSON.stringify(summary));
  else if (!options.quiet) print(formatSummary(summary));
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
