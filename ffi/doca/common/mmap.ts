/** Memory maps: local maps over NativeMemory (with PCI export) and maps imported from a peer's export. */
import { doca, requireFns } from "../../native/library.ts";
import { check } from "../../native/errors.ts";
import { Resource, hex, INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import type { Device } from "./device.ts";
import { NativeMemory } from "./memory.ts";
import { Access } from "../../native/constants.ts";
import { permissionMask } from "../../engine/validate.ts";
import type { Handle } from "../../load/types.ts";

export interface MmapOptions {
  memory: NativeMemory;
  offset?: number;
  length?: number;
  /** Access flags, e.g. Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE. */
  permissions: number;
  devices: Device[];
  /** doca_mmap_enable_thread_safety before start (the map and its bufs used from several threads). */
  threadSafe?: boolean;
  /**
   * Set the range as a dma-buf (doca_mmap_set_dmabuf_memrange): `memory` must be NativeMemory.shared, whose memory
   * file stands for the dma-buf (offset = `offset`).
   */
  dmabuf?: boolean;
}

/** Options of Mmap.fromExport. */
export interface ImportOptions {
  /** doca_mmap_enable_thread_safety on the imported map (NVIDIA's storage DPU program does). */
  threadSafe?: boolean;
}

function permissionNames(p: number): string {
  const names = Object.entries(Access).filter(([, v]) => v !== 0 && (p & v) === v).map(([k]) => k);
  return names.length ? names.join("|") : "LOCAL_READ_ONLY";
}

export class Mmap extends Resource<Handle<"doca_mmap">> {
  protected readonly kind = "Mmap";
  /** For imported maps, the exporter's addresses. */
  readonly range: { address: number; length: number };
  readonly permissions: number | undefined;
  readonly imported: boolean;

  private constructor(token: symbol, handle: number, parents: (Device | NativeMemory)[], range: Mmap["range"], permissions: number | undefined) {
    internalOnly(token, "Mmap");
    super(handle, parents, (h) => doca().fns.doca_mmap_destroy(h));
    this.range = range;
    this.permissions = permissions;
    this.imported = permissions === undefined;
  }

  /** Creates, configures (range, permissions, devices) and starts a map over `memory`. */
  static create(opts: MmapOptions): Mmap {
    const { memory, permissions, devices } = opts;
    permissionMask("Mmap.create", permissions);
    if (!Array.isArray(devices) || devices.length === 0) throw new TypeError("Mmap.create: devices must list at least one Device");
    for (const dev of devices) dev.assertOpen();
    if (!(memory instanceof NativeMemory)) {
      // A JS-heap buffer can be moved or freed by the GC while DOCA (or the peer) still uses its address.
      throw new TypeError("Mmap.create: memory must be a NativeMemory (NativeMemory.alloc), not a JS-heap buffer");
    }
    const offset = opts.offset ?? 0;
    const length = opts.length ?? memory.length - offset;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length)) {
      throw new RangeError(`Mmap.create: offset ${offset} and length ${length} must be integers`);
    }
    if (offset < 0 || length <= 0 || offset + length > memory.length) {
      throw new RangeError(`Mmap.create: range ${offset}+${length} outside memory of ${memory.length} bytes`);
    }
    if (opts.dmabuf && memory.fd === undefined) {
      throw new TypeError("Mmap.create: dmabuf needs memory from NativeMemory.shared (its memory file is the dma-buf)");
    }
    const setDmabuf = opts.dmabuf ? requireFns("doca_mmap_set_dmabuf_memrange").doca_mmap_set_dmabuf_memrange : undefined;
    const threadSafety = opts.threadSafe ? requireFns("doca_mmap_enable_thread_safety").doca_mmap_enable_thread_safety : undefined;
    const d = doca();
    const f = d.fns;
    d.scratch.clear(0);
    check(f.doca_mmap_create(d.scratch.slot(0)), "doca_mmap_create");
    const handle = d.scratch.u64(0);
    try {
      const address = memory.address + offset;
      if (setDmabuf) check(setDmabuf(handle, memory.fd!, address, offset, length), "doca_mmap_set_dmabuf_memrange");
      else check(f.doca_mmap_set_memrange(handle, address, length), "doca_mmap_set_memrange");
      check(f.doca_mmap_set_permissions(handle, permissions), "doca_mmap_set_permissions");
      for (const dev of devices) check(f.doca_mmap_add_dev(handle, dev[HANDLE]), "doca_mmap_add_dev");
      if (threadSafety) check(threadSafety(handle), "doca_mmap_enable_thread_safety");
      check(f.doca_mmap_start(handle), "doca_mmap_start");
      return new Mmap(INTERNAL, handle, [...devices, memory], { address, length }, permissions);
    } catch (e) {
      f.doca_mmap_destroy(handle);
      throw e;
    }
  }

  /** Exports the map for the other side of the PCIe link; returns a copy of the descriptor. */
  exportPci(device: Device): Uint8Array {
    const d = doca();
    d.scratch.clear(0);
    d.scratch.clear(1);
    check(d.fns.doca_mmap_export_pci(this[HANDLE], device[HANDLE], d.scratch.slot(0), d.scratch.slot(1)), "doca_mmap_export_pci");
    const address = d.scratch.u64(0);
    const length = d.scratch.u64(1);
    // The descriptor belongs to the mmap and dies with it: copy it out.
    return new Uint8Array(d.backend.view(address, length)).slice();
  }

  /**
   * Exports the map for RDMA peers (doca_mmap_export_rdma); returns a copy of the descriptor. The peer imports it
   * with Mmap.fromExport and reaches the memory only as this map's permissions allow (Access.RDMA_*). A map imported
   * from a PCI export may be exported so too (a memory chain: the DPU passes the host's memory on to an RDMA peer,
   * whose reads and writes then land in the host process, with the host's RDMA rights where its PCI rights allow
   * the same direction; docs/FAULTS.md).
   */
  exportRdma(device: Device): Uint8Array {
    const exportRdma = requireFns("doca_mmap_export_rdma").doca_mmap_export_rdma;
    const d = doca();
    d.scratch.clear(0);
    d.scratch.clear(1);
    check(exportRdma(this[HANDLE], device[HANDLE], d.scratch.slot(0), d.scratch.slot(1)), "doca_mmap_export_rdma");
    return new Uint8Array(d.backend.view(d.scratch.u64(0), d.scratch.u64(1))).slice();
  }

  /** Imports a peer's exported map, PCI or RDMA (its addresses are in `range`). */
  static fromExport(descriptor: Uint8Array, device: Device, opts: ImportOptions = {}): Mmap {
    if (!(descriptor instanceof Uint8Array)) {
      throw new TypeError(`Mmap.fromExport: the descriptor must be a Uint8Array, got ${typeof descriptor}`);
    }
    if (typeof opts !== "object" || opts === null) throw new TypeError("Mmap.fromExport: options must be an object");
    device.assertOpen();
    const threadSafety = opts.threadSafe ? requireFns("doca_mmap_enable_thread_safety").doca_mmap_enable_thread_safety : undefined;
    const d = doca();
    const f = d.fns;
    const staging = d.scratch.bytes(descriptor);
    d.scratch.clear(0);
    try {
      check(
        f.doca_mmap_create_from_export(0, staging.address, descriptor.length, device[HANDLE], d.scratch.slot(0)),
        "doca_mmap_create_from_export",
      );
    } finally {
      // The staging pages (large descriptors) are ours whether or not the import worked.
      staging.done();
    }
    const handle = d.scratch.u64(0);
    try {
      d.scratch.clear(1);
      d.scratch.clear(2);
      check(f.doca_mmap_get_memrange(handle, d.scratch.slot(1), d.scratch.slot(2)), "doca_mmap_get_memrange");
      if (threadSafety) check(threadSafety(handle), "doca_mmap_enable_thread_safety");
      return new Mmap(INTERNAL, handle, [device], { address: d.scratch.u64(1), length: d.scratch.u64(2) }, undefined);
    } catch (e) {
      f.doca_mmap_destroy(handle);
      throw e;
    }
  }

  protected destroyNative(handle: number): void {
    check(doca().fns.doca_mmap_destroy(handle), "doca_mmap_destroy");
  }

  protected summary(): string {
    const perms = this.imported ? "imported" : permissionNames(this.permissions!);
    return `${hex(this.range.address)}+${this.range.length} ${perms}`;
  }
}
