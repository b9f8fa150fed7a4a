#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read --allow-write
/**
 * Step: hand an export descriptor (and the exporter's address) to the other side over Comch, in NVIDIA's
 * EXPORT_DESCRIPTOR message layout. Importable (`sendDescriptor` / `receiveDescriptor`) and runnable:
 *
 *   host: deno run -A tasks/steps/exchange-descriptor.ts --send desc.json           (desc.json from export-mmap.ts)
 *   DPU:  DOCA_SIM_SIDE=dpu deno run -A tasks/steps/exchange-descriptor.ts --receive got.json -r 0000:b1:00.1
 */
import { parseArgs } from "node:util";
import { readFileSync, writeFileSync } from "node:fs";
import { Buffer } from "node:buffer";
import process from "node:process";
import { ComchClient } from "../../ffi/comch-client.ts";
import { ComchServer } from "../../ffi/comch-server.ts";
import { openDevice } from "../../ffi/device.ts";
import { ProgressEngine } from "../../ffi/pe.ts";
import { isMain, print, runMain } from "../common/main.ts";
import { type MessageChannel, Messenger } from "../dma-copy/messenger.ts";
import { encodeExportDescriptor, encodeStatus, MsgType } from "../dma-copy/protocol.ts";
import { safeNumber } from "../dma-copy/session.ts";

/** Sends the descriptor and waits for the peer's STATUS (success = it imported the map). */
export async function sendDescriptor(channel: MessageChannel, address: number, descriptor: Uint8Array, timeoutMs = 30_000): Promise<void> {
  const m = new Messenger(channel, timeoutMs);
  await m.send(encodeExportDescriptor(address, descriptor));
  const status = await m.recv(MsgType.STATUS, "the peer's status after the descriptor");
  if (!status.isSuccess) throw m.peerFailure("the descriptor to be accepted");
}

/** Receives one descriptor; `accept` (e.g. Mmap.fromExport) decides the STATUS answered. */
export async function receiveDescriptor<T>(
  channel: MessageChannel,
  accept: (d: { address: number; descriptor: Uint8Array }) => T | Promise<T>,
  timeoutMs = 30_000,
): Promise<T> {
  const m = new Messenger(channel, timeoutMs);
  const msg = await m.recv(MsgType.EXPORT_DESCRIPTOR, "an export descriptor");
  try {
    const result = await accept({ address: safeNumber(msg.hostAddr, "address"), descriptor: msg.descriptor });
    await m.send(encodeStatus(true));
    return result;
  } catch (e) {
    await m.sendFailure(String(e), false);
    throw e;
  }
}

const HELP = `Usage: exchange-descriptor (--send FILE | --receive FILE) [-p PCI] [-r REP_PCI] [--name NAME]

--send: (host, Comch client) reads export-mmap.ts's JSON from FILE and sends it as an EXPORT_DESCRIPTOR
message, then waits for the peer's status.
--receive: (DPU, Comch server; needs -r, the host function's representor) waits for one EXPORT_DESCRIPTOR, writes
it to FILE in export-mmap.ts's JSON form and answers success. The message carries no length: give --length N to
record it (dma-transfer.ts uses it; default 0).
--name sets the Comch server name (default "doca-ts descriptor").`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      send: { type: "string" },
      receive: { type: "string" },
      length: { type: "string" },
      "pci-addr": { type: "string", short: "p" },
      "rep-pci": { type: "string", short: "r" },
      name: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return void print(HELP);
  if ((values.send === undefined) === (values.receive === undefined)) throw new Error("need exactly one of --send FILE / --receive FILE");
  const name = values.name ?? "doca-ts descriptor";
  const timeoutMs = Number(values.timeout ?? 30) * 1000;
  using device = openDevice(values["pci-addr"]);
  using pe = new ProgressEngine();
  if (values.send !== undefined) {
    const exported = JSON.parse(readFileSync(values.send, "utf8")) as { descriptor: string; address: number };
    const client = await ComchClient.connect({ device, name, pe, timeoutMs });
    try {
      await sendDescriptor(client.connection, exported.address, new Uint8Array(Buffer.from(exported.descriptor, "base64")), timeoutMs);
      print(`sent a descriptor for address 0x${exported.address.toString(16)}`);
    } finally {
      await client.close();
    }
    return;
  }
  if (!values["rep-pci"]) throw new Error("--receive runs the Comch server: give -r/--rep-pci");
  using rep = device.openRepresentor(values["rep-pci"]);
  const server = ComchServer.start({ device, rep, name, pe });
  try {
    process.stderr.write(`exchange-descriptor: waiting for a descriptor on "${name}"\n`);
    const conn = await server.accept({ timeoutMs });
    await receiveDescriptor(conn, ({ address, descriptor }) => {
      const json = { descriptor: Buffer.from(descriptor).toString("base64"), address, length: Number(values.length ?? 0) };
      writeFileSync(values.receive!, JSON.stringify(json));
      print(`received a ${descriptor.length}-byte descriptor for address 0x${address.toString(16)} into ${values.receive}`);
    }, timeoutMs);
  } finally {
    await server.close();
  }
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
