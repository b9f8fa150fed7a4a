#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-net
/**
 * rdma-ping: message round trips over DOCA RDMA send/receive and their latency. One side listens and echoes, the
 * other connects, sends --count messages of --size bytes one at a time, waits for each echo, and prints latency
 * percentiles. Either side may listen (--listen / --connect decide the connection, --echo who echoes).
 *
 *   machine A:  deno task rdma-ping --listen 7472
 *   machine B:  deno task rdma-ping --connect 192.0.2.10:7472 --count 1000 --size 64
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { Access } from "../ffi/native/constants.ts";
import { BufInventory } from "../ffi/doca/common/buf.ts";
import { Mmap } from "../ffi/doca/common/mmap.ts";
import { NativeMemory } from "../ffi/doca/common/memory.ts";
import { ProgressEngine } from "../ffi/engine/pe.ts";
import { parseFlags, positiveInt, positiveSecondsMs, UsageError } from "./common/cli.ts";
import { peerSilent } from "./common/peer-words.ts";
import { raceAbort, stopOnSignals, STOPPED_STATUSES } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printError, printJson } from "./common/output.ts";
import { formatMicrosAll } from "./common/units.ts";
import { formatElapsed, startLiveLine } from "./common/live-line.ts";
import { meansPeerGone, peerVanished } from "./common/peer-words.ts";
import { Channel, type Endpoint, type Exchange, Link, LINK_OPTIONS, openRdmaDevice, parseEndpoint, PeerAbortError, peerGaveUp, ProtocolError } from "./rdma/link.ts";
import { optionsToRun, type ParsedCommand, taskFlags } from "./common/task-flags.ts";
import { checkOptions, checkRunOptions, type OptionRules, TIMEOUT_OPTION } from "./common/options-check.ts";

export const RDMA_PING_HELP = `Usage: rdma-ping (--listen [ADDR:]PORT | --connect HOST:PORT) [options]

Round trips over DOCA RDMA send/receive: the side that connects sends --count messages of --size bytes, one at a
time, and the listening side sends each one back; the sender prints min / p50 / p90 / p99 / max latency. Each
echo is checked byte for byte.

      --listen [ADDR:]PORT   wait for the peer on PORT (on ADDR only, when given) and echo its messages
      --connect HOST:PORT    connect to the peer at HOST (an IP address) : PORT and measure
      --exchange cm|tcp      RDMA CM on PORT (default), or exported details swapped over TCP on PORT
      --count N              round trips (default 1000, at most 10000000; the listener follows the sender)
      --size BYTES           message size (default 64, 1..${Channel.MAX_MESSAGE})
  -d, --device DEV           DOCA device: PCI address or IB device name (default: the first with RDMA)
      --timeout SECONDS      limit on connecting and on each round trip (default 30)
      --json                 print the result as one JSON object
      --version              print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help                 this text

Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.`;

export interface RdmaPingOptions {
  endpoint: Endpoint;
  exchange: Exchange;
  count: number;
  size: number;
  device?: string;
  timeoutMs: number;
  jsonOutput: boolean;
}

/** Every flag rdma-ping accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {},
  "listen", "connect", "exchange", "count", "size", "device", "timeout", "json", "version", "help",
);

export function parseRdmaPingArgs(argv: string[]): ParsedCommand<RdmaPingOptions> {
  const { values: v } = parseFlags(argv, FLAGS);
  if (v.help) return { kind: "help" };
  if (v.version) return { kind: "version" };
  const endpoint = parseEndpoint(v.listen, v.connect);
  const exchange = v.exchange ?? "cm";
  if (exchange !== "cm" && exchange !== "tcp") throw new UsageError(`--exchange: expected cm or tcp, got ${JSON.stringify(exchange)}`);
  if (endpoint.listen && (v.count !== undefined || v.size !== undefined)) {
    throw new UsageError(`--${v.count !== undefined ? "count" : "size"}: only the connecting side chooses it (the listener echoes)`);
  }
  return {
    kind: "run",
    options: {
      endpoint,
      exchange,
      count: v.count === undefined ? 1000 : positiveInt(v.count, "--count", 10_000_000),
      size: v.size === undefined ? 64 : positiveInt(v.size, "--size", Channel.MAX_MESSAGE),
      device: v.device || undefined,
      timeoutMs: v.timeout === undefined ? 30_000 : positiveSecondsMs(v.timeout, "--timeout"),
      jsonOutput: v.json === true,
    },
  };
}

export interface PingResult {
  count: number;
  size: number;
  /** Round-trip latency in microseconds. */
  minUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** rdmaPing's options, checked at run time (plain JavaScript callers; parseRdmaPingArgs(argv) makes them from flags). */
const RDMA_PING_OPTIONS: OptionRules = {
  ...LINK_OPTIONS,
  count: { type: "integer", required: true, flag: "--count" },
  size: { type: "integer", required: true, flag: "--size" },
  device: { type: "string", flag: "--device" },
  timeoutMs: TIMEOUT_OPTION,
  jsonOutput: { type: "boolean", required: true, flag: "--json" },
};

/** One side of a ping: the connecting side measures and returns the result; the listener echoes and returns undefined. */
export async function rdmaPing(o: RdmaPingOptions, run: { signal?: AbortSignal; progress?: boolean } = {}): Promise<PingResult | undefined> {
  checkOptions("rdmaPing", o, RDMA_PING_OPTIONS);
  checkRunOptions("rdmaPing", run, true);
  using device = openRdmaDevice(o.device);
  using pe = new ProgressEngine();
  // The peer by its role, in every sentence about what it did ("the echoing side stopped: …", peer-words.ts)
  const peer = o.endpoint.listen ? "the pinging side" : "the echoing side";
  const link = await Link.open({ peer, device, pe, endpoint: o.endpoint, exchange: o.exchange, timeoutMs: o.timeoutMs, signal: run.signal, permissions: 0,
    onListening: (what) => printError(`rdma-ping: ${what}`),
  });
  const memory = NativeMemory.alloc(Channel.MAX_MESSAGE);
  const mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  const inventory = new BufInventory(1);
  const buf = inventory.bufByAddr(mmap, memory.address, Channel.MAX_MESSAGE);
  const { channel, connection } = link;
  try {
    let count = o.count, size = o.size;
    if (!o.endpoint.listen) {
      await channel.send({ type: "PING", count, size }, "sending a ping");
      await channel.recv("waiting for the echo side to agree", "PONG");
    } else {
      const hello = await channel.recv("waiting for the pinging side", "PING");
      count = hello.count as number;
      size = hello.size as number;
      if (!Number.isSafeInteger(count) || count < 1 || count > 10_000_000 || !Number.isSafeInteger(size) || size < 1 || size > Channel.MAX_MESSAGE) {
        throw new ProtocolError("the pinging side asked for an out-of-range count or size");
      }
      await channel.send({ type: "PONG" }, "answering a ping");
    }
    printError(o.endpoint.listen ? `rdma-ping: echoing ${count} messages of ${size} B` : `rdma-ping: measuring ${count} round trips of ${size} B`);
    const rtts: number[] = [];
    const bound = <T>(p: Promise<T>, what: string) => raceTimeout(p, o.timeoutMs, what, run.signal);
    // A live count on a terminal: a million round trips take minutes.
    let done = 0;
    const started = performance.now();
    const live = startLiveLine(() =>
      `rdma-ping: ${done} of ${count} round trips ${o.endpoint.listen ? "echoed" : "measured"}, ${formatElapsed(performance.now() - started)}`, {
      enabled: run.progress === true && process.stderr.isTTY === true,
    });
    try {
    for (let i = 0; i < count; i++, done = i) {
      if (!o.endpoint.listen) {
        memory.bytes.fill(i & 0xff, 0, size);
        buf.setData(memory.address, size);
        const t0 = performance.now();
        await bound(connection.send(buf), `sending ping ${i + 1}`);
        const echo = await bound(link.rdma.recv(), `waiting for echo ${i + 1}`);
        rtts.push((performance.now() - t0) * 1000);
        if (echo.bytes.length !== size || echo.bytes.some((b) => b !== (i & 0xff))) {
          throw peerAbort(echo.bytes, peer) ?? new ProtocolError(`echo ${i + 1} differs from what was sent`);
        }
      } else {
        const m = await bound(link.rdma.recv(), `waiting for ping ${i + 1}`);
        const aborted = peerAbort(m.bytes, peer);
        if (aborted) throw aborted;
        if (m.bytes.length > Channel.MAX_MESSAGE) throw new ProtocolError("ping larger than agreed");
        memory.bytes.set(m.bytes, 0);
        buf.setData(memory.address, m.bytes.length);
        await bound(connection.send(buf), `echoing ping ${i + 1}`);
      }
    }
    } finally {
      live.stop();
    }
    if (o.endpoint.listen) return undefined;
    rtts.sort((a, b) => a - b);
    const r = (x: number) => Math.round(x * 10) / 10;
    return { count, size, minUs: r(rtts[0]), p50Us: r(percentile(rtts, 50)), p90Us: r(percentile(rtts, 90)), p99Us: r(percentile(rtts, 99)), maxUs: r(rtts[rtts.length - 1]) };
  } catch (e) {
    if (e instanceof PeerAbortError) throw e;
    // A failure the peer's stopping caused (our send reset by its leaving): its reason, when already here, says more.
    if (!run.signal?.aborted) {
      const theirs = await queuedAbort(link.rdma, 300, peer);
      if (theirs) throw theirs;
    }
    // Tell the peer why we stop (an interruption, a timeout, a bad echo), as rdma-copy does: it names our role itself
    await channel.abort((e as Error).message);
    // A peer gone without a word (its process killed): one sentence, not DOCA's CONNECTION_RESET of our last send
    if (meansPeerGone(e)) throw new Error(peerVanished(peer, (e as Error).message), { cause: e });
    throw e;
  } finally {
    await link.close().catch(() => {});
    inventory.close();
    mmap.close();
    memory.close();
  }
}

/**
 * A message of the round-trip loop that is the peer's ABORT control message (JSON: it stopped and says why), as the
 * error to report; undefined for anything else (pings and echoes are one repeated byte, never a JSON object).
 */
function peerAbort(bytes: Uint8Array, peer: string): PeerAbortError | undefined {
  if (bytes.length < 2 || bytes[0] !== 0x7b || bytes[1] !== 0x22) return undefined; // '{"'
  try {
    const m = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as { type?: unknown; reason?: unknown };
    if (m?.type === "ABORT") return peerGaveUp(m.reason, peer);
  } catch { /* not a control message */ }
  return undefined;
}

/** The peer's ABORT among the messages already received (looked for during `ms` at most), if any. */
async function queuedAbort(rdma: { recv(o: { timeoutMs?: number }): Promise<{ bytes: Uint8Array }> }, ms: number, peer: string): Promise<PeerAbortError | undefined> {
  const deadline = Date.now() + ms;
  for (let left = ms; left > 0; left = deadline - Date.now()) {
    try {
      const aborted = peerAbort((await rdma.recv({ timeoutMs: left })).bytes, peer);
      if (aborted) return aborted;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

async function raceTimeout<T>(p: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // the same sentence as every task's for a peer gone silent (tasks/common/peer-words.ts)
    timer = setTimeout(() => reject(new Error(peerSilent(what, ms, "the peer", what.startsWith("waiting for ") ? "send it" : "take it"))), ms);
  });
  try {
    return await raceAbort(Promise.race([p, timeout]), signal, what);
  } finally {
    clearTimeout(timer);
  }
}

if (isMain(import.meta)) {
  runMain(async () => {
    const o = optionsToRun(parseRdmaPingArgs(process.argv.slice(2)), RDMA_PING_HELP, "rdma-ping");
    if (o === undefined) return;
    const result = await rdmaPing(o, { signal: stopOnSignals(), progress: !o.jsonOutput });
    if (!result) return print(`rdma-ping: echoed the peer's messages`);
    if (o.jsonOutput) return printJson(result);
    const [min, p50, p90, p99, max] = formatMicrosAll([result.minUs, result.p50Us, result.p90Us, result.p99Us, result.maxUs]);
    print(`rdma-ping: ${result.count} round trips of ${result.size} B: min ${min}, p50 ${p50}, p90 ${p90}, p99 ${p99}, max ${max}`);
  });
}
