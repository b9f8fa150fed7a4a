/// <reference lib="deno.ns" />
/**
 * Child of tests/ffi-lazy-binding.test.ts (Deno only): counts the symbols each Deno.dlopen declares while DOCA
 * loads, while a device opens, and while one DMA copy runs; prints one JSON line.
 */
import process from "node:process";

const declared = { total: 0, names: [] as string[] };
const dlopen = Deno.dlopen;
// deno-lint-ignore no-explicit-any
(Deno as any).dlopen = (path: string | URL, symbols: Record<string, Deno.ForeignFunction>) => {
  for (const [key, def] of Object.entries(symbols)) {
    declared.total++;
    declared.names.push(String(def.name ?? key));
  }
  return dlopen(path, symbols);
};

const { loadDoca, openDevice, ProgressEngine } = await import("../../mod.ts");
const { localDmaCopy } = await import("./local-dma-copy.ts");
const info = loadDoca();
const atLoad = declared.names.filter((n) => n.startsWith("doca_"));
using dev = openDevice();
using pe = new ProgressEngine();
const copied = await localDmaCopy(dev, pe);
const afterCopy = declared.names.filter((n) => n.startsWith("doca_"));
process.stdout.write(JSON.stringify({
  atLoad,
  afterCopy: afterCopy.length,
  rdmaDeclared: afterCopy.filter((n) => n.startsWith("doca_rdma_")).length,
  copied,
  optionalMissing: info.optionalMissing.length,
  version: info.version,
  hasRdmaCreate: info.files.rdma ? true : null,
}) + "\n");
