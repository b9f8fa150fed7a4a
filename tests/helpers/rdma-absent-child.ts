/**
 * Child of tests/ffi-rdma-absent.test.ts: loads DOCA from DOCA_LIB_DIR (a folder without libdoca_rdma), uses DMA,
 * then tries RDMA, Compress and Sha; prints one JSON line with what happened.
 */
import process from "node:process";
import { Compress, DocaError, loadDoca, openDevice, ProgressEngine, Rdma, Sha } from "../../mod.ts";
import { localDmaCopy } from "./local-dma-copy.ts";

const info = loadDoca();
using dev = openDevice();
using pe = new ProgressEngine();
const copied = await localDmaCopy(dev, pe);
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
