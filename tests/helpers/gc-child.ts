/**
 * Child of tests/ffi-gc.test.ts, run with the garbage collector exposed (Deno --v8-flags=--expose-gc, Node
 * --expose-gc, Bun's Bun.gc): takes 64 Bufs (half of them chained in lists of four) and an Mmap and forgets them
 * without closing, collects garbage until
 * their finalizers ran, and prints how many native objects are alive before, while held, and after.
 */
import "./sim-env.ts";
import { Access, BufInventory, liveObjects, Mmap, NativeMemory, openDevice } from "../../mod.ts";

declare const Bun: { gc(force: boolean): void } | undefined;
const collect = typeof Bun !== "undefined" ? () => Bun!.gc(true) : (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("no garbage collector exposed (--expose-gc)");

using dev = openDevice();
using memory = NativeMemory.alloc(64 * 4096);
using inventory = new BufInventory(64);
const base = liveObjects()!;

/** Everything made here is unreachable once it returns: only the finalizers can release it. */
function forget(): number {
  const map = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  // Half of them in lists of four (Buf.chain): a list is released by its head's finalizer, members have none
  let head: ReturnType<typeof inventory.bufByAddr> | undefined;
  for (let i = 0; i < 64; i++) {
    const buf = inventory.bufByAddr(map, memory.address + i * 4096, 4096);
    if (i >= 32) {
      if (i % 4 === 0) head = buf;
      else head!.chain(buf);
    }
  }
  return liveObjects()!;
}
const held = forget();

let after = held;
for (let round = 0; round < 200 && after > base; round++) {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 10)); // finalizers run on a later turn
  after = liveObjects()!;
}
console.log(JSON.stringify({ base, held, after }));
