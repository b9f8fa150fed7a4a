/**
 * The completion path's guarantees, checked in a process of its own so that the environment (DOCA_TS_JS_CALLBACKS)
 * decides the path before DOCA loads: successes deliver the bytes, a failing copy rejects with DOCA's status, a stop
 * flushes in-flight copies (each rejects), task reuse re-arms with other buffers, and nothing leaks. Prints one JSON
 * line for tests/ffi-completion-ring.test.ts.
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import "./sim-env.ts";
import { HOST_PCI, pattern } from "./sim-env.ts";
import { Access, BufInventory, Device, Dma, DocaError, liveObjects, Mmap, NativeMemory, ProgressEngine } from "../../mod.ts";
import { completionRing, RING_CAPACITY } from "../../ffi/completion-ring.ts";

const before = liveObjects();
const dev = Device.open(HOST_PCI);
const pe = new ProgressEngine();
const size = 64 * 1024;
const src = NativeMemory.alloc(size), dst = NativeMemory.alloc(size), ro = NativeMemory.alloc(size);
src.bytes.set(pattern(size));
const srcMap = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
const dstMap = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
const roMap = Mmap.create({ memory: ro, permissions: Access.LOCAL_READ_ONLY, devices: [dev] });
const inv = new BufInventory(1024);
const chunk = 64, chunks = size / chunk;

// 1. Successes: every 64-byte chunk through a pool of 16 tasks (each task reused, re-armed with other buffers).
const dma = new Dma(dev, pe, { maxTasks: 16 });
const copies: Promise<void>[] = [];
const bufs = [];
for (let i = 0; i < chunks; i++) {
  const s = inv.bufByData(srcMap, src.address + i * chunk, chunk), d = inv.bufByAddr(dstMap, dst.address + i * chunk, chunk);
  bufs.push(s, d);
  copies.push(dma.memcpy(s, d));
  if (bufs.length >= 1000) {
    await Promise.all(copies.splice(0));
    for (const b of bufs.splice(0)) b.close();
  }
}
await Promise.all(copies);
for (const b of bufs.splice(0)) b.close();
const copied = Buffer.compare(Buffer.from(dst.bytes), Buffer.from(src.bytes)) === 0;

// 2. Errors: a copy into read-only memory rejects with DOCA's status, between two successes on the same tasks.
const errSrc = inv.bufByData(srcMap, src.address, 4096), errDst = inv.bufByAddr(roMap, ro.address, 4096);
const okDst = inv.bufByAddr(dstMap, dst.address, 4096);
const [first, failed, after] = await Promise.allSettled([dma.memcpy(errSrc, okDst), dma.memcpy(errSrc, errDst), dma.memcpy(errSrc, inv.bufByAddr(dstMap, dst.address + 4096, 4096))]);
const errorName = failed.status === "rejected" && failed.reason instanceof DocaError ? failed.reason.docaName : String(failed.status);
const errorFn = failed.status === "rejected" && failed.reason instanceof DocaError ? failed.reason.fn : "";

// 3. Flush on stop: copies in flight when close() runs all reject (none is lost, none hangs).
const flushing = Array.from({ length: 16 }, (_, i) => dma.memcpy(inv.bufByData(srcMap, src.address + i * 4096, 4096), inv.bufByAddr(dstMap, dst.address + i * 4096, 4096)));
dma.close();
const flushed = await Promise.allSettled(flushing);

// 4. memcpyBatch (native submit loop where available): 3 rounds over 96 pairs on 64 tasks, destinations reset by the
// batch, each round's pairs shifted so every reused task is re-armed with other buffers; every byte checked.
const dma3 = new Dma(dev, pe, { maxTasks: 64 });
const pairs: [ReturnType<typeof inv.bufByData>, ReturnType<typeof inv.bufByAddr>][] = [];
for (let i = 0; i < 96; i++) pairs.push([inv.bufByData(srcMap, src.address + i * chunk, chunk), inv.bufByAddr(dstMap, dst.address + i * chunk, chunk)]);
let batchCopied = true;
for (let round = 0; round < 3; round++) {
  dst.bytes.fill(0);
  const shifted = pairs.map((_, i) => pairs[(i + round * 7) % pairs.length]);
  await dma3.memcpyBatch(shifted, { resetDestinations: true });
  batchCopied &&= Buffer.compare(Buffer.from(dst.bytes.subarray(0, 96 * chunk)), Buffer.from(src.bytes.subarray(0, 96 * chunk))) === 0;
}
for (const [s, d] of pairs) s.close(), d.close();
dma3.close();

// 5. memcpyBatch with a failing member rejects once with that status; the others complete.
const dma2 = new Dma(dev, pe, { maxTasks: 8 });
let batchError = "";
try {
  await dma2.memcpyBatch([[errSrc, inv.bufByAddr(dstMap, dst.address, 4096)], [errSrc, inv.bufByAddr(roMap, ro.address + 4096, 4096)]]);
} catch (e) {
  batchError = e instanceof DocaError ? e.docaName : String(e);
}
dma2.close();

// 6. Ring reservations: a context that takes the whole ring leaves none for the next (JS callbacks, still correct);
// closing it returns its entries.
const whole = new Dma(dev, pe, { maxTasks: RING_CAPACITY });
const overflow = new Dma(dev, pe, { maxTasks: 4 });
const sources = [whole.completionSource, overflow.completionSource];
await overflow.memcpy(inv.bufByData(srcMap, src.address, 64), inv.bufByAddr(dstMap, dst.address, 64));
await overflow.close();
await whole.close();
const again = new Dma(dev, pe, { maxTasks: RING_CAPACITY });
sources.push(again.completionSource);
await again.close();

inv.close();
for (const r of [roMap, dstMap, srcMap, ro, dst, src, pe, dev]) r.close();
process.stdout.write(JSON.stringify({
  ring: completionRing() !== undefined,
  copied,
  batchCopied,
  first: first.status,
  errorName,
  errorFn,
  after: after.status,
  flushed: flushed.map((r) => (r.status === "rejected" ? (r.reason instanceof DocaError ? r.reason.docaName : "other") : "fulfilled")),
  batchError,
  sources,
  leaked: before === undefined ? 0 : liveObjects()! - before,
}) + "\n");
