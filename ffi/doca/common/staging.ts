/**
 * One accelerator task over bytes held in JS: the input copied into fresh native memory mapped for the device,
 * a destination buffer of `room` bytes after it, and the output copied back out. Every object is released before
 * the Promise settles, whatever happens. For the byte-level calls of ErasureCoding and AesGcm (files, streams);
 * callers that already hold Bufs submit tasks on them directly.
 */
import { Access } from "../../native/constants.ts";
import type { Device } from "./device.ts";
import { NativeMemory } from "./memory.ts";
import { Mmap } from "./mmap.ts";
import { type Buf, BufInventory } from "./buf.ts";

export async function stagedTask(
  device: Device,
  input: readonly Uint8Array[],
  room: number,
  run: (src: Buf, dst: Buf) => Promise<void>,
): Promise<Uint8Array> {
  const inLength = input.reduce((sum, part) => sum + part.length, 0);
  // Bufs of zero bytes are refused: a byte of slack on each side keeps an empty input or output expressible.
  const memory = NativeMemory.alloc(Math.max(1, inLength) + Math.max(1, room));
  try {
    let offset = 0;
    for (const part of input) {
      memory.bytes.set(part, offset);
      offset += part.length;
    }
    const mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
    try {
      const inventory = new BufInventory(2);
      try {
        const outAt = memory.address + Math.max(1, inLength);
        const src = inventory.bufByData(mmap, memory.address, Math.max(1, inLength));
        if (inLength === 0) src.setData(memory.address, 0);
        const dst = inventory.bufByAddr(mmap, outAt, Math.max(1, room));
        await run(src, dst);
        const start = Math.max(1, inLength);
        return memory.bytes.slice(start, start + dst.dataLength);
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
