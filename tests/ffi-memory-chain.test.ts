/**
 * DOCA 3.x memory from TypeScript beyond the basics: buffers repointed in place (Buf.reuseByAddr / reuseByData),
 * thread-safe maps, dma-buf ranges over NativeMemory.shared, and the memory chain NVIDIA's storage application is
 * built on: this process (the host) exports its memory over PCI, a DPU process (tests/helpers/chain-dpu.ts) imports
 * it and re-exports the import for RDMA, and an RDMA peer (this process again, through its own Rdma context) writes
 * and reads the host's memory through the DPU; permissions intersect and each link's revocation stops the peer.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { dpuEnv, DPU_PCI, HOST_PCI, pattern } from "./helpers/sim-env.ts";
import { noRdma } from "./helpers/rdma-pair.ts";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { Access, BufInventory, Device, Dma, DocaError, Mmap, NativeMemory, ProgressEngine, Rdma, type RdmaConnection } from "../mod.ts";

const SIZE = 256 * 1024;
const RDMA_RW = Access.RDMA_READ | Access.RDMA_WRITE;

describe("ffi: buffer reuse, thread safety, dma-buf ranges", { timeout: 60_000 }, () => {
  test("a Buf repointed by address and by data moves the new range, also an element of a list; outside the map it is refused", { timeout: 30_000 }, async () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using src = NativeMemory.alloc(SIZE), dst = NativeMemory.alloc(SIZE);
    src.bytes.set(pattern(SIZE, 4));
    using ms = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev], threadSafe: true });
    using md = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using inv = new BufInventory(4);
    await using dma = new Dma(dev, pe);
    const s = inv.bufByData(ms, src.address, 4096), d = inv.bufByAddr(md, dst.address, 4096);
    await dma.memcpy(s, d);
    s.reuseByData(src.address + 8192, 8192);
    d.reuseByAddr(dst.address + 65536, 8192);
    assert.equal(s.address, src.address + 8192);
    assert.equal(s.dataLength, 8192);
    assert.equal(d.dataLength, 0);
    await dma.memcpy(s, d);
    assert.deepEqual(dst.bytes.subarray(65536, 65536 + 8192), src.bytes.subarray(8192, 16384));
    assert.deepEqual(dst.bytes.subarray(0, 4096), src.bytes.subarray(0, 4096));
    assert.ok(dst.bytes.subarray(4096, 65536).every((b) => b === 0), "nothing else written");
    assert.throws(() => d.reuseByAddr(dst.address + SIZE - 4096, 8192), (e) => e instanceof DocaError && e.docaName === "DOCA_ERROR_INVALID_VALUE");
    assert.throws(() => s.reuseByData(dst.address, 16), (e) => e instanceof DocaError && e.docaName === "DOCA_ERROR_INVALID_VALUE");
    const other = inv.bufByAddr(md, dst.address, 4096);
    d.chain(other);
    // each element of the list repointed alone, the list kept: the copy scatters into the new ranges in list order
    dst.bytes.fill(0);
    d.reuseByAddr(dst.address + 3 * 4096, 4096);
    other.reuseByAddr(dst.address + 4096, 4096);
    s.reuseByData(src.address, 8192);
    await dma.memcpy(s, d);
    assert.deepEqual(dst.bytes.subarray(3 * 4096, 4 * 4096), src.bytes.subarray(0, 4096));
    assert.deepEqual(dst.bytes.subarray(4096, 8192), src.bytes.subarray(4096, 8192));
    assert.ok(dst.bytes.subarray(0, 4096).every((b) => b === 0) && dst.bytes.subarray(8192, 3 * 4096).every((b) => b === 0));
    d.close();
    assert.throws(() => other.reuseByAddr(dst.address, 4096), /closed/);
    s.close();
  });

  test("a dma-buf range over NativeMemory.shared: DMA writes and reads it; plain memory is refused", { timeout: 30_000 }, async () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using shared = NativeMemory.shared(SIZE);
    assert.equal(typeof shared.fd, "number");
    using plain = NativeMemory.alloc(SIZE);
    plain.bytes.set(pattern(SIZE, 6));
    assert.throws(() => Mmap.create({ memory: plain, permissions: Access.LOCAL_READ_WRITE, devices: [dev], dmabuf: true }), /NativeMemory\.shared/);
    using mapShared = Mmap.create({ memory: shared, offset: 4096, length: SIZE - 4096, permissions: Access.LOCAL_READ_WRITE, devices: [dev], dmabuf: true });
    using mapPlain = Mmap.create({ memory: plain, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using inv = new BufInventory(4);
    await using dma = new Dma(dev, pe);
    await dma.memcpy(inv.bufByData(mapPlain, plain.address, 65536), inv.bufByAddr(mapShared, shared.address + 4096, 65536));
    assert.deepEqual(shared.bytes.subarray(4096, 4096 + 65536), plain.bytes.subarray(0, 65536));
    plain.bytes.fill(0);
    await dma.memcpy(inv.bufByData(mapShared, shared.address + 4096, 65536), inv.bufByAddr(mapPlain, plain.address, 65536));
    assert.deepEqual(plain.bytes.subarray(0, 65536), pattern(SIZE, 6).subarray(0, 65536));
  });
});

describe("ffi: a memory chain (host PCI export, DPU re-export for RDMA, remote RDMA peer)", { timeout: 120_000, skip: noRdma }, () => {
  let dpu: RuntimeChild;
  let dev: Device;
  let pe: ProgressEngine;
  let rdma: Rdma;
  let conn: RdmaConnection;
  let inv: BufInventory;
  let local: NativeMemory;
  let localMap: Mmap;

  before(async () => {
    dpu = spawnRuntime(new URL("./helpers/chain-dpu.ts", import.meta.url), { env: dpuEnv() });
    await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
    dev = Device.open(HOST_PCI);
    pe = new ProgressEngine();
    rdma = await Rdma.create(dev, pe, { permissions: Access.LOCAL_READ_WRITE | RDMA_RW });
    const mine = rdma.exportConnection();
    const theirs = await dpu.request<{ details: string }>({ op: "connect", details: Buffer.from(mine.details).toString("base64") }, 30_000);
    mine.connection.connect(new Uint8Array(Buffer.from(theirs.details, "base64")));
    conn = mine.connection;
    inv = new BufInventory(16);
    local = NativeMemory.alloc(SIZE);
    localMap = Mmap.create({ memory: local, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  }, { timeout: 120_000 }); // a child runtime and an RDMA connection on a loaded 2-core machine

  after(async () => {
    await dpu?.close();
    inv?.close();
    await rdma?.close();
    localMap?.close();
    local?.close();
    pe?.close();
    dev?.close();
  }, { timeout: 60_000 });

  /** Host memory exported over PCI, chained through the DPU; the peer's import of the DPU's RDMA export. */
  async function chainOf(host: NativeMemory, permissions: number): Promise<{ hostMap: Mmap; id: number; remote?: Mmap; refused?: string }> {
    const hostMap = Mmap.create({ memory: host, permissions, devices: [dev] });
    const r = await dpu.request<{ id: number; rdma?: string; refused?: string; range?: { address: number; length: number } }>({
      op: "chain",
      descriptor: Buffer.from(hostMap.exportPci(dev)).toString("base64"),
    });
    if (!r.rdma) return { hostMap, id: r.id, refused: r.refused };
    assert.deepEqual(r.range, { address: host.address, length: SIZE }, "the DPU's import names the host's range");
    const remote = Mmap.fromExport(new Uint8Array(Buffer.from(r.rdma, "base64")), dev);
    assert.deepEqual(remote.range, { address: host.address, length: SIZE }, "the re-export names the host's range too");
    return { hostMap, id: r.id, remote };
  }

  const isDoca = (name: string) => (e: unknown) => e instanceof DocaError && e.docaName === name;

  test("the peer's write lands in the host and its read returns the host's bytes; buffers repointed in place", async () => {
    using host = NativeMemory.alloc(SIZE);
    host.bytes.set(pattern(SIZE, 11));
    const { hostMap, id, remote } = await chainOf(host, Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE | RDMA_RW);
    local.bytes.set(pattern(SIZE, 12));
    using src = inv.bufByData(localMap, local.address, 65536);
    using dst = inv.bufByAddr(remote!, host.address + 65536, 65536);
    await conn.write(src, dst);
    assert.deepEqual(host.bytes.subarray(65536, 131072), pattern(SIZE, 12).subarray(0, 65536));
    // the same two Bufs, repointed: the whole second half
    src.reuseByData(local.address + 131072, 131072);
    dst.reuseByAddr(host.address + 131072, 131072);
    await conn.write(src, dst);
    assert.deepEqual(host.bytes.subarray(131072), pattern(SIZE, 12).subarray(131072));
    assert.deepEqual(host.bytes.subarray(0, 65536), pattern(SIZE, 11).subarray(0, 65536), "bytes before untouched");
    local.bytes.fill(0);
    using from = inv.bufByData(remote!, host.address, SIZE);
    using into = inv.bufByAddr(localMap, local.address, SIZE);
    await conn.read(from, into);
    assert.deepEqual(local.bytes, host.bytes);
    from.close();
    dst.close();
    remote!.close();
    await dpu.request({ op: "drop", id });
    hostMap.close();
  });

  test("permissions intersect: a PCI read-only host export is readable through the chain, never writable", async () => {
    using host = NativeMemory.alloc(SIZE);
    host.bytes.set(pattern(SIZE, 13));
    const { hostMap, id, remote } = await chainOf(host, Access.LOCAL_READ_WRITE | Access.PCI_READ_ONLY | RDMA_RW);
    using into = inv.bufByAddr(localMap, local.address, 4096);
    using from = inv.bufByData(remote!, host.address, 4096);
    await conn.read(from, into);
    assert.deepEqual(local.bytes.subarray(0, 4096), pattern(SIZE, 13).subarray(0, 4096));
    using src = inv.bufByData(localMap, local.address, 4096);
    using dst = inv.bufByAddr(remote!, host.address, 4096);
    await assert.rejects(conn.write(src, dst), isDoca("DOCA_ERROR_NOT_PERMITTED"));
    assert.deepEqual(host.bytes, pattern(SIZE, 13), "the host's bytes are unchanged");
    from.close();
    dst.close();
    remote!.close();
    await dpu.request({ op: "drop", id });
    hostMap.close();
    // and no RDMA right at all: the DPU's re-export is refused
    using bare = NativeMemory.alloc(SIZE);
    const refused = await chainOf(bare, Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE);
    assert.equal(refused.refused, "DOCA_ERROR_NOT_PERMITTED");
    await dpu.request({ op: "drop", id: refused.id });
    refused.hostMap.close();
  });

  test("revoking a link stops the peer: the DPU's import closed, then the host's map closed", async () => {
    for (const revoke of ["dpu", "host"] as const) {
      using host = NativeMemory.alloc(SIZE);
      const { hostMap, id, remote } = await chainOf(host, Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE | RDMA_RW);
      local.bytes.set(pattern(SIZE, 14));
      using src = inv.bufByData(localMap, local.address, 4096);
      using dst = inv.bufByAddr(remote!, host.address, 4096);
      await conn.write(src, dst);
      if (revoke === "dpu") await dpu.request({ op: "drop", id });
      else hostMap.close();
      local.bytes.fill(0x5a);
      dst.resetData(); // a write fills the destination's data section: empty it for the next
      const outcome = await conn.write(src, dst).then(() => "written", (e) => (e as DocaError).docaName ?? String(e));
      assert.equal(outcome, "DOCA_ERROR_NOT_PERMITTED", `after the ${revoke} revoked`);
      assert.deepEqual(host.bytes.subarray(0, 4096), pattern(SIZE, 14).subarray(0, 4096), "the refused write left nothing");
      dst.close();
      remote!.close();
      if (revoke === "dpu") hostMap.close();
      else await dpu.request({ op: "drop", id });
    }
  });
});
