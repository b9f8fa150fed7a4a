/**
 * Run by tests/fault-hostile.test.ts under each runtime: one call that needs the software device's configuration or
 * its runtime folder, with DOCA_SIM_CONFIG / DOCA_SIM_DIR set by the test. Prints one JSON line
 * {"case", "threw", "message", "result"} and exits 0; a crash or a hang shows as a signal or a missing line.
 *
 *   devices        listDevices(): every device with its names and caps (configuration input)
 *   comch-server   (DPU side) ComchServer.start on the representor of 0000:b1:00.1 (runtime folder)
 *   comch-client   (host side) ComchClient.connect with a 2 s timeout (runtime folder)
 *   forge          (DPU side) Mmap.fromExport of descriptors forged in TypeScript: naming this process (before and
 *                  after it exported; ranges over its own memory) and its parent, which never exported; each must
 *                  throw DOCA_ERROR_NOT_PERMITTED; the genuine descriptor must still import with its exact range
 */
import process from "node:process";
import { readFileSync } from "node:fs";
import { getRandomValues } from "node:crypto";
import { Access, ComchClient, ComchServer, Device, listDevices, Mmap, NativeMemory, ProgressEngine } from "../../../mod.ts";

const HOST_PCI = "0000:b1:00.1";
const DPU_PCI = "0000:03:00.1";

const cases: Record<string, () => unknown> = {
  devices: () => listDevices(),
  "comch-server": async () => {
    const dev = Device.open(DPU_PCI);
    const rep = dev.openRepresentor(HOST_PCI);
    const pe = new ProgressEngine();
    try {
      const server = ComchServer.start({ device: dev, rep, name: "hostile-probe", pe });
      await server.close();
      return "started";
    } finally {
      pe.close();
      rep.close();
      dev.close();
    }
  },
  "comch-client": async () => {
    const dev = Device.open(HOST_PCI);
    const pe = new ProgressEngine();
    try {
      const client = await ComchClient.connect({ device: dev, name: "hostile-probe", pe, timeoutMs: 2000 });
      await client.close();
      return "connected";
    } finally {
      pe.close();
      dev.close();
    }
  },
};

/** Field 22 of /proc/PID/stat: the process's start time in clock ticks after boot. */
function startTime(pid: number): bigint {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  return BigInt(text.slice(text.lastIndexOf(")") + 2).split(" ")[19]);
}

/** The software device's descriptor, version 2 (sim/src/common/registry.h), little-endian like this machine. */
interface Desc {
  pid: number;
  index: number;
  nonce: bigint;
  startTime: bigint;
  key: Uint8Array;
  base: bigint;
  len: bigint;
  permissions: number;
  registryFd: number;
  pci: string;
}

function encode(x: Desc): Uint8Array {
  const b = new Uint8Array(88);
  const v = new DataView(b.buffer);
  v.setUint32(0, 0x58455344, true);
  v.setUint16(4, 2, true);
  v.setUint16(6, 88, true);
  v.setInt32(8, x.pid, true);
  v.setUint32(12, x.index, true);
  v.setBigUint64(16, x.nonce, true);
  v.setBigUint64(24, x.startTime, true);
  b.set(x.key, 32);
  v.setBigUint64(48, x.base, true);
  v.setBigUint64(56, x.len, true);
  v.setUint32(64, x.permissions, true);
  v.setInt32(68, x.registryFd, true);
  b.set(new TextEncoder().encode(x.pci), 72);
  return b;
}

function decode(b: Uint8Array): Desc {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return {
    pid: v.getInt32(8, true),
    index: v.getUint32(12, true),
    nonce: v.getBigUint64(16, true),
    startTime: v.getBigUint64(24, true),
    key: b.slice(32, 48),
    base: v.getBigUint64(48, true),
    len: v.getBigUint64(56, true),
    permissions: v.getUint32(64, true),
    registryFd: v.getInt32(68, true),
    pci: new TextDecoder().decode(b.slice(72, 88)).replace(/\0+$/, ""),
  };
}

function forge(): unknown {
  const dev = Device.open(DPU_PCI);
  const mem = NativeMemory.alloc(65536);
  let refused = 0;
  const refuse = (desc: Uint8Array, what: string) => {
    try {
      Mmap.fromExport(desc, dev).close();
    } catch (e) {
      if (!/NOT_PERMITTED/.test(String((e as Error).message))) throw new Error(`${what}: ${(e as Error).message}`);
      refused++;
      return;
    }
    throw new Error(`${what}: the forged descriptor was imported`);
  };
  try {
    const rw = Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE;
    const forged = (pid: number, fd: number): Desc => ({
      pid,
      index: 0,
      nonce: 0x1234n,
      startTime: startTime(pid),
      key: getRandomValues(new Uint8Array(16)),
      base: BigInt(mem.address),
      len: 1n << 30n, // far beyond the memory: a device that trusted it would fault on this process's other pages
      permissions: rw,
      registryFd: fd,
      pci: HOST_PCI,
    });
    for (let fd = 0; fd < 64; fd++) refuse(encode(forged(process.pid, fd)), `self, fd ${fd}, before any export`);
    for (let fd = 0; fd < 64; fd++) refuse(encode(forged(process.ppid, fd)), `parent, fd ${fd}`);
    const map = Mmap.create({ memory: mem, permissions: rw, devices: [dev] });
    try {
      const genuine = map.exportPci(dev);
      const g = decode(genuine);
      if (g.pid !== process.pid || g.startTime !== startTime(process.pid)) throw new Error("descriptor names someone else");
      refuse(encode({ ...g, len: g.len + 4096n }), "own export grown by a page");
      refuse(encode({ ...g, base: g.base - 4096n, len: g.len + 4096n }), "own export moved down a page");
      refuse(encode({ ...g, key: getRandomValues(new Uint8Array(16)) }), "own export with another key");
      refuse(encode({ ...g, index: g.index + 1 }), "own identity, next entry");
      refuse(encode({ ...g, startTime: g.startTime + 1n }), "own export, another start time");
      refuse(encode({ ...g, nonce: g.nonce ^ 1n }), "own export, another nonce");
      refuse(encode({ ...g, pid: process.ppid, startTime: startTime(process.ppid) }), "own secrets, parent's pid");
      const imported = Mmap.fromExport(genuine, dev);
      const range = imported.range;
      imported.close();
      if (range.address !== mem.address || range.length !== 65536) throw new Error(`genuine import range ${JSON.stringify(range)}`);
      map.close();
      refuse(genuine, "own descriptor after its map closed");
    } finally {
      map.close();
    }
  } finally {
    mem.close();
    dev.close();
  }
  return { refused, genuineImported: true };
}

cases.forge = forge;

const name = process.argv[2] ?? "";
const run = cases[name];
if (!run) {
  console.error(`usage: hostile-probe.ts <${Object.keys(cases).join("|")}>`);
  process.exit(2);
}
try {
  const result = await run();
  console.log(JSON.stringify({ case: name, threw: false, result }));
} catch (e) {
  console.log(JSON.stringify({ case: name, threw: true, message: e instanceof Error ? e.message : String(e) }));
}
process.exit(0);
