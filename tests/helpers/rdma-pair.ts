/**
 * Two Rdma contexts in one process, connected to each other by exchanged details, with a memory region on each
 * side and B's region exported for RDMA and imported by A: the fixture of tests/ffi-rdma*.test.ts.
 */
import { Access, type Buf, BufInventory, Device, listDevices, loadDoca, Mmap, NativeMemory, ProgressEngine, Rdma, type RdmaConnection, type RdmaOptions } from "../../mod.ts";

/**
 * Why RDMA tests cannot run here, or false: a DOCA without libdoca_rdma (the software device builds it from
 * sim/src/rdma/*.c; real DOCA ships it with the RDMA SDK) has nothing to test. Tests skip with this line.
 */
export const noRdma: string | false = loadDoca().files.rdma
  ? false
  : `this DOCA (${loadDoca().dir}) has no libdoca_rdma: RDMA tests skipped`;

export const REMOTE_ACCESS = Access.LOCAL_READ_WRITE | Access.RDMA_READ | Access.RDMA_WRITE | Access.RDMA_ATOMIC;

/** The first device with RDMA (the software device's default configuration has one on each side). */
export function rdmaDevice(): Device {
  const info = listDevices().find((d) => (d.caps.rdma?.tasks.length ?? 0) > 0);
  if (!info) throw new Error("no DOCA device with RDMA capabilities");
  return Device.open(info.pciAddr);
}

export interface Pair extends AsyncDisposable {
  dev: Device;
  pe: ProgressEngine;
  a: Rdma;
  b: Rdma;
  /** A's connection to B and B's connection to A. */
  ab: RdmaConnection;
  ba: RdmaConnection;
  memA: NativeMemory;
  memB: NativeMemory;
  mapA: Mmap;
  mapB: Mmap;
  /** B's region as A sees it (imported from B's RDMA export). */
  remoteB: Mmap;
  inv: BufInventory;
  /** A Buf over A's local region, data = [offset, offset+length). */
  local(offset: number, length: number, empty?: boolean): Buf;
  /** A Buf over B's region through A's import. */
  remote(offset: number, length: number, empty?: boolean): Buf;
}

export async function rdmaPair(size = 1 << 20, opts: { b?: RdmaOptions; a?: RdmaOptions; mapBAccess?: number } = {}): Promise<Pair> {
  const dev = rdmaDevice();
  const pe = new ProgressEngine();
  const a = await Rdma.create(dev, pe, { permissions: REMOTE_ACCESS, ...opts.a });
  const b = await Rdma.create(dev, pe, { permissions: REMOTE_ACCESS, ...opts.b });
  const x = a.exportConnection(), y = b.exportConnection();
  x.connection.connect(y.details);
  y.connection.connect(x.details);
  const memA = NativeMemory.alloc(size), memB = NativeMemory.alloc(size);
  const mapA = Mmap.create({ memory: memA, permissions: REMOTE_ACCESS, devices: [dev] });
  const mapB = Mmap.create({ memory: memB, permissions: opts.mapBAccess ?? REMOTE_ACCESS, devices: [dev] });
  const remoteB = Mmap.fromExport(mapB.exportRdma(dev), dev);
  const inv = new BufInventory(1024);
  const buf = (map: Mmap, base: number, offset: number, length: number, empty?: boolean) =>
    empty ? inv.bufByAddr(map, base + offset, length) : inv.bufByData(map, base + offset, length);
  return {
    dev, pe, a, b, ab: x.connection, ba: y.connection, memA, memB, mapA, mapB, remoteB, inv,
    local: (offset, length, empty) => buf(mapA, memA.address, offset, length, empty),
    remote: (offset, length, empty) => buf(remoteB, remoteB.range.address, offset, length, empty),
    async [Symbol.asyncDispose]() {
      await a.close();
      await b.close();
      inv.close();
      remoteB.close();
      mapA.close();
      mapB.close();
      memA.close();
      memB.close();
      pe.close();
      dev.close();
    },
  };
}
