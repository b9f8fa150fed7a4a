/**
 * A doca-ts-speaking host that misbehaves on purpose, to check the DPU's verification: it runs the extended
 * sequence for FILE with one slot, then either announces a wrong SHA-256 ("bad-checksum") or a chunk at the wrong
 * offset ("bad-offset"). Prints one JSON line: the message types it received after misbehaving, and the status.
 * "vanish-before-commit" receives a file from the DPU honestly and exits after the DPU's final STATUS, before it
 * would commit and answer (a receiver killed in the last moment).
 *
 * "escape-reason" announces a file, then fails with a FAILURE_REASON full of terminal escapes.
 *
 * "revoke-after-descriptor" sends its window's export descriptor and stops at once, as a host interrupted right then
 * does: it revokes the export (the DPU's import then fails), then says why.
 *
 *   args: bad-checksum|bad-offset FILE  |  vanish-before-commit  |  escape-reason  |  revoke-after-descriptor
 */
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import process from "node:process";
import { Access, Mmap, NativeMemory } from "../../../mod.ts";
import { connectToDpu, reportAndExit } from "./scripted-peer.ts";
import {
  decodeMessage,
  encodeChecksum,
  encodeChunk,
  encodeDirection,
  encodeExportDescriptor,
  encodeFailureReason,
  encodeStatus,
  encodeWindow,
  type Msg,
  MsgType,
} from "../../../tasks/wire/protocol.ts";

const [mode, file] = process.argv.slice(2);
const data = file ? new Uint8Array(readFileSync(file)) : new Uint8Array(0);
const host = await connectToDpu();
const { device, conn } = host;
const next = async (): Promise<Msg> => decodeMessage(await conn.recv({ timeoutMs: 20_000 }));
const out: { received: string[]; status?: boolean; reason?: string; error?: string } = { received: [] };

if (mode === "escape-reason") {
  // A host that says why it "failed" with terminal escapes (tests/tasks-peer-text.test.ts): the DPU must print them escaped.
  const { HOSTILE_TEXT } = await import("./hostile-text.ts");
  await conn.send(encodeDirection({ fileInHost: true, fileSize: 1000, docaTs: true }));
  await next();
  await conn.send(encodeFailureReason(HOSTILE_TEXT));
  await conn.send(encodeStatus(false));
  await new Promise((r) => setTimeout(r, 2000)); // let the DPU read them before the connection goes
  process.exit(0);
}

if (mode === "revoke-after-descriptor") {
  await conn.send(encodeDirection({ fileInHost: true, fileSize: 4096, docaTs: true }));
  const dir = await next();
  const params = await next();
  if (dir.type !== MsgType.DIRECTION || params.type !== MsgType.EXT_PARAMS) throw new Error("not a doca-ts DPU");
  const memory = NativeMemory.alloc(4096);
  const map = Mmap.create({ memory, permissions: Access.PCI_READ_ONLY, devices: [device] });
  await conn.send(encodeWindow(1, 4096));
  await conn.send(encodeExportDescriptor(memory.address, map.exportPci(device)));
  map.close(); // revoked before the DPU can import it
  memory.close();
  await conn.send(encodeFailureReason("host: interrupted (SIGINT) while sending; nothing was written"));
  await conn.send(encodeStatus(false));
  await new Promise((r) => setTimeout(r, 2000)); // let the DPU read them before the connection goes
  process.exit(0);
}

if (mode === "vanish-before-commit") {
  await conn.send(encodeDirection({ fileInHost: false, docaTs: true }));
  const dir = await next();
  const params = await next();
  if (dir.type !== MsgType.DIRECTION || params.type !== MsgType.EXT_PARAMS) throw new Error("not a doca-ts DPU");
  const size = Number(dir.fileSize);
  using memory = NativeMemory.alloc(size);
  using map = Mmap.create({ memory, permissions: Access.PCI_READ_WRITE, devices: [device] });
  await conn.send(encodeWindow(1, size));
  await conn.send(encodeExportDescriptor(memory.address, map.exportPci(device)));
  const ready = await next();
  if (ready.type !== MsgType.CHUNK_READY) throw new Error(`expected CHUNK_READY, got ${ready.type}`);
  await conn.send(encodeChunk(MsgType.CHUNK_DONE, 0, 0, size));
  await conn.send(encodeChecksum(size, new Uint8Array(createHash("sha256").update(memory.bytes).digest())));
  const theirs = await next();
  const status = await next();
  process.stdout.write(JSON.stringify({ received: [theirs.type.toString(16), status.type.toString(16)] }) + "\n");
  process.exit(0); // no commit, no final status: the DPU must not call this a success
}

try {
  await conn.send(encodeDirection({ fileInHost: true, fileSize: data.length, docaTs: true }));
  const dir = await next();
  const params = await next();
  if (dir.type !== MsgType.DIRECTION || params.type !== MsgType.EXT_PARAMS) throw new Error("not a doca-ts DPU");
  const slotSize = Math.min(Number(params.maxChunk), data.length);
  using memory = NativeMemory.alloc(slotSize);
  using map = Mmap.create({ memory, permissions: Access.PCI_READ_ONLY, devices: [device] });
  await conn.send(encodeWindow(1, slotSize));
  await conn.send(encodeExportDescriptor(memory.address, map.exportPci(device)));
  for (let offset = 0; offset < data.length; offset += slotSize) {
    const length = Math.min(slotSize, data.length - offset);
    memory.bytes.set(data.subarray(offset, offset + length));
    await conn.send(encodeChunk(MsgType.CHUNK_READY, 0, mode === "bad-offset" ? offset + 1 : offset, length));
    if (mode === "bad-offset") break;
    const done = await next();
    if (done.type !== MsgType.CHUNK_DONE) throw new Error(`expected CHUNK_DONE, got ${done.type}`);
  }
  if (mode === "bad-checksum") {
    const digest = new Uint8Array(createHash("sha256").update(data).digest());
    digest[0] ^= 1;
    await conn.send(encodeChecksum(data.length, digest));
  }
  for (;;) {
    const m = await next();
    out.received.push(m.type.toString(16));
    if (m.type === MsgType.FAILURE_REASON) out.reason = m.text;
    if (m.type === MsgType.STATUS) {
      out.status = m.isSuccess;
      break;
    }
  }
} catch (e) {
  out.error = String(e);
}
await reportAndExit(out, host);
