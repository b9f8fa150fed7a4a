/**
 * One-shot native staging for the byte-array conveniences of the accelerator contexts (Compress, Sha): the input
 * copied into fresh native memory mapped for the device, a source Buf over it and an empty destination Buf of the room
 * asked for; everything released when the callback settles. Each call has its own memory, so calls may overlap.
 */
import { Access } from "../../native/constants.ts";
import type { Device } from "./device.ts";
import { NativeMemory } from "./memory.ts";
import { Mmap } from "./mmap.ts";
import { type Buf, BufInventory } from "./buf.ts";

export async function withStaging<T>(
  device: Device,
  input: Uint8Array,
  room: number,
  fn: (src: Buf, dst: Buf, output: () => Uint8Array) => Promise<T>,
): Promise<T> {
  const memory = NativeMemory.alloc(Math.max(input.length + room, 1));
  try {
    memory.bytes.set(input);
    const mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
    try {
      const inventory = new BufInventory(2);
      try {
        const src = inventory.bufByData(mmap, memory.address, input.length);
        const dst = inventory.bufByAddr(mmap, memory.address + input.length, Math.max(room, 1));
        return await fn(src, dst, () => memory.bytes.slice(input.length, input.length + dst.dataLength));
      } finally {
        inventory.close();
      }
    } finally {
      mmap.close();
    }
  } finally {
    memory.close();
  }
}
