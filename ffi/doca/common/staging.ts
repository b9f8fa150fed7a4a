/**
 * One-shot native staging for the byte-array conveniences of the accelerator contexts (Compress, Sha, ErasureCoding,
 * AesGcm): the input (one or more parts, laid end to end) copied into fresh native memory mapped for the device, a
 * source Buf over it and an empty destination Buf of `room` bytes after it; everything released before the Promise
 * settles, whatever happens. Each call has its own memory, so calls may overlap. Callers that already hold Bufs
 * submit tasks on them directly.
 */
import { Access } from "../../native/constants.ts";
import type { Device } from "./device.ts";
import { NativeMemory } from "./memory.ts";
import { Mmap } from "./mmap.ts";
import { type Buf, BufInventory } from "./buf.ts";

/** Runs `fn` on staged Bufs; `output()` copies out what the task wrote into the destination (its data length). */
export async function withStaging<T>(
  device: Device,
  input: Uint8Array | readonly Uint8Array[],
  room: number,
  fn: (src: Buf, dst: Buf, output: () => Uint8Array) => Promise<T>,
): Promise<T> {
  const parts = input instanceof Uint8Array ? [input] : input;
  const inLength = parts.reduce((sum, part) => sum + part.length, 0);
  // Bufs of zero bytes are refused: a byte of slack on each side keeps an empty input or output expressible.
  const outStart = Math.max(1, inLength);
  const memory = NativeMemory.alloc(outStart + Math.max(1, room));
  try {
    let offset = 0;
    for (const part of parts) {
      memory.bytes.set(part, offset);
      offset += part.length;
    }
    const mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
    try {
      const inventory = new BufInventory(2);
      try {
        const src = inventory.bufByData(mmap, memory.address, outStart);
        if (inLength === 0) src.setData(memory.address, 0);
        const dst = inventory.bufByAddr(mmap, memory.address + outStart, Math.max(1, room));
        return await fn(src, dst, () => memory.bytes.slice(outStart, outStart + dst.dataLength));
      } finally {
        inventory.closeSync();
      }
    } finally {
      mmap.closeSync();
    }
  } finally {
    memory.close();
  }
}

/** One task over staged bytes; resolves with what it wrote. */
export function stagedTask(
  device: Device,
  input: readonly Uint8Array[],
  room: number,
  run: (src: Buf, dst: Buf) => Promise<void>,
): Promise<Uint8Array> {
  return withStaging(device, input, room, async (src, dst, output) => {
    await run(src, dst);
    return output();
  });
}
