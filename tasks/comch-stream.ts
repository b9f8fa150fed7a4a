#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read
/**
 * Comch fast path: the host produces N messages to a consumer on the DPU and both report the rate. Run the DPU
 * side first (it is the Comch server), then the host side:
 *
 *   DPU:  DOCA_SIM_SIDE=dpu deno task comch-stream --side dpu -r 0000:b1:00.1
 *   host: deno task comch-stream --count 100000 --size 1024
 */
import process from "node:process";
import { ComchClient, ComchConsumer, ComchProducer, ProgressEngine } from "../mod.ts";
import { parseFlags, parseSide, positiveInt, positiveSecondsMs, UsageError } from "./common/cli.ts";
import { applySide, openDeviceOf, requireServerSide, startServer } from "./common/device.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { formatBytes, formatRate } from "./common/units.ts";

export const STREAM_SERVICE = "doca-ts comch stream";
const MAX_SIZE = 4096;

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = {
  side: { type: "string" },
  "pci-addr": { type: "string", short: "p" },
  "rep-pci": { type: "string", short: "r" },
  name: { type: "string", short: "s" },
  count: { type: "string" },
  size: { type: "string" },
  inflight: { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const HELP = `Usage: comch-stream [--side host|dpu] [-r REP_PCI] [-p PCI] [--count N] [--size BYTES] [--inflight K]
                    [-s NAME] [--timeout SECONDS] [--json]

Streams N fast-path messages (Comch producer on the host → consumer on the DPU) and reports messages/s and
bytes/s on both sides. The DPU side (--side dpu, or DOCA_SIM_SIDE=dpu; needs -r) is the Comch server "${STREAM_SERVICE}"
and must start first. The host announces N and the size on the control path, sends the messages with up to K
(default 16) in flight, and prints the DPU's report next to its own. Every message carries its sequence number;
the DPU fails on loss, duplication or reordering. Defaults: N = 10000, size = 1024 bytes (4..4096).
Waits: every wait on the peer (the DPU for the host, each message) is limited to --timeout (default 30 s).
Exit status 0, 2 for bad flags, 130/143 when interrupted (SIGINT/SIGTERM end the process), 1 otherwise.
Flags: --side host|dpu, -r/--rep-pci REP_PCI, -p/--pci-addr PCI (default: the first device), -s/--name NAME,
--count N, --size BYTES, --inflight K, --timeout SECONDS, --json (one JSON line), -h/--help.`;

export interface StreamReport {
  side: "host" | "dpu";
  messages: number;
  bytes: number;
  seconds: number;
  messagesPerSecond: number;
}

function report(side: "host" | "dpu", messages: number, size: number, seconds: number): StreamReport {
  return { side, messages, bytes: messages * size, seconds, messagesPerSecond: seconds > 0 ? messages / seconds : 0 };
}

/** The host's announcement, checked: the DPU sizes its buffers by its own limit, never by what the host says. */
function readPlan(bytes: Uint8Array): { count: number; size: number } {
  let plan: { count?: unknown; size?: unknown };
  try {
    plan = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error("the host side's announcement is not JSON");
  }
  const { count, size } = plan ?? {};
  if (!Number.isSafeInteger(count) || (count as number) <= 0 || !Number.isSafeInteger(size) || (size as number) < 4 || (size as number) > MAX_SIZE) {
    throw new Error(`the host side announced a stream this side does not serve (count 1.., size 4..${MAX_SIZE})`);
  }
  return { count: count as number, size: size as number };
}

/** DPU: accept, create a consumer, receive the announced stream checking sequence numbers, answer the report. */
export async function streamConsumer(opts: { pciAddr?: string; repPci: string; name?: string; timeoutMs: number }): Promise<StreamReport> {
  using device = openDeviceOf(opts.pciAddr);
  requireServerSide(device, "comch-stream --side dpu");
  using pe = new ProgressEngine();
  using rep = device.openRepresentor(opts.repPci);
  const server = startServer({ device, rep, name: opts.name ?? STREAM_SERVICE, pe });
  try {
    process.stderr.write(`comch-stream dpu: waiting for the host on "${opts.name ?? STREAM_SERVICE}"\n`);
    const conn = await server.accept({ timeoutMs: opts.timeoutMs });
    const plan = readPlan(await conn.recv({ timeoutMs: opts.timeoutMs }));
    const consumer = await ComchConsumer.create({ connection: conn, device, pe, bufferSize: Math.max(plan.size, 8) });
    try {
      await conn.send(new TextEncoder().encode(JSON.stringify({ ready: true })));
      let t0 = 0;
      for (let i = 0; i < plan.count; i++) {
        const m = await consumer.recv({ timeoutMs: opts.timeoutMs });
        if (i === 0) t0 = performance.now();
        const seq = new DataView(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength).getUint32(0, true);
        if (seq !== i || m.bytes.length !== plan.size) {
          throw new Error(`message ${i}: got sequence ${seq} and ${m.bytes.length} bytes (expected ${plan.size})`);
        }
      }
      const r = report("dpu", plan.count, plan.size, (performance.now() - t0) / 1000);
      await conn.send(new TextEncoder().encode(JSON.stringify(r)));
      return r;
    } finally {
      await consumer.close();
    }
  } finally {
    await server.close();
  }
}

/** Host: connect, announce, produce `count` messages of `size` bytes, return both sides' reports. */
export async function streamProducer(opts: {
  pciAddr?: string;
  name?: string;
  count: number;
  size: number;
  inflight: number;
  timeoutMs: number;
}): Promise<{ host: StreamReport; dpu: StreamReport }> {
  using device = openDeviceOf(opts.pciAddr);
  using pe = new ProgressEngine();
  const client = await ComchClient.connect({ device, name: opts.name ?? STREAM_SERVICE, pe, timeoutMs: opts.timeoutMs });
  try {
    const conn = client.connection;
    await conn.send(new TextEncoder().encode(JSON.stringify({ count: opts.count, size: opts.size })));
    const consumerId = await conn.waitForRemoteConsumer({ timeoutMs: opts.timeoutMs });
    await conn.recv({ timeoutMs: opts.timeoutMs }); // {ready}: its buffers are posted
    const producer = await ComchProducer.create({ connection: conn, device, pe, bufferSize: opts.size, buffers: opts.inflight });
    try {
      const message = new Uint8Array(opts.size);
      const seq = new DataView(message.buffer);
      const inflight = new Set<Promise<void>>();
      const t0 = performance.now();
      for (let i = 0; i < opts.count; i++) {
        seq.setUint32(0, i, true);
        const p = producer.send(message, consumerId).finally(() => inflight.delete(p));
        inflight.add(p);
        if (inflight.size >= opts.inflight) await Promise.race(inflight);
      }
      await Promise.all(inflight);
      const host = report("host", opts.count, opts.size, (performance.now() - t0) / 1000);
      const dpu = JSON.parse(new TextDecoder().decode(await conn.recv({ timeoutMs: opts.timeoutMs }))) as StreamReport;
      return { host, dpu };
    } finally {
      await producer.close();
    }
  } finally {
    await client.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    print(HELP);
    return 0;
  }
  const side = parseSide(values.side, process.env, "host");
  const timeoutMs = values.timeout === undefined ? 30_000 : positiveSecondsMs(values.timeout, "--timeout");
  const count = values.count === undefined ? 10_000 : positiveInt(values.count, "--count");
  const size = values.size === undefined ? 1024 : positiveInt(values.size, "--size", MAX_SIZE);
  if (size < 4) throw new UsageError(`--size: at least 4 bytes (room for the sequence number), got ${size}`);
  const inflight = values.inflight === undefined ? 16 : positiveInt(values.inflight, "--inflight", 1024);
  applySide(side);
  const line = (r: StreamReport) =>
    `comch-stream ${r.side}: ${r.messages} messages, ${formatBytes(r.bytes)} in ${r.seconds.toFixed(3)} s: ` +
    `${Math.round(r.messagesPerSecond)} msg/s, ${formatRate(r.bytes, r.seconds)}`;
  if (side === "dpu") {
    if (!values["rep-pci"]) throw new UsageError("missing -r/--rep-pci: the DPU side serves the host function's representor");
    const r = await streamConsumer({ pciAddr: values["pci-addr"], repPci: values["rep-pci"], name: values.name, timeoutMs });
    print(values.json ? JSON.stringify(r) : line(r));
    return 0;
  }
  const both = await streamProducer({
    pciAddr: values["pci-addr"],
    name: values.name,
    count,
    size,
    inflight,
    timeoutMs,
  });
  if (values.json) print(JSON.stringify(both));
  else {
    print(line(both.host));
    print(line(both.dpu));
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
