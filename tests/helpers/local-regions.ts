/**
 * What the local accelerator tests (DMA, compress, SHA) open before their context: a device, a progress engine, a
 * source and a destination region mapped for the device, and a buf inventory; closed in the reverse order, after
 * the context (withContext).
 */
import { HOST_PCI } from "./sim-env.ts";
import { Access, BufInventory, Device, Mmap, NativeMemory, ProgressEngine } from "../../mod.ts";

export function localRegions(opts: { srcSize: number; dstSize: number; bufs: number; dstPermissions?: number }) {
  const dev = Device.open(HOST_PCI);
  const pe = new ProgressEngine();
  const src = NativeMemory.alloc(opts.srcSize);
  const dst = NativeMemory.alloc(opts.dstSize);
  const srcMap = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  const dstMap = Mmap.create({ memory: dst, permissions: opts.dstPermissions ?? Access.LOCAL_READ_WRITE, devices: [dev] });
  const inv = new BufInventory(opts.bufs);
  return {
    dev, pe, src, dst, srcMap, dstMap, inv,
    /** After the context that used them is closed. */
    close(): void {
      inv.close();
      dstMap.close();
      srcMap.close();
      src.close();
      dst.close();
      pe.close();
      dev.close();
    },
  };
}

/**
 * A test's setup: `fields` (its context and the helpers it reads through), disposed with `await using` by closing
 * `ctx` first (its tasks settle) and then `regions`, which the context used.
 */
export function withContext<T extends object>(regions: { close(): void }, ctx: { close(): Promise<void> }, fields: T): T & AsyncDisposable {
  return {
    ...fields,
    async [Symbol.asyncDispose]() {
      await ctx.close();
      regions.close();
    },
  };
}
