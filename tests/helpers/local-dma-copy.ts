/**
 * One 4 KiB DMA copy within this process's memory on `dev` and `pe`, every object closed after: true when the bytes
 * arrived. For child processes that only need to show "DMA works here" (a DOCA without some library, a loader
 * that binds lazily).
 */
import { Access, BufInventory, type Device, Dma, Mmap, NativeMemory, type ProgressEngine } from "../../mod.ts";

export async function localDmaCopy(dev: Device, pe: ProgressEngine): Promise<boolean> {
  using mem = NativeMemory.alloc(8192);
  mem.bytes.fill(9, 0, 4096);
  using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  using inv = new BufInventory(2);
  await using dma = new Dma(dev, pe);
  await dma.memcpy(inv.bufByData(map, mem.address, 4096), inv.bufByAddr(map, mem.address + 4096, 4096));
  return mem.bytes[8191] === 9;
}
