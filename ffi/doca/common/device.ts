/** Devices and representors: listing (with capabilities), opening by PCI address, closing. */
import { doca, type Doca, syncNativeEnvironment } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode, DEVINFO_IBDEV_NAME_SIZE, DEVINFO_IFACE_NAME_SIZE, DEVINFO_PCI_ADDR_SIZE, DEVINFO_REP_VUID_SIZE, RepFilter } from "../../native/constants.ts";
import { Resource, INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import type { Handle } from "../../load/types.ts";

export interface DeviceCaps {
  dmaMemcpy: boolean;
  dmaMaxBufSize: number;
  dmaMaxBufListLen: number;
  comchServer: boolean;
  comchClient: boolean;
  comchMaxMsgSize: number;
  /** RDMA (libdoca_rdma), undefined when this DOCA has no RDMA library. */
  rdma?: RdmaCaps;
}

export interface RdmaCaps {
  /** Task kinds the device supports: write, read, send, receive, atomic_cmp_swp, atomic_fetch_add. */
  tasks: string[];
  maxMessageSize: number;
  maxSendQueueSize: number;
  maxRecvQueueSize: number;
  gidTableSize: number;
  /** Transport types supported: "rc", "dc". */
  transports: string[];
}

/** The RDMA task kinds a device reports, each with its capability query picked from the symbol table by name. */
const RDMA_TASKS = [
  ["write", (f: Doca["fns"]) => f.doca_rdma_cap_task_write_is_supported],
  ["read", (f: Doca["fns"]) => f.doca_rdma_cap_task_read_is_supported],
  ["send", (f: Doca["fns"]) => f.doca_rdma_cap_task_send_is_supported],
  ["receive", (f: Doca["fns"]) => f.doca_rdma_cap_task_receive_is_supported],
  ["atomic_cmp_swp", (f: Doca["fns"]) => f.doca_rdma_cap_task_atomic_cmp_swp_is_supported],
  ["atomic_fetch_add", (f: Doca["fns"]) => f.doca_rdma_cap_task_atomic_fetch_add_is_supported],
] as const;

/** RDMA capabilities through whichever cap functions this DOCA exports (doca_rdma_cap_*). */
function rdmaCaps(d: Doca, devinfo: number): RdmaCaps | undefined {
  const f = d.fns;
  if (!f.doca_rdma_create) return undefined;
  const s = d.scratch;
  const u32 = (fn: ((devinfo: number, out: number) => number) | undefined) => {
    s.clear(0);
    return fn && fn(devinfo, s.slot(0)) === 0 ? s.u32At(0) : 0;
  };
  const tasks: string[] = RDMA_TASKS.filter(([, cap]) => cap(f)?.(devinfo) === 0).map(([name]) => name);
  const transports = (["rc", "dc"] as const).filter((_, i) => f.doca_rdma_cap_transport_type_is_supported?.(devinfo, i) === 0);
  return {
    tasks,
    maxMessageSize: u32(f.doca_rdma_cap_get_max_message_size),
    maxSendQueueSize: u32(f.doca_rdma_cap_get_max_send_queue_size),
    maxRecvQueueSize: u32(f.doca_rdma_cap_get_max_recv_queue_size),
    gidTableSize: u32(f.doca_rdma_cap_get_gid_table_size),
    transports,
  };
}

export interface DeviceInfo {
  pciAddr: string;
  ibdevName: string;
  ifaceName: string;
  caps: DeviceCaps;
}

export interface RepInfo {
  pciAddr: string;
  vuid: string;
}

/** Reads the pointer array a DOCA list function returned. */
function readPointerList(d: Doca, list: number, count: number): number[] {
  if (count === 0) return [];
  const view = new DataView(d.backend.view(list, count * 8));
  return Array.from({ length: count }, (_, i) => Number(view.getBigUint64(i * 8, true)));
}

/** Calls a `(obj, char *buf, uint32_t size)` / `(obj, char *buf)` getter and returns the text. */
type SizedTextGetter = "doca_devinfo_get_ibdev_name" | "doca_devinfo_get_iface_name" | "doca_devinfo_rep_get_vuid";
type TextGetter = "doca_devinfo_get_pci_addr_str" | "doca_devinfo_rep_get_pci_addr_str";

function readText(d: Doca, fn: SizedTextGetter | TextGetter, obj: number, size: number): string {
  const out = d.scratch.outText(size);
  if (fn === "doca_devinfo_get_pci_addr_str" || fn === "doca_devinfo_rep_get_pci_addr_str") {
    const getter = d.fns[fn];
    if (!getter) return ""; // optional in older DOCA
    check(getter(obj, out), fn);
  } else {
    check(d.fns[fn](obj, out, size), fn);
  }
  return d.scratch.readOutText(size);
}

function devinfoCaps(d: Doca, devinfo: number): DeviceCaps {
  const f = d.fns;
  const s = d.scratch;
  const dmaMemcpy = f.doca_dma_cap_task_memcpy_is_supported(devinfo) === 0;
  let dmaMaxBufSize = 0, dmaMaxBufListLen = 0, comchMaxMsgSize = 0;
  if (dmaMemcpy) {
    s.clear(0);
    if (f.doca_dma_cap_task_memcpy_get_max_buf_size(devinfo, s.slot(0)) === 0) dmaMaxBufSize = s.u64(0);
    s.clear(0);
    if (f.doca_dma_cap_task_memcpy_get_max_buf_list_len(devinfo, s.slot(0)) === 0) dmaMaxBufListLen = s.u32At(0);
  }
  const comchServer = f.doca_comch_cap_server_is_supported(devinfo) === 0;
  const comchClient = f.doca_comch_cap_client_is_supported(devinfo) === 0;
  if (comchServer || comchClient) {
    s.clear(0);
    if (f.doca_comch_cap_get_max_msg_size(devinfo, s.slot(0)) === 0) comchMaxMsgSize = s.u32At(0);
  }
  const rdma = rdmaCaps(d, devinfo);
  return { dmaMemcpy, dmaMaxBufSize, dmaMaxBufListLen, comchServer, comchClient, comchMaxMsgSize, ...(rdma ? { rdma } : {}) };
}

function devinfoInfo(d: Doca, devinfo: number): DeviceInfo {
  return {
    pciAddr: readText(d, "doca_devinfo_get_pci_addr_str", devinfo, DEVINFO_PCI_ADDR_SIZE),
    ibdevName: readText(d, "doca_devinfo_get_ibdev_name", devinfo, DEVINFO_IBDEV_NAME_SIZE),
    ifaceName: readText(d, "doca_devinfo_get_iface_name", devinfo, DEVINFO_IFACE_NAME_SIZE),
    caps: devinfoCaps(d, devinfo),
  };
}

/** Runs `use` on the device list, always destroying the list afterwards. */
function withDeviceList<T>(use: (d: Doca, devinfos: number[]) => T): T {
  const d = doca();
  // A side or folder the program set in process.env since DOCA was loaded (Bun keeps such writes from C).
  syncNativeEnvironment();
  return withNativeList(
    d,
    (listOut, countOut) => check(d.fns.doca_devinfo_create_list(listOut, countOut), "doca_devinfo_create_list"),
    (list) => d.fns.doca_devinfo_destroy_list(list),
    use,
  );
}

/**
 * Runs `use` on the entries of a list DOCA creates (`create` fills the list and its length into the two scratch
 * slots it is given), always destroying the list afterwards.
 */
function withNativeList<T>(
  d: Doca,
  create: (listOut: number, countOut: number) => void,
  destroy: (list: number) => void,
  use: (d: Doca, entries: number[]) => T,
): T {
  d.scratch.clear(0);
  d.scratch.clear(1);
  create(d.scratch.slot(0), d.scratch.slot(1));
  const list = d.scratch.u64(0);
  const count = d.scratch.u32At(1);
  try {
    return use(d, readPointerList(d, list, count));
  } finally {
    destroy(list);
  }
}

/** The entry of `entries` at `pciAddr` (compared by DOCA's `equal`), or NOT_FOUND: `missing`, and what there is. */
function findByPci(
  d: Doca,
  entries: number[],
  pciAddr: string,
  equal: "doca_devinfo_is_equal_pci_addr" | "doca_devinfo_rep_is_equal_pci_addr",
  pciOf: (entry: number) => string,
  o: { missing: string },
): number {
  const match = entries.find((entry) => isEqualPci(d, equal, entry, pciAddr));
  if (match !== undefined) return match;
  const available = entries.map((entry) => pciOf(entry) || "(unnamed)").join(", ");
  throw new DocaError(DocaErrorCode.NOT_FOUND, equal, `${o.missing}; available: ${available || "none"}`);
}

function isEqualPci(d: Doca, fn: "doca_devinfo_is_equal_pci_addr" | "doca_devinfo_rep_is_equal_pci_addr", info: number, pci: string): boolean {
  const s = d.scratch;
  s.clear(0);
  const rc = d.fns[fn](info, s.cstring(pci), s.slot(0));
  if (rc === DocaErrorCode.INVALID_VALUE) return false; // malformed address: matches nothing
  check(rc, fn);
  return s.u8At(0) === 1;
}

/** Every local DOCA device with its names and capabilities. */
export function listDevices(): DeviceInfo[] {
  return withDeviceList((d, devinfos) => devinfos.map((info) => devinfoInfo(d, info)));
}

/**
 * Opens the device at `pciAddr`, or the first DOCA device when none is named. With no device at all: a DocaError
 * NOT_FOUND that says so (and where DOCA was loaded from), not a TypeError.
 */
export function openDevice(pciAddr?: string): Device {
  if (pciAddr !== undefined) return Device.open(pciAddr);
  const first = listDevices()[0];
  if (!first) {
    throw new DocaError(
      DocaErrorCode.NOT_FOUND,
      "doca_devinfo_create_list",
      `no DOCA device found (DOCA from ${doca().info.dir}); name one with a PCI address once one exists`,
    );
  }
  return Device.open(first.pciAddr);
}

/** Key of Device's doca_devinfo pointer accessor (ffi/ only, like HANDLE). */
export const DEVINFO: unique symbol = Symbol("doca-ts devinfo");

export class Device extends Resource<Handle<"doca_dev">> {
  protected readonly kind: string;
  readonly info: DeviceInfo;

  private constructor(token: symbol, handle: number, info: DeviceInfo) {
    internalOnly(token, "Device");
    super(handle, [], (h) => doca().fns.doca_dev_close(h));
    this.info = info;
    this.kind = `Device ${info.pciAddr}`;
  }

  /**
   * Opens the device at a PCI address, "03:00.1" or "0000:03:00.1"; without one, the first device listed (as
   * openDevice does).
   */
  static open(pciAddr?: string): Device {
    if (pciAddr === undefined) return openDevice();
    if (typeof pciAddr !== "string" || pciAddr === "") {
      throw new TypeError(`Device.open: pciAddr must be a PCI address such as "03:00.0" (see listDevices()), got ${JSON.stringify(pciAddr) ?? String(pciAddr)}`);
    }
    return withDeviceList((d, devinfos) => {
      const match = findByPci(d, devinfos, pciAddr, "doca_devinfo_is_equal_pci_addr", (info) => devinfoInfo(d, info).pciAddr, {
        missing: `no DOCA device at PCI address "${pciAddr}"`,
      });
      const info = devinfoInfo(d, match);
      d.scratch.clear(0);
      check(d.fns.doca_dev_open(match, d.scratch.slot(0)), "doca_dev_open", pciAddr);
      return new Device(INTERNAL, d.scratch.u64(0), info);
    });
  }

  /** The doca_devinfo of the open device (valid while it is open; ffi/ only). */
  get [DEVINFO](): number {
    return doca().fns.doca_dev_as_devinfo(this[HANDLE]);
  }

  /** Representors this device manages (DPU side), network functions by default. */
  listRepresentors(filter: number = RepFilter.NET): RepInfo[] {
    return this.#withRepList(filter, (d, reps) => reps.map((rep) => repInfo(d, rep)));
  }

  openRepresentor(pciAddr: string, filter: number = RepFilter.NET): DeviceRep {
    return this.#withRepList(filter, (d, reps) => {
      const match = findByPci(d, reps, pciAddr, "doca_devinfo_rep_is_equal_pci_addr", (rep) => repInfo(d, rep).pciAddr, {
        missing: `no representor at PCI address "${pciAddr}" on ${this.info.pciAddr}`,
      });
      const info = repInfo(d, match);
      d.scratch.clear(0);
      check(d.fns.doca_dev_rep_open(match, d.scratch.slot(0)), "doca_dev_rep_open", pciAddr);
      return newDeviceRep(d.scratch.u64(0), info, this);
    });
  }

  #withRepList<T>(filter: number, use: (d: Doca, reps: number[]) => T): T {
    const d = doca();
    return withNativeList(
      d,
      (listOut, countOut) =>
        check(d.fns.doca_devinfo_rep_create_list(this[HANDLE], filter, listOut, countOut), "doca_devinfo_rep_create_list"),
      (list) => d.fns.doca_devinfo_rep_destroy_list(list),
      use,
    );
  }

  protected destroyNative(handle: number): void {
    check(doca().fns.doca_dev_close(handle), "doca_dev_close");
  }

  protected summary(): string {
    const c = this.info.caps;
    const roles = [c.dmaMemcpy && "dma", c.comchServer && "comch-server", c.comchClient && "comch-client", c.rdma?.tasks.length && "rdma"]
      .filter(Boolean);
    return `${this.info.pciAddr} ${this.info.ibdevName} [${roles.join(", ")}]`;
  }
}

function repInfo(d: Doca, rep: number): RepInfo {
  return {
    pciAddr: readText(d, "doca_devinfo_rep_get_pci_addr_str", rep, DEVINFO_PCI_ADDR_SIZE),
    vuid: readText(d, "doca_devinfo_rep_get_vuid", rep, DEVINFO_REP_VUID_SIZE),
  };
}

/** Only Device.openRepresentor creates DeviceReps (set in DeviceRep's static block). */
let newDeviceRep: (handle: number, info: RepInfo, device: Device) => DeviceRep;

export class DeviceRep extends Resource<Handle<"doca_dev_rep">> {
  protected readonly kind: string;
  readonly info: RepInfo;
  readonly device: Device;

  static {
    newDeviceRep = (handle, info, device) => new DeviceRep(INTERNAL, handle, info, device);
  }

  /** Not callable from outside ffi/: opened through Device.openRepresentor. */
  private constructor(token: symbol, handle: number, info: RepInfo, device: Device) {
    internalOnly(token, "DeviceRep");
    super(handle, [device], (h) => doca().fns.doca_dev_rep_close(h));
    this.info = info;
    this.device = device;
    this.kind = `DeviceRep ${info.pciAddr}`;
  }

  protected destroyNative(handle: number): void {
    check(doca().fns.doca_dev_rep_close(handle), "doca_dev_rep_close");
  }

  protected summary(): string {
    return `${this.info.pciAddr} vuid=${this.info.vuid}`;
  }
}
