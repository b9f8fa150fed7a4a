/**
 * A stand-in for NVIDIA's doca_dma_copy on the host, written from the wire description alone (hand-built bytes,
 * none of tasks/dma-copy's encoders): checks that a doca-ts DPU serves the exact classic sequence.
 *
 *   args: send FILE | recv FILE | garbage HEX     → prints one JSON line: {status, answer (hex), ...}
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Buffer } from "node:buffer";
import process from "node:process";
import { Access, Mmap, NativeMemory } from "../../../mod.ts";
import { connectToDpu, reportAndExit } from "./scripted-peer.ts";

const [mode, arg] = process.argv.slice(2);
const host = await connectToDpu();
const { device, conn } = host;
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const out: Record<string, unknown> = {};

try {
  if (mode === "garbage") {
    await conn.send(new Uint8Array(Buffer.from(arg, "hex")));
    out.answer = hex(await conn.recv({ timeoutMs: 20_000 }));
  } else {
    const data = mode === "send" ? new Uint8Array(readFileSync(arg)) : undefined;
    // struct comch_msg_dma_direction: type=1 LE, file_in_host, zero padding, file_size htonq
    const dir = new Uint8Array(16);
    dir[0] = 1;
    dir[4] = data ? 1 : 0;
    if (data) new DataView(dir.buffer).setBigUint64(8, BigInt(data.length), false);
    await conn.send(dir);
    const answer = await conn.recv({ timeoutMs: 20_000 });
    out.answer = hex(answer);
    if (answer.length === 16 && answer[0] === 1) {
      const size = data ? data.length : Number(new DataView(answer.buffer, answer.byteOffset).getBigUint64(8, false));
      const memory = NativeMemory.alloc(size);
      if (data) memory.bytes.set(data);
      const map = Mmap.create({ memory, permissions: data ? Access.PCI_READ_ONLY : Access.PCI_READ_WRITE, devices: [device] });
      const desc = map.exportPci(device);
      // struct comch_msg_dma_export_discriptor: type=2, pad, host_addr htonq @8, export_desc_len htonq @16, bytes @24
      const exp = new Uint8Array(24 + desc.length);
      const v = new DataView(exp.buffer);
      exp[0] = 2;
      v.setBigUint64(8, BigInt(memory.address), false);
      v.setBigUint64(16, BigInt(desc.length), false);
      exp.set(desc, 24);
      await conn.send(exp);
      const status = await conn.recv({ timeoutMs: 20_000 });
      out.status = hex(status);
      if (!data && status[0] === 3 && status[4] === 1) writeFileSync(arg, memory.bytes);
      map.close();
      memory.close();
    }
  }
} catch (e) {
  out.error = String(e);
}
await reportAndExit(out, host);
