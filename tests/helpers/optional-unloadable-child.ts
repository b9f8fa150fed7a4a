/**
 * Child of tests/ffi-optional-unloadable.test.ts: loads DOCA from DOCA_LIB_DIR (a folder whose optional libraries
 * are present but broken, or whose libdoca_dma is), uses DMA, then tries RDMA and SHA; prints one JSON line with what
 * happened, or the load error.
 */
import process from "node:process";
import { AesGcm, Compress, DocaError, loadDoca, openDevice, ProgressEngine, Rdma, Sha } from "../../mod.ts";
import { doca } from "../../ffi/native/library.ts";
import { localDmaCopy } from "./local-dma-copy.ts";

let info;
try {
  info = loadDoca();
} catch (e) {
  process.stdout.write(JSON.stringify({ loadError: (e as Error).message }) + "\n");
  process.exit(0);
}
using dev = openDevice();
using pe = new ProgressEngine();
const copied = await localDmaCopy(dev, pe);
const errors: string[] = [];
for (const open of [() => Rdma.create(dev, pe), () => Sha.open(dev, pe)]) {
  try {
    await (await open()).close();
    errors.push("opened");
  } catch (e) {
    errors.push(e instanceof DocaError ? `${e.docaName} ${e.message}` : String(e));
  }
}
process.stdout.write(JSON.stringify({
  copied,
  files: info.files,
  unloadable: info.optionalUnloadable,
  hasRdmaCreate: doca().has("doca_rdma_create"),
  hasShaCreate: doca().has("doca_sha_create"),
  rdmaCreateMissing: info.optionalMissing.includes("doca_rdma_create"),
  errors,
  // the reasons the capability reports give: the file that could not be loaded, not "this DOCA has no …"
  missingReasons: [Compress.caps(dev).missingReason, Sha.caps(dev).missingReason, AesGcm.unavailableReason()],
}) + "\n");
