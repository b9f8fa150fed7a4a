#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read --allow-write
/**
 * Step 2 of NVIDIA's DMA Copy flow: hand an export descriptor (and the exporter's address) to the other side over
 * Comch in the EXPORT_DESCRIPTOR message layout, and on the other side turn it into a memory map of the peer's
 * memory (doca_mmap_create_from_export), checking that the range the peer will use lies inside what it exported.
 * Importable (`sendDescriptor`, `receiveDescriptor`, `importDescriptor`) and runnable:
 *
 *   host: deno run -A tasks/steps/exchange-descriptor.ts --send desc.json           (desc.json from export-mmap.ts)
 *   DPU:  DOCA_SIM_SIDE=dpu deno run -A tasks/steps/exchange-descriptor.ts --receive got.json -r 0000:b1:00.1
 */
import "../common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { OutputFile } from "../accel/output-file.ts";
import { Buffer } from "node:buffer";
import process from "node:process";
import type { Device } from "../../ffi/doca/common/device.ts";
import { Mmap } from "../../ffi/doca/common/mmap.ts";
import { ProgressEngine } from "../../ffi/engine/pe.ts";
import { parseFlags, positiveInt, positiveSecondsMs, serverName, UsageError } from "../common/cli.ts";
import { raceAbort, stopOnSignals, STOPPED_STATUSES } from "../common/interrupt.ts";
import { isMain, print, runMain } from "../common/main.ts";
import { printError } from "../common/output.ts";
import { applySide, connectClient, openDeviceOf, startServer } from "../common/device.ts";
import { userPath } from "../common/user-path.ts";
import { type MessageChannel, Messenger } from "../wire/messenger.ts";
import { encodeExportDescriptor, encodeStatus, MsgType, ProtocolError, safeNumber } from "../wire/protocol.ts";
import { taskFlags } from "../common/task-flags.ts";
import { readJsonFlagFile as readDescriptorFile } from "../common/json-config.ts";

/** A descriptor as it travels: the exporter's base address and doca_mmap_export_pci's bytes. */
export interface DescriptorMsg {
  address: number;
  descriptor: Uint8Array;
}

/** Sends one EXPORT_DESCRIPTOR message (the whole message must fit the Comch max message size). */
export async function sendDescriptor(messenger: Messenger, exported: DescriptorMsg): Promise<void> {
  await messenger.send(encodeExportDescriptor(exported.address, exported.descriptor), "sending the export descriptor");
}

/** Waits for one EXPORT_DESCRIPTOR message (within the messenger's deadline). */
export async function receiveDescriptor(messenger: Messenger, what = "the export descriptor"): Promise<DescriptorMsg> {
  const msg = await messenger.recv(MsgType.EXPORT_DESCRIPTOR, what);
  return { address: safeNumber(msg.hostAddr, "exported address"), descriptor: msg.descriptor };
}

/**
 * doca_mmap_create_from_export on a received descriptor, then checks that `length` bytes from its address lie inside
 * the exported range (a peer may announce any address: the range comes from the export itself).
 */
export function importDescriptor(device: Device, received: DescriptorMsg, length: number): Mmap {
  let remote: Mmap;
  try {
    remote = Mmap.fromExport(received.descriptor, device);
  } catch (e) {
    if ((e as { docaName?: string }).docaName !== "DOCA_ERROR_NOT_PERMITTED") throw e;
    throw new Error(
      `the peer's export cannot be imported here (${(e as Error).message}). On the software device the two sides ` +
        `must reach each other's memory: the same user in the same user namespace (a container, \`unshare -U\`, ` +
        `rootless podman or a sandbox give another one, even with the same uid), the same pid namespace, and a Yama ` +
        `ptrace_scope of 0 or 1; run the doctor task (\`npm run deno -- task doctor\`) on both sides. On a BlueField: the export was made for ` +
        `another device or without DMA access`,
      { cause: e },
    );
  }
  const { address: start, length: total } = remote.range;
  if (received.address < start || received.address + length > start + total) {
    remote.close();
    throw new ProtocolError(
      `host range 0x${received.address.toString(16)}+${length} is outside its export 0x${start.toString(16)}+${total}`,
    );
  }
  return remote;
}

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {
    send: { type: "string" },
    receive: { type: "string" },
    name: { type: "string" },
  },
  "length", "pci-addr", "rep-pci", "timeout", "help",
);

const HELP = `Usage: exchange-descriptor (--send FILE | --receive FILE) [-p PCI] [-r REP_PCI] [--name NAME] [--length N]
                           [--timeout SECONDS]

--send: (host, Comch client) reads export-mmap.ts's JSON from FILE and sends it as an EXPORT_DESCRIPTOR
message, then waits for the peer's status.
--receive: (DPU, Comch server; needs -r, the host function's representor) waits for one EXPORT_DESCRIPTOR, writes
it to FILE in export-mmap.ts's JSON form and answers success. The message carries no length: give --length N to
record it (dma-transfer.ts uses it; default 0).
--name sets the Comch server name (default "doca-ts descriptor"); --timeout SECONDS bounds the wait for the peer
(default 30 s, on both sides). -p/--pci-addr picks the device (default: the first one found).
Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: --send FILE, --receive FILE, -p/--pci-addr PCI, -r/--rep-pci REP_PCI, --name NAME, --length N,
--timeout SECONDS, -h/--help.`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return void print(HELP);
  if ((values.send === undefined) === (values.receive === undefined)) throw new UsageError("need exactly one of --send FILE / --receive FILE");
  const name = serverName(values.name, "--name") ?? "doca-ts descriptor";
  const timeoutMs = values.timeout === undefined ? 30_000 : positiveSecondsMs(values.timeout, "--timeout");
  const length = values.length === undefined ? 0 : positiveInt(values.length, "--length");
  applySide(values.send !== undefined ? "host" : "dpu");
  // a folder or FIFO at the output's name: said now, not after the peer sent its descriptor
  if (values.receive !== undefined) OutputFile.checkFree(userPath(values.receive), values.receive, true, "--receive");
  const signal = stopOnSignals();
  using device = openDeviceOf(values["pci-addr"]);
  using pe = new ProgressEngine();
  if (values.send !== undefined) {
    const exported = readDescriptorFile("--send", values.send) as { descriptor: string; address: number };
    printError(`exchange-descriptor: connecting to "${name}" (up to ${timeoutMs / 1000} s)`);
    const client = await raceAbort(connectClient({ device, name, pe, timeoutMs }), signal, `connecting to the Comch server "${name}"`);
    try {
      const messenger = new Messenger(client.connection, { timeoutMs, peer: "the DPU side", signal });
      await sendDescriptor(messenger, { address: exported.address, descriptor: new Uint8Array(Buffer.from(exported.descriptor, "base64")) });
      // This runnable step adds one STATUS so the sender knows the receiver has the descriptor.
      const status = await messenger.recv(MsgType.STATUS, "the receiver's status after the descriptor");
      if (!status.isSuccess) throw messenger.peerFailure("the descriptor to be accepted");
      print(`exchange-descriptor: sent a descriptor for address 0x${exported.address.toString(16)}`);
    } finally {
      await client.close();
    }
    return;
  }
  if (!values["rep-pci"]) throw new UsageError("--receive runs the Comch server: give -r/--rep-pci");
  using rep = device.openRepresentor(values["rep-pci"]);
  const server = startServer({ device, rep, name, pe });
  try {
    printError(`exchange-descriptor: waiting for a descriptor on "${name}" (up to ${timeoutMs / 1000} s)`);
    const conn = await raceAbort(server.accept({ timeoutMs }), signal, "waiting for the host side to connect");
    const messenger = new Messenger(conn as MessageChannel, { timeoutMs, peer: "the host side", signal });
    const got = await receiveDescriptor(messenger);
    const out = userPath(values.receive!);
    const record = JSON.stringify({ descriptor: Buffer.from(got.descriptor).toString("base64"), address: got.address, length });
    OutputFile.writeWhole(out, values.receive!, record, "exchange-descriptor", "--receive");
    await messenger.send(encodeStatus(true));
    print(`exchange-descriptor: received a ${got.descriptor.length}-byte descriptor for address 0x${got.address.toString(16)} into ${values.receive}`);
  } finally {
    await server.close();
  }
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
