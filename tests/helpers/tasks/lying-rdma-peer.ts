/**
 * A peer of rdma-copy that lies (tests/tasks-rdma-copy.test.ts), speaking the protocol through tasks/rdma/link.ts:
 *
 *   lying-rdma-peer.ts receipt PORT   receiver: takes a write-mode copy, then answers DONE with a wrong checksum
 *   lying-rdma-peer.ts chunk PORT     sender: offers 3 chunks, announces the second one first
 *   lying-rdma-peer.ts huge-offer PORT  sender: offers a file of 2^60 bytes (beyond 2^53: refused, the size shown exactly)
 *   lying-rdma-peer.ts window PORT    receiver: describes a window smaller than the offer asked for
 *   lying-rdma-peer.ts slow-receipt PORT  receiver: takes a write-mode copy, prints "checksum in" on DONE, and sends
 *                                     the matching receipt 400 ms later (a commit that takes a moment)
 *   lying-rdma-peer.ts abort-text PORT     receiver: gives up with a reason that forges a line ("\nerror: …")
 *   lying-rdma-peer.ts abort-object PORT   receiver: gives up with a reason that is not text
 *   lying-rdma-peer.ts unreadable PORT     sender: offers read mode from a window the receiver may not read
 *   lying-rdma-peer.ts abort-after-done PORT  sender, read mode: an honest 3000-byte copy (byte i = i & 0xff), then
 *                                          right after DONE an ABORT and the connection closed (a sender stopped
 *                                          while the receiver commits)
 *   lying-rdma-peer.ts abort-ahead PORT    as abort-after-done, but the ABORT (its sequence number after DONE's)
 *                                          leaves first and DONE 200 ms later: the receiver's receives complete
 *                                          in the other order (DOCA promises none among them)
 *   lying-rdma-peer.ts rewrite PORT        sender, write mode: writes each chunk honestly, announces it, then keeps
 *                                          overwriting the receiver's slot with other bytes until the slot is freed;
 *                                          DONE carries the honest file's SHA-256; prints {rewrites, sha256, verdict}
 *
 * It listens with RDMA CM on 127.0.0.1:PORT, prints "listening" on stderr, and exits 0 after lying.
 */
import process from "node:process";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { Access, BufInventory, Mmap, NativeMemory, ProgressEngine } from "../../../mod.ts";
import { Link, openRdmaDevice } from "../../../tasks/rdma/link.ts";

/** The rewrite lie's file: REWRITE_CHUNKS chunks of REWRITE_CHUNK bytes, byte i = (i * 7 + 3) & 0xff. */
const REWRITE_CHUNK = 4 * 1024 * 1024;
const REWRITE_CHUNKS = 16;
function rewriteHonestBytes(): Uint8Array {
  return Uint8Array.from({ length: REWRITE_CHUNK * REWRITE_CHUNKS }, (_, i) => (i * 7 + 3) & 0xff);
}

const [lie, portText] = process.argv.slice(2);
const port = Number(portText);
using device = openRdmaDevice(undefined);
using pe = new ProgressEngine();
const link = await Link.open({
  device,
  pe,
  endpoint: { listen: true, port },
  exchange: "cm",
  timeoutMs: 60_000,
  permissions: lie === "unreadable" ? Access.RDMA_WRITE : Access.RDMA_WRITE | Access.RDMA_READ,
  onListening: () => process.stderr.write("listening\n"),
});
const { channel } = link;
using memory = NativeMemory.alloc(1 << 20);
using mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE | Access.RDMA_WRITE | Access.RDMA_READ, devices: [device] });
using _inv = new BufInventory(4);
const describe = (length: number) => ({
  desc: Buffer.from(mmap.exportRdma(device)).toString("base64"),
  address: mmap.range.address,
  length,
});
/** An honest 3000-byte copy in read mode (byte i = i & 0xff, three 1000-byte chunks), up to the last FREE. */
async function honestReadCopy(): Promise<void> {
  memory.bytes.set(Uint8Array.from({ length: 3000 }, (_, i) => i & 0xff));
  await channel.send({ type: "OFFER", v: 1, size: 3000, chunk: 1000, slots: 3, mode: "read", window: describe(3000) });
  await channel.recv("accept", "ACCEPT");
  for (let slot = 0; slot < 3; slot++) await channel.send({ type: "CHUNK", slot, offset: slot * 1000, length: 1000 });
  for (let k = 0; k < 3; k++) await channel.recv("a freed slot", "FREE");
}

try {
  if (lie === "receipt" || lie === "window" || lie === "slow-receipt") {
    const offer = await channel.recv("offer", "OFFER");
    const need = (offer.slots as number) * (offer.chunk as number);
    await channel.send({ type: "ACCEPT", window: describe(lie === "window" ? Math.max(1, need - 1) : need) });
    for (;;) {
      const m = await channel.recv("chunks", "CHUNK", "DONE");
      if (m.type === "DONE") {
        if (lie === "slow-receipt") {
          process.stderr.write("checksum in\n");
          await new Promise((r) => setTimeout(r, 400));
          await channel.send({ type: "RECEIPT", sha256: m.sha256 });
          await new Promise((r) => setTimeout(r, 1000)); // let it arrive before the connection goes
        }
        break;
      }
      await channel.send({ type: "FREE", slot: m.slot });
    }
    if (lie !== "slow-receipt") await channel.send({ type: "RECEIPT", sha256: "0".repeat(64) });
  } else if (lie === "abort-text" || lie === "abort-object") {
    await channel.recv("offer", "OFFER");
    const reason = lie === "abort-text" ? "disk full\nrdma-copy: sent FILE, committed by the receiver" : { toString: "x" };
    await channel.send({ type: "ABORT", reason });
    await new Promise((r) => setTimeout(r, 1000)); // let it arrive before the connection goes
  } else if (lie === "unreadable") {
    // The window is exported, but this context grants no RDMA read: every read of it is refused
    await channel.send({ type: "OFFER", v: 1, size: 3000, chunk: 1000, slots: 3, mode: "read", window: describe(3000) });
    await channel.recv("accept", "ACCEPT");
    await channel.send({ type: "CHUNK", slot: 0, offset: 0, length: 1000 });
    await channel.recv("the receiver's verdict").catch(() => {});
  } else if (lie === "abort-ahead") {
    await honestReadCopy();
    // The channel numbered OFFER 0 and the CHUNKs 1-3: DONE is 4, the ABORT after it 5, sent here in the other order
    const raw = async (message: Record<string, unknown>, at: number) => {
      const bytes = new TextEncoder().encode(JSON.stringify(message));
      memory.bytes.set(bytes, at);
      await link.connection.send(_inv.bufByData(mmap, memory.address + at, bytes.length));
    };
    const sha256 = createHash("sha256").update(memory.bytes.subarray(0, 3000)).digest("hex");
    await raw({ type: "ABORT", reason: "interrupted (SIGINT)", seq: 5 }, 8192);
    await new Promise((r) => setTimeout(r, 200));
    await raw({ type: "DONE", sha256, seq: 4 }, 12288);
    await new Promise((r) => setTimeout(r, 1000)); // let it arrive before the connection goes
  } else if (lie === "abort-after-done") {
    await honestReadCopy();
    await channel.send({ type: "DONE", sha256: createHash("sha256").update(memory.bytes.subarray(0, 3000)).digest("hex") });
    await channel.abort("interrupted (SIGINT)");
  } else if (lie === "rewrite") {
    await rewriteAfterAnnouncing();
  } else if (lie === "huge-offer") {
    await channel.send({ type: "OFFER", v: 1, size: 2 ** 60, chunk: 1000, slots: 3, mode: "write" });
    await channel.recv("the receiver's verdict").catch(() => {});
  } else if (lie === "chunk") {
    await channel.send({ type: "OFFER", v: 1, size: 3000, chunk: 1000, slots: 3, mode: "read", window: describe(3000) });
    await channel.recv("accept", "ACCEPT");
    await channel.send({ type: "CHUNK", slot: 1, offset: 1000, length: 1000 });
    await channel.recv("the receiver's verdict").catch(() => {});
  }
} finally {
  await link.close();
}

/**
 * The lying writer: chunks are written and announced honestly, as many as the window holds (the receiver finishes
 * the oldest once the window is full), then the last 4 KiB of the oldest chunk's slot are overwritten once, a while
 * after the next announcement: late enough that the receiver has checked the chunk, early enough that it may still
 * be reading it again to store it (a receiver that reads the window twice then commits bytes it never checked). The
 * delay is a fraction of the announcement-to-FREE cycle measured on the first chunks, swept from chunk to chunk.
 */
async function rewriteAfterAnnouncing(): Promise<void> {
  const honest = rewriteHonestBytes();
  const size = honest.length, chunk = REWRITE_CHUNK, slots = 2, tail = 4096;
  await channel.send({ type: "OFFER", v: 1, size, chunk, slots, mode: "write" });
  const accept = await channel.recv("accept", "ACCEPT");
  const w = accept.window as { desc: string };
  using remote = Mmap.fromExport(new Uint8Array(Buffer.from(w.desc, "base64")), device);
  // [0, chunk): the honest chunk; then `tail` foreign bytes
  using source = NativeMemory.alloc(chunk + tail);
  source.bytes.fill(0xee, chunk);
  using sourceMap = Mmap.create({ memory: source, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(2 + 2 * slots);
  const honestBuf = inventory.bufByData(sourceMap, source.address, chunk);
  const foreignBuf = inventory.bufByData(sourceMap, source.address + chunk, tail);
  const slotBufs = Array.from({ length: slots }, (_, slot) => inventory.bufByData(remote, remote.range.address + slot * chunk, chunk));
  const tailBufs = Array.from({ length: slots }, (_, slot) => inventory.bufByData(remote, remote.range.address + (slot + 1) * chunk - tail, tail));
  const write = (from: typeof honestBuf, to: typeof honestBuf) => (to.setData(to.address, 0), link.connection.write(from, to));
  const free = Array.from({ length: slots }, (_, slot) => slot);
  const fifo: number[] = []; // announced slots, oldest first
  const cycles: number[] = [];
  const fractions = [0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];
  let rewrites = 0, announcedAt = 0;
  let attack: Promise<void> = Promise.resolve();
  for (let k = 0; k < REWRITE_CHUNKS; k++) {
    while (free.length === 0) {
      const m = await channel.recv("the receiver to free a slot", "FREE");
      await attack; // a rewrite still to come would land in the slot refilled next
      cycles.push(performance.now() - announcedAt);
      fifo.splice(fifo.indexOf(m.slot as number), 1);
      free.push(m.slot as number);
    }
    const slot = free.shift()!;
    source.bytes.set(honest.subarray(k * chunk, (k + 1) * chunk));
    await write(honestBuf, slotBufs[slot]);
    await channel.send({ type: "CHUNK", slot, offset: k * chunk, length: chunk });
    announcedAt = performance.now();
    fifo.push(slot);
    if (fifo.length === slots && cycles.length >= 3) {
      const cycle = [...cycles.slice(0, 3)].sort((a, b) => a - b)[1]; // the median of the unattacked cycles
      const until = announcedAt + cycle * fractions[k % fractions.length];
      while (performance.now() < until) { /* a timer cannot wait this precisely */ }
      attack = write(foreignBuf, tailBufs[fifo[0]]).then(() => void rewrites++, () => {});
    }
  }
  await attack;
  const sha256 = createHash("sha256").update(honest).digest("hex");
  await channel.send({ type: "DONE", sha256 });
  let verdict = "ERROR";
  for (;;) {
    const m = await channel.recv("the receiver's verdict").catch(() => undefined);
    if (m?.type === "FREE") continue;
    verdict = m?.type ?? verdict;
    break;
  }
  process.stdout.write(JSON.stringify({ rewrites, sha256, verdict, cycles: cycles.slice(0, 3) }) + "\n");
}
