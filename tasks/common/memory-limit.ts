/**
 * A size flag that asks for more memory than the machine can give is a usage error (exit 2 naming the flag), never
 * the allocation's own words later ("mmap of 100000002048 bytes failed", exit 1, which names neither the flag nor
 * the limit). Where the machine's memory can be read (Node and Bun: os.totalmem(); Deno only with --allow-sys, as
 * Deno asks for all access to read /proc) a size over it is refused before anything is read or allocated;
 * everywhere, a failed allocation for the flag is reported as that flag's error (allocateFor).
 */
import { totalmem } from "node:os";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import { UsageError } from "./cli.ts";
import { formatBytes } from "./units.ts";

/** The machine's physical memory in bytes, or undefined where this process may not ask. */
export function machineMemoryBytes(): number | undefined {
  try {
    const total = totalmem();
    return total > 0 ? total : undefined;
  } catch {
    return undefined; // Deno without --allow-sys: allocateFor still names the flag
  }
}

/** Throws a UsageError naming `flag` when `bytes` is more than the machine's memory (when it is known). */
export function requireFitsInMemory(bytes: number, flag: string): void {
  const total = machineMemoryBytes();
  if (total !== undefined && bytes > total) {
    throw new UsageError(`${flag}: ${bytes} bytes is more than this machine's memory (${formatBytes(total)})`);
  }
}

/** NativeMemory.alloc(bytes) for the size `flag` asked for: a refused allocation is that flag's usage error. */
export function allocateFor(bytes: number, flag: string): NativeMemory {
  requireFitsInMemory(bytes, flag);
  try {
    return NativeMemory.alloc(bytes);
  } catch (e) {
    throw new UsageError(`${flag}: cannot allocate ${bytes} bytes on this machine (${(e as Error).message})`);
  }
}
