/**
 * Child of tests/ffi-rdma-absent.test.ts: loads DOCA from DOCA_LIB_DIR (a folder without libdoca_rdma), uses DMA,
 * then tries RDMA, Compress and Sha; prints one JSON line with what happened.
 */
import process from "node:process";
import { Access, BufInventory, Compress, Dma, DocaError, loadDoca, Mmap, NativeMemory, openDevice, ProgressEngine, Rdma, Sha } from "../../mod.ts";

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
// libdoca_compress and libdoca_sha are optional the same way: absent, their contexts say NOT_SUPPORTED
const accelErrors: string[] = [];
for (const open of [() => Compress.open(dev, pe), () => Sha.open(dev, pe)]) {
  try {
    await (await open()).close();
    accelErrors.push("opened");
  } catch (e) {
    accelErrors.push(e instanceof DocaError ? `${e.docaName} ${e.fn}` : String(e));
  }
}
const accelFiles = [info.files.compress ?? null, info.files.sha ?? null];
process.stdout.write(JSON.stringify({ rdmaFile: info.files.rdma ?? null, copied, rdmaError, caps: dev.info.caps.rdma ?? null, accelErrors, accelFiles }) + "\n");
