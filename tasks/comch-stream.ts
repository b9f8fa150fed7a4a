#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read
/**
 * Comch fast path: the host produces N messages to a consumer on the DPU and both report the rate. Run the DPU
 * side first (it is the Comch server), then the host side:
 *
 *   DPU:  DOCA_SIM_SIDE=dpu deno task comch-stream --side dpu -r 0000:b1:00.1
 *   host: deno task comch-stream --count 100000 --size 1024
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { ComchConsumer, ComchProducer, ProgressEngine, TimeoutError } from "../mod.ts";
import { parseSide, positiveInt, positiveSecondsMs, serverName, UsageError } from "./common/cli.ts";
import { applyRoleSide, applySide, connectClient, openDeviceOf } from "./common/device.ts";
import { acceptHost, openServerSide } from "./comch/server-side.ts";
import { InterruptedError, raceAbort, stopOnSignals, STOPPED_STATUSES } from "./common/interrupt.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printError, printJson } from "./common/output.ts";
import { startLiveLine } from "./common/live-line.ts";
import { StopWatch } from "./common/stop-watch.ts";
import { printable } from "../ffi/engine/printable.ts";
import { comchCauses, noPeerWithin, peerEnded, peerSilent, wordTimeout } from "./common/peer-words.ts";
import { formatBytes, formatDuration, formatRate } from "./common/units.ts";
import { parseTaskFlags, taskFlags } from "./common/task-flags.ts";
import { checkOptions, type OptionRules, PCI_ADDR_OPTION, SIGNAL_OPTION, TIMEOUT_OPTION } from "./common/options-check.ts";

export const STREAM_SERVICE = "doca-ts comch stream";
const MAX_SIZE = 4096;
/** Sequence numbers are 32 bits (0 .. 2^32 - 1): a longer stream would wrap and fail as out of order. */
const MAX_COUNT = 2 ** 32;
const messagesWord = (n: number) => `${n} message${n === 1 ? "" : "s"}`;
/**
 * Receives the DPU keeps posted: more than the host has in flight (16 by default), so a message never waits for a
 * repost (the consumer's default of 16 made the producer meet DOCA_ERROR_AGAIN; 128, as benchmarks/comch-workload.ts
 * and NVIDIA-style C consumers keep, measured 3-20 % more messages per second; 512 KiB at 4 KiB messages).
 */
const CONSUMER_BUFFERS = 128;

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {
    name: { type: "string", short: "s" },
    inflight: { type: "string" },
  },
  "side", "pci-addr", "rep-pci", "count", "size", "timeout", "json", "version", "help",
);
const TASK = "comch-stream";

const HELP = `Usage: comch-stream [--side host|dpu] [-r REP_PCI] [-p PCI] [--count N] [--size BYTES] [--inflight K]
                    [-s NAME] [--timeout SECONDS] [--json]

Streams N fast-path messages (Comch producer on the host → consumer on the DPU) and reports messages/s and
bytes/s on both sides. The DPU side (--side dpu, or DOCA_SIM_SIDE=dpu; needs -r) is the Comch server "${STREAM_SERVICE}"
and must start first. The host announces N and the size on the control path, sends the messages with up to K
(default 16) in flight, and prints the DPU's report next to its own. Every message carries its sequence number;
the DPU fails on loss, duplication or reordering. Defaults: N = 10000 (at most 2^32: the sequence number has 32
bits), size = 1024 bytes (4..4096).
Waits: every wait on the peer (the DPU for the host, each message) is limited to --timeout (default 30 s).
Interrupted (Ctrl-C, SIGTERM, SIGHUP, closed output), a side tells the other why before it leaves.
Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: --side host|dpu, -r/--rep-pci REP_PCI, -p/--pci-addr PCI (default: the first device), -s/--name NAME,
--count N, --size BYTES, --inflight K, --timeout SECONDS, --json (one JSON line), --version, -h/--help.`;

export interface StreamReport {
  side: "host" | "dpu";
  messages: number;
  bytes: number;
  seconds: number;
  messagesPerSecond: number;
  bytesPerSecond: number;
}

function report(side: "host" | "dpu", messages: number, size: number, seconds: number): StreamReport {
  const bytes = messages * size;
  return { side, messages, bytes, seconds, messagesPerSecond: seconds > 0 ? messages / seconds : 0, bytesPerSecond: seconds > 0 ? bytes / seconds : 0 };
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** A control message from the peer, parsed; anything but a JSON object is refused. */
function decodeControl(bytes: Uint8Array, from: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new StreamCheckError(`${from} sent a control message that is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new StreamCheckError(`${from} sent a control message that is not an object`);
  return value as Record<string, unknown>;
}

/** What this side found wrong in what the peer sent (a message out of sequence, a bad announcement or report). */
class StreamCheckError extends Error {
  override name = "StreamCheckError";
}

/** The peer's own notice that it stopped, and why: preferred over the failure its departure causes here. */
class PeerStoppedError extends Error {
  override name = "PeerStoppedError";
}

/** The peer's "I stopped" notice ({stop: reason}) as an error, its reason escaped whole (line breaks included). */
function peerStopped(message: Record<string, unknown>, from: string): Error | undefined {
  if (!("stop" in message)) return undefined;
  // In every task's words (peer-words.ts): "stopped: interrupted (…) while …", "gave up waiting for …", "failed: …"
  return new PeerStoppedError(peerEnded(from, printable(String(message.stop), 500)));
}

/** The host's announcement, checked: the DPU sizes its buffers by its own limit, never by what the host says. */
function readPlan(bytes: Uint8Array): { count: number; size: number } {
  const plan = decodeControl(bytes, "the host side");
  const { count, size } = plan;
  if (!Number.isSafeInteger(count) || (count as number) <= 0 || !Number.isSafeInteger(size) || (size as number) < 4 || (size as number) > MAX_SIZE) {
    throw new StreamCheckError(`the host side announced a stream this side does not serve (count 1.., size 4..${MAX_SIZE})`);
  }
  return { count: count as number, size: size as number };
}

/** The DPU's report, checked: only numbers are taken from it, so nothing the peer chose reaches the output. */
function readReport(message: Record<string, unknown>): StreamReport {
  const num = (key: string) => {
    const v = message[key];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new StreamCheckError(`the DPU side's report has no valid "${key}"`);
    return v;
  };
  const [bytes, seconds] = [num("bytes"), num("seconds")];
  // bytes/s from the DPU's own numbers (an older DPU side sends no bytesPerSecond)
  return { side: "dpu", messages: num("messages"), bytes, seconds, messagesPerSecond: num("messagesPerSecond"), bytesPerSecond: seconds > 0 ? bytes / seconds : 0 };
}

/**
 * Tells the peer why this side stops (best effort: the connection may be gone), whatever ended it here (a stop, a
 * give-up on a silent peer, a failure), so the peer's error says "the host side stopped: interrupted (SIGTERM) …"
 * instead of a bare disconnection. A peer that stopped first is not told back.
 */
async function tellPeerWhy(conn: { send(bytes: Uint8Array): Promise<void> }, e: unknown): Promise<void> {
  if (e instanceof PeerStoppedError) return;
  await conn.send(encode({ stop: (e as Error).message })).catch(() => {});
}

/**
 * A failure caused by the peer's departure (the connection was gone when it surfaced, say a producer task's
 * NOT_CONNECTED) in words: "the DPU side disconnected while sending message 5 of 10 (without a word; its own
 * output, if any, says why)", never DOCA's raw error; its notice, when it came, was preferred before this
 * (preferNotice). `wasConnected` is read when the failure reached us, before the peer was told: a peer that leaves
 * once told (as it should) must not turn a failure of this side's into its departure; nor may a peer that left
 * right after sending something wrong turn this side's finding (StreamCheckError, a timeout) into one.
 */
function peerGone(e: unknown, wasConnected: boolean, peer: string, doing: string): unknown {
  // Never this side's own findings: what the peer sent wrong, a wait the peer let run out (worded, TimeoutError cause)
  if (e instanceof InterruptedError || e instanceof PeerStoppedError || e instanceof StreamCheckError) return e;
  if (wasConnected || (e instanceof Error && e.cause instanceof TimeoutError)) return e;
  return new Error(`${peer} disconnected while ${doing} (without a word; its own output, if any, says why)`, { cause: e });
}

/**
 * Runs one side's exchange over `conn`; when it fails, the peer is told why first (tellPeerWhy). `doing()` names the
 * step the exchange is at, for a peer that vanished.
 */
async function tellingPeerWhy<T>(
  conn: { send(bytes: Uint8Array): Promise<void>; connected: boolean },
  peer: string,
  doing: () => string,
  exchange: () => Promise<T>,
): Promise<T> {
  try {
    return await exchange();
  } catch (e) {
    const wasConnected = conn.connected;
    await tellPeerWhy(conn, e);
    throw peerGone(e, wasConnected, peer, doing());
  }
}

/**
 * Rejects when `pending` (the peer's next control message) is a stop notice, or the connection fails; any other
 * message (the DPU's report, which may overtake our last completions) leaves it pending: its reader takes it.
 */
function watchPeer(pending: Promise<Uint8Array>, from: string): Promise<never> {
  return pending.then((bytes) => {
    const stopped = peerStopped(decodeControl(bytes, from), from);
    if (stopped) throw stopped;
    return new Promise<never>(() => {});
  });
}

/**
 * The peer's next control message (a report, or a stop notice while the stream runs) and its watch (watchPeer);
 * both are already handled, so whichever one nobody awaits cannot end the process as an unhandled rejection.
 */
function nextControl(conn: { recv(): Promise<Uint8Array> }, from: string): { next: Promise<Uint8Array>; stop: Promise<never> } {
  const next = conn.recv();
  next.catch(() => {});
  const stop = watchPeer(next, from);
  stop.catch(() => {});
  return { next, stop };
}

/**
 * A peer that stops tells us why, then goes: its departure may fail our fast-path task before its notice is read.
 * Prefer the notice when it comes within a moment of the failure (as the DMA Copy messenger prefers a reason).
 */
async function preferNotice(e: unknown, notice: Promise<never>): Promise<unknown> {
  if (e instanceof InterruptedError) return e;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const moment = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 500)));
  try {
    return await Promise.race([notice, moment]).then(() => e, (stop: unknown) => (stop instanceof PeerStoppedError ? stop : e));
  } finally {
    clearTimeout(timer);
  }
}

/** streamConsumer's and streamProducer's options, checked at run time (plain JavaScript callers). */
const CONSUMER_OPTIONS: OptionRules = {
  pciAddr: PCI_ADDR_OPTION,
  repPci: { type: "string", required: true, flag: "-r/--rep-pci" },
  name: { type: "string", flag: "-s/--name" },
  timeoutMs: TIMEOUT_OPTION,
  signal: SIGNAL_OPTION,
};
const PRODUCER_OPTIONS: OptionRules = {
  pciAddr: PCI_ADDR_OPTION,
  name: { type: "string", flag: "-s/--name" },
  count: { type: "integer", required: true, flag: "--count" },
  size: { type: "integer", required: true, flag: "--size" },
  inflight: { type: "integer", required: true, flag: "--inflight" },
  timeoutMs: TIMEOUT_OPTION,
  signal: SIGNAL_OPTION,
};

/** DPU: accept, create a consumer, receive the announced stream checking sequence numbers, answer the report. */
export async function streamConsumer(opts: { pciAddr?: string; repPci: string; name?: string; timeoutMs: number; signal?: AbortSignal }): Promise<StreamReport> {
  checkOptions("streamConsumer", opts, CONSUMER_OPTIONS);
  const { signal } = opts;
  const served = opts.name ?? STREAM_SERVICE;
  const side = openServerSide(opts, "comch-stream --side dpu", served);
  const { device, pe } = side;
  try {
    printError(`comch-stream: the DPU side is waiting for the host on "${served}"`);
    const conn = await acceptHost(side.server, {
      name: served,
      timeoutMs: opts.timeoutMs,
      signal,
      who: "host",
      starter: "the host side (comch-stream …)",
      waiting: "waiting for the host side to connect",
    });
    let doing = () => "waiting for the host's announcement";
    return await tellingPeerWhy(conn, "the host side", () => doing(), async () => {
      const announcement = "waiting for the host's announcement";
      const plan = readPlan(
        await raceAbort(wordTimeout(conn.recv({ timeoutMs: opts.timeoutMs }), () => peerSilent(announcement, opts.timeoutMs, "the host side")), signal, announcement),
      );
      const consumer = await ComchConsumer.create({ connection: conn, device, pe, bufferSize: Math.max(plan.size, 8), buffers: CONSUMER_BUFFERS });
      try {
        await conn.send(encode({ ready: true }));
        // The host's next control message can only be a stop notice: watch for it while receiving.
        const { stop: hostStop } = nextControl(conn, "the host side");
        // The DPU's clock runs from its "ready" (the host starts sending on it) to the last message: a clock started
        // at the first batch counted that batch in no time (1 message in "0 s" at 111,445 msg/s)
        const t0 = performance.now();
        // Whatever has arrived, in one batch per wake-up (recvBatch: one Promise for all, messages in shared slabs);
        // every message is still checked: its sequence number and its length. A live count on a terminal.
        let received = 0, i = 0;
        const live = startLiveLine(() => `comch-stream: ${received} of ${plan.count} messages received from the host`);
        // A stop (here, or the host's notice) is watched once for the whole stream, not raced per batch
        doing = () => `receiving message ${i + 1} of ${plan.count}`;
        using stop = new StopWatch(signal, doing, [hostStop]);
        try {
        for (; i < plan.count; received = i) {
          let batch;
          try {
            batch = await stop.wait(consumer.recvBatch({ max: plan.count - i, timeoutMs: opts.timeoutMs }));
          } catch (e) {
            const worded = e instanceof TimeoutError
              ? new Error(peerSilent(`waiting for message ${i + 1} of ${plan.count} from the host`, opts.timeoutMs, "the host side"), { cause: e })
              : e;
            throw await preferNotice(worded, hostStop);
          }
          for (const { bytes } of batch) {
            const seq = bytes.length >= 4 ? (bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (bytes[3] << 24)) >>> 0 : -1;
            if (seq !== i || bytes.length !== plan.size) {
              throw new StreamCheckError(`message ${i}: got sequence ${seq} and ${bytes.length} bytes (expected ${plan.size})`);
            }
            i++;
          }
        }
        } finally {
          live.stop();
        }
        const r = report("dpu", plan.count, plan.size, (performance.now() - t0) / 1000);
        await conn.send(encode(r));
        return r;
      } finally {
        await consumer.close();
      }
    });
  } finally {
    await side[Symbol.asyncDispose]();
  }
}

/** Sending lanes of the host, each with one batch in flight (4 measured better than 2 at 4 KiB, as well at 64 B). */
const SEND_LANES = 4;

/** Host: connect, announce, produce `count` messages of `size` bytes, return both sides' reports. */
export async function streamProducer(opts: {
  pciAddr?: string;
  name?: string;
  count: number;
  size: number;
  inflight: number;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<{ host: StreamReport; dpu: StreamReport }> {
  checkOptions("streamProducer", opts, PRODUCER_OPTIONS);
  if (opts.count < 1 || opts.count > MAX_COUNT) throw new RangeError(`streamProducer: option "count" must be 1..${MAX_COUNT} (32-bit sequence numbers), got ${opts.count}`);
  const { signal } = opts;
  applyRoleSide("host");
  using device = openDeviceOf(opts.pciAddr);
  using pe = new ProgressEngine();
  const name = opts.name ?? STREAM_SERVICE;
  const client = await raceAbort(
    wordTimeout(connectClient({ device, name, pe, timeoutMs: opts.timeoutMs }), () =>
      noPeerWithin(`no Comch server "${name}" answered`, opts.timeoutMs, comchCauses("the DPU side (comch-stream --side dpu -r REP_PCI …)", "-s/--name", name))),
    signal,
    `connecting to the Comch server "${name}"`,
  );
  try {
    const conn = client.connection;
    let doing = () => "announcing the stream";
    return await tellingPeerWhy(conn, "the DPU side", () => doing(), async () => {
      await conn.send(encode({ count: opts.count, size: opts.size }));
      // The DPU's first control message is {ready} or a stop notice; a stop must not leave us waiting for a consumer.
      const first = conn.recv({ timeoutMs: opts.timeoutMs }).then((bytes) => decodeControl(bytes, "the DPU side"));
      first.catch(() => {});
      const stopFirst = first.then((m) => {
        const stopped = peerStopped(m, "the DPU side");
        if (stopped) throw stopped;
        return new Promise<never>(() => {});
      });
      stopFirst.catch(() => {});
      const consumerId = await raceAbort(Promise.race([conn.waitForRemoteConsumer({ timeoutMs: opts.timeoutMs }), stopFirst]), signal, "waiting for the DPU's consumer");
      const ready = await raceAbort(first, signal, "waiting for the DPU to be ready");
      const refused = peerStopped(ready, "the DPU side");
      if (refused) throw refused;
      const producer = await ComchProducer.create({ connection: conn, device, pe, bufferSize: opts.size, buffers: opts.inflight });
      try {
        // The DPU's next control message is its report, or a stop notice while we still send.
        const { next: fromDpu, stop: dpuStop } = nextControl(conn, "the DPU side");
        printError(`comch-stream: the host side is sending ${messagesWord(opts.count)} of ${opts.size} bytes to "${name}"`);
        const t0 = performance.now();
        // SEND_LANES lanes, each sending one batch at a time (sendBatch: one Promise per batch), K messages in flight in
        // all; sequence numbers are given in submission order, the order the messages arrive in.
        const laneCount = Math.min(SEND_LANES, opts.inflight);
        let next = 0;
        // A stop (here, or the DPU's notice) is watched once for all lanes, not raced per batch
        // and a DPU that stops taking messages (stopped, swapped out) is given up on after --timeout, as any wait is
        doing = () => `sending message ${next} of ${opts.count}`;
        using stop = new StopWatch(signal, doing, [dpuStop], {
          ms: opts.timeoutMs,
          error: () => new Error(peerSilent(`waiting for the DPU side to take message ${next} of ${opts.count}`, opts.timeoutMs, "the DPU side", "take it")),
        });
        const lane = async (k: number) => {
          const per = Math.floor(opts.inflight / laneCount) + (k < opts.inflight % laneCount ? 1 : 0);
          const messages = Array.from({ length: per }, () => new Uint8Array(opts.size)); // copied at each call
          while (next < opts.count) {
            const batch = messages.slice(0, Math.min(per, opts.count - next));
            for (const m of batch) new DataView(m.buffer).setUint32(0, next++, true);
            await stop.wait(producer.sendBatch(batch, consumerId));
          }
        };
        const sending = async () => {
          const lanes = Array.from({ length: laneCount }, (_, k) => lane(k));
          for (const l of lanes) l.catch(() => {}); // the first failure is thrown below; the others end with the copy
          await Promise.all(lanes);
        };
        // A live count on a terminal (100,000 messages take seconds); nothing when stderr is piped.
        const live = startLiveLine(() => `comch-stream: ${next} of ${opts.count} messages sent to the DPU`);
        await sending().catch(async (e) => {
          throw await preferNotice(e, dpuStop);
        }).finally(() => live.stop());
        const host = report("host", opts.count, opts.size, (performance.now() - t0) / 1000);
        doing = () => "waiting for the DPU's report";
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(peerSilent("waiting for the DPU side's report", opts.timeoutMs, "the DPU side"))), opts.timeoutMs);
        });
        const answer = decodeControl(await raceAbort(Promise.race([fromDpu, late]), signal, "waiting for the DPU's report").finally(() => clearTimeout(timer)), "the DPU side");
        const stopped = peerStopped(answer, "the DPU side");
        if (stopped) throw stopped;
        return { host, dpu: readReport(answer) };
      } finally {
        await producer.close();
      }
    });
  } finally {
    await client.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, TASK);
  if (values === undefined) return 0;
  const side = parseSide(values.side, process.env, "host");
  const timeoutMs = values.timeout === undefined ? 30_000 : positiveSecondsMs(values.timeout, "--timeout");
  const count = values.count === undefined ? 10_000 : positiveInt(values.count, "--count", MAX_COUNT);
  const size = values.size === undefined ? 1024 : positiveInt(values.size, "--size", MAX_SIZE);
  if (size < 4) throw new UsageError(`--size: at least 4 bytes (room for the sequence number), got ${size}`);
  const inflight = values.inflight === undefined ? 16 : positiveInt(values.inflight, "--inflight", 1024);
  applySide(side);
  const line = (r: StreamReport) =>
    // one prefix for every line of the task (its name); the side is words of the message (issue 32)
    `comch-stream: the ${r.side === "host" ? "host sent" : "DPU received"} ${messagesWord(r.messages)}, ${formatBytes(r.bytes)} in ${formatDuration(r.seconds)}: ` +
    `${Math.round(r.messagesPerSecond)} msg/s, ${formatRate(r.bytes, r.seconds)}`;
  if (side === "dpu") {
    if (!values["rep-pci"]) throw new UsageError("missing -r/--rep-pci: the DPU side serves the host function's representor");
    const r = await streamConsumer({ pciAddr: values["pci-addr"], repPci: values["rep-pci"], name: serverName(values.name, "-s/--name"), timeoutMs, signal: stopOnSignals() });
    if (values.json) printJson(r);
    else print(line(r));
    return 0;
  }
  const both = await streamProducer({
    pciAddr: values["pci-addr"],
    name: serverName(values.name, "-s/--name"),
    count,
    size,
    inflight,
    timeoutMs,
    signal: stopOnSignals(),
  });
  if (values.json) printJson(both);
  else {
    print(line(both.host));
    print(line(both.dpu));
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
