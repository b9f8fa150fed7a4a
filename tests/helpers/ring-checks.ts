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
import { completionRing, RING_CAPACITY } from "../../ffi/native/completion-ring.ts";

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

// 4b. The first thing a fresh engine does is a batch: the pump it starts runs progress at once, and once the batch
// settled nothing keeps it running (a batch counted in flight after that first progress left it spinning forever).
const freshPe = new ProgressEngine();
const freshDma = new Dma(dev, freshPe, { maxTasks: 8 });
const firstPairs: [ReturnType<typeof inv.bufByData>, ReturnType<typeof inv.bufByAddr>][] = [0, 1].map((i) => [
  inv.bufByData(srcMap, src.address + i * chunk, chunk),
  inv.bufByAddr(dstMap, dst.address + i * chunk, chunk),
]);
await freshDma.memcpyBatch(firstPairs);
const idleAfterBatch = freshPe.outstanding;
for (const [s, d] of firstPairs) s.close(), d.close();
await freshDma.close();
freshPe.close();

// 5. memcpyBatch with a failing member rejects once with that status; the others complete.
const dma2 = new Dma(dev, pe, { maxTasks: 8 });
let batchError = "";
try {
  await dma2.memcpyBatch([[errSrc, inv.bufByAddr(dstMap, dst.address, 4096)], [errSrc, inv.bufByAddr(roMap, ro.address + 4096, 4096)]]);
} catch (e) {
  batchError = e instanceof DocaError ? e.docaName : String(e);
}
dma2.close();

// 6. Batches as counted groups (ring) or per-task completions (JS): a batch over three times the tasks with a failing
// member in the middle rejects once with its status after every other pair copied; the same tasks then serve a
// clean batch, two batches and single copies at once, and a batch in flight when close() runs rejects once.
const dma4 = new Dma(dev, pe, { maxTasks: 8 });
const batchCounting = dma4.batchCompletion;
const group = Array.from({ length: 24 }, (_, i): [ReturnType<typeof inv.bufByData>, ReturnType<typeof inv.bufByAddr>] => [
  inv.bufByData(srcMap, src.address + i * chunk, chunk),
  inv.bufByAddr(i === 11 ? roMap : dstMap, (i === 11 ? ro.address : dst.address) + i * chunk, chunk),
]);
dst.bytes.fill(0);
const groupResult = await Promise.allSettled([dma4.memcpyBatch(group)]);
const groupError = groupResult[0].status === "rejected" && groupResult[0].reason instanceof DocaError ? groupResult[0].reason.docaName : groupResult[0].status;
const sameBytes = (from: number, to: number) => Buffer.compare(Buffer.from(dst.bytes.subarray(from, to)), Buffer.from(src.bytes.subarray(from, to))) === 0;
let groupChecks = sameBytes(0, 11 * chunk) && sameBytes(12 * chunk, 24 * chunk) && dma4.inflight === 0;
const clean = group.filter((_, i) => i !== 11);
dst.bytes.fill(0);
await dma4.memcpyBatch(clean, { resetDestinations: true });
groupChecks &&= sameBytes(0, 11 * chunk) && sameBytes(12 * chunk, 24 * chunk);
dst.bytes.fill(0);
const together = await Promise.allSettled([
  dma4.memcpyBatch(clean.slice(0, 6), { resetDestinations: true }),
  dma4.memcpyBatch(clean.slice(6, 15), { resetDestinations: true }),
  ...clean.slice(15).map(([s, d]) => (d.resetData(), dma4.memcpy(s, d))),
]);
groupChecks &&= together.every((r) => r.status === "fulfilled") && sameBytes(0, 11 * chunk) && sameBytes(12 * chunk, 24 * chunk);
groupChecks &&= dma4.inflight === 0;
const closing = dma4.memcpyBatch(clean.slice(0, 8), { resetDestinations: true }); // all in flight
await dma4.close();
const closedBatch = await Promise.allSettled([closing]);
const batchAtClose = closedBatch[0].status === "rejected" ? (closedBatch[0].reason instanceof DocaError ? closedBatch[0].reason.docaName : String(closedBatch[0].reason)) : "fulfilled";
for (const [s, d] of group) s.close(), d.close();

// 7. Repeated batches (their tasks re-submitted as they are armed): two Dmas alternating rounds over their own
// pairs, a pairs array changed in place between rounds (one pair replaced, one pair's destination swapped), and
// a Buf closed elsewhere between rounds; every byte checked after every round.
const half = 32 * chunk;
const dmaA = new Dma(dev, pe, { maxTasks: 32 }), dmaB = new Dma(dev, pe, { maxTasks: 32 });
const own = (first: number): [ReturnType<typeof inv.bufByData>, ReturnType<typeof inv.bufByAddr>][] =>
  Array.from({ length: 16 }, (_, i) => [inv.bufByData(srcMap, src.address + (first + i) * chunk, chunk), inv.bufByAddr(dstMap, dst.address + (first + i) * chunk, chunk)]);
const pairsA = own(0), pairsB = own(16), spare = own(32);
let repeatChecks = true;
for (let round = 0; round < 6; round++) {
  if (round === 2) pairsA[3] = spare[3]; // replaced: chunk 35 instead of 3
  if (round === 3) pairsB[5] = [pairsB[5][0], spare[5][1]]; // destination of pair 5: chunk 37 instead of 21
  if (round === 4) spare[0][0].close(); // some Buf closed between rounds
  dst.bytes.fill(0);
  // B resets its destinations itself: nothing of B's but its submit touches the shared native batch columns.
  const runB = () => {
    for (const [, d] of pairsB) d.resetData();
    return dmaB.memcpyBatch(pairsB);
  };
  await Promise.all([dmaA.memcpyBatch(pairsA, { resetDestinations: true }), runB()]);
  await dmaA.memcpyBatch(pairsA, { resetDestinations: true });
  await runB();
  const expect = new Uint8Array(half + 16 * chunk);
  for (const [s, d] of [...pairsA, ...pairsB]) {
    const from = s.address - src.address, to = d.address - dst.address;
    expect.set(src.bytes.subarray(from, from + chunk), to);
  }
  repeatChecks &&= Buffer.compare(Buffer.from(dst.bytes.subarray(0, expect.length)), Buffer.from(expect)) === 0;
  if (round === 4) {
    // One copy on its own between two rounds: it takes (and re-arms) one of the batch's tasks.
    spare[1][1].resetData();
    await dmaA.memcpy(spare[1][0], spare[1][1]);
  }
}
repeatChecks &&= dmaA.inflight === 0 && dmaB.inflight === 0;
// A Buf of the repeated batch closed: the next round refuses it (never hands DOCA a released buffer).
pairsA[7][1].close();
let closedInBatch = "accepted";
try {
  await dmaA.memcpyBatch(pairsA, { resetDestinations: true });
} catch (e) {
  closedInBatch = e instanceof Error ? e.message : String(e);
}
for (const [s, d] of [...pairsA, ...pairsB, ...spare]) s.close(), d.close();
await dmaA.close();
await dmaB.close();

// 8. Ring reservations: a context that takes the whole ring leaves none for the next (JS callbacks, still correct);
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
  batchCounting,
  groupError,
  groupChecks,
  batchAtClose,
  repeatChecks,
  closedInBatch,
  idleAfterBatch,
  sources,
  leaked: before === undefined ? 0 : liveObjects()! - before,
}) + "\n");
