/**
 * doca-ts in the place of NVIDIA's rdma_write_requester or rdma_send (tests/sim-nvidia-rdma.test.ts): it talks to
 * their rdma_write_responder / rdma_receive through the same descriptor files and the same "press enter" step, with
 * doca-ts's own API (Rdma, Mmap.fromExport, write, send).
 *
 *   nvidia-rdma-peer.ts write|send -ld LOCAL -re REMOTE -m RESOURCE
 *
 * Writes (or sends) the NUL-terminated text "Hi from doca-ts" and exits 0 after printing "doca-ts peer: done".
 */
import process from "node:process";
import { readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Access, BufInventory, Mmap, NativeMemory, ProgressEngine, Rdma } from "../../../mod.ts";
import { openRdmaDevice } from "../../../tasks/rdma/link.ts";

const [mode, ...rest] = process.argv.slice(2);
const path = (flag: string): string => {
  const at = rest.indexOf(flag);
  if (at < 0 || !rest[at + 1]) throw new Error(`nvidia-rdma-peer: ${flag} PATH is required`);
  return rest[at + 1];
};
const TEXT = "Hi from doca-ts";

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
using device = openRdmaDevice(undefined);
using pe = new ProgressEngine();
const rdma = await Rdma.create(device, pe, { permissions: Access.LOCAL_READ_WRITE });
try {
  const { connection, details } = rdma.exportConnection();
  writeFileSync(path("-ld"), details);
  process.stderr.write(`doca-ts peer: copy ${path("-ld")} to the other side, its files here, and then press enter\n`);
  await lines.next();
  connection.connect(readFileSync(path("-re")));

  using memory = NativeMemory.alloc(4096);
  using mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(4);
  const { written } = new TextEncoder().encodeInto(`${TEXT}\0`, memory.bytes);
  using src = inventory.bufByData(mmap, memory.address, written);
  if (mode === "write") {
    using remote = Mmap.fromExport(readFileSync(path("-m")), device);
    using dst = inventory.bufByAddr(remote, remote.range.address, written);
    await connection.write(src, dst);
  } else if (mode === "send") {
    await connection.send(src);
  } else {
    throw new Error(`nvidia-rdma-peer: unknown mode ${mode}`);
  }
  process.stderr.write(`doca-ts peer: ${mode} of "${TEXT}" done\n`);
} finally {
  await rdma.close();
}
process.exit(0);
