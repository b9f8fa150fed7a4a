/**
 * A peer of rdma-copy that lies (tests/tasks-rdma-copy.test.ts), speaking the protocol through tasks/rdma/link.ts:
 *
 *   lying-rdma-peer.ts receipt PORT   receiver: takes a write-mode copy, then answers DONE with a wrong checksum
 *   lying-rdma-peer.ts chunk PORT     sender: offers 3 chunks, announces the second one first
 *   lying-rdma-peer.ts window PORT    receiver: describes a window smaller than the offer asked for
 *   lying-rdma-peer.ts abort-text PORT     receiver: gives up with a reason that forges a line ("\nerror: …")
 *   lying-rdma-peer.ts abort-object PORT   receiver: gives up with a reason that is not text
 *   lying-rdma-peer.ts unreadable PORT     sender: offers read mode from a window the receiver may not read
 *
 * It listens with RDMA CM on 127.0.0.1:PORT, prints "listening" on stderr, and exits 0 after lying.
 */
import process from "node:process";
import { Buffer } from "node:buffer";
import { Access, BufInventory, Mmap, NativeMemory, ProgressEngine } from "../../mod.ts";
import { Link, openRdmaDevice } from "../../tasks/rdma/link.ts";

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
try {
  if (lie === "receipt" || lie === "window") {
    const offer = await channel.recv("offer", "OFFER");
    const need = (offer.slots as number) * (offer.chunk as number);
    await channel.send({ type: "ACCEPT", window: describe(lie === "window" ? Math.max(1, need - 1) : need) });
    for (;;) {
      const m = await channel.recv("chunks", "CHUNK", "DONE");
      if (m.type === "DONE") break;
      await channel.send({ type: "FREE", slot: m.slot });
    }
    await channel.send({ type: "RECEIPT", sha256: "0".repeat(64) });
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
  } else if (lie === "chunk") {
    await channel.send({ type: "OFFER", v: 1, size: 3000, chunk: 1000, slots: 3, mode: "read", window: describe(3000) });
    await channel.recv("accept", "ACCEPT");
    await channel.send({ type: "CHUNK", slot: 1, offset: 1000, length: 1000 });
    await channel.recv("the receiver's verdict").catch(() => {});
  }
} finally {
  await link.close();
}
