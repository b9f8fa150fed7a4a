/**
 * Child of tests/ffi-rdma-absent.test.ts: loads DOCA from DOCA_LIB_DIR (a folder without libdoca_rdma), uses DMA,
 * then tries RDMA; prints one JSON line with what happened.
 */
import process from "node:process";
import { Access, BufInventory, Dma, DocaError, loadDoca, Mmap, NativeMemory, openDevice, ProgressEngine, Rdma } from "../../mod.ts";

const info = loadDoca();
using dev = openDevice();
using pe = new ProgressEngine();
using mem = NativeMemory.alloc(8192);
mem.bytes.fill(9, 0, 4096);
using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using inv = new BufInventory(2);
await using dma = new Dma(dev, pe);
await dma.memcpy(inv.bufByData(map, mem.address, 4096), inv.bufByAddr(map, mem.address + 4096, 4096));
const copied = mem.bytes[8191] === 9;
let rdmaError = "";
try {
  await Rdma.create(dev, pe);
} catch (e) {
  rdmaError = e instanceof DocaError ? `${e.docaName} ${e.fn}` : String(e);
}
process.stdout.write(JSON.stringify({ rdmaFile: info.files.rdma ?? null, copied, rdmaError, caps: dev.info.caps.rdma ?? null }) + "\n");
