/**
 * Buffer inventories and the buffers they hand out (a window of an mmap, with a data section inside it).
 *
 * Bounds are checked here, not left to the device: on DOCA, doca_buf_inventory_buf_get_by_args and
 * doca_buf_set_data return SUCCESS for ranges outside the map or buffer (undefined behaviour on hardware).
 */
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { hex, Resource, INTERNAL, internalOnly, HANDLE, NATIVE } from "../../engine/resource.ts";
import { integerIn, nonNegative } from "../../engine/validate.ts";
import type { Mmap } from "./mmap.ts";
import type { Handle } from "../../load/types.ts";

/** Elements an inventory may hold (DOCA preallocates them all). */
const MAX_INVENTORY = 1 << 24;

/** Only BufInventory creates Bufs (set in Buf's static block, module-private). */
let createBuf: (handle: number, inventory: BufInventory, mmap: Mmap, address: number, length: number) => Buf;

/**
 * Bufs closed or repointed (reuseByAddr / reuseByData) so far in this process (list members counted with their
 * head): unchanged means no Buf changed since, so a repeated batch may skip checking its pairs again.
 */
let bufCloses = 0;
export function bufClosesSoFar(): number {
  return bufCloses;
}

export class BufInventory extends Resource<Handle<"doca_buf_inventory">> {
  protected readonly kind = "BufInventory";
  readonly capacity: number;

  constructor(capacity: number) {
    integerIn("BufInventory", "capacity", capacity, 1, MAX_INVENTORY);
    if (capacity === undefined) throw new RangeError("BufInventory: capacity is required");
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_buf_inventory_create(capacity, d.scratch.slot(0)), "doca_buf_inventory_create");
    const handle = d.scratch.u64(0);
    const rc = d.fns.doca_buf_inventory_start(handle);
    if (rc !== 0) {
      d.fns.doca_buf_inventory_destroy(handle);
      check(rc, "doca_buf_inventory_start");
    }
    super(handle, [], (h) => {
      doca().fns.doca_buf_inventory_stop?.(h);
      doca().fns.doca_buf_inventory_destroy(h);
    });
    this.capacity = capacity;
  }

  /** A buffer over [address, address+length) of `mmap` with an empty data section (a DMA destination). */
  bufByAddr(mmap: Mmap, address: number, length: number): Buf {
    return this.#get(mmap, address, length, address, 0);
  }

  /** A buffer over [address, address+length) whose data is all of it (a DMA source). */
  bufByData(mmap: Mmap, address: number, length: number): Buf {
    return this.#get(mmap, address, length, address, length);
  }

  #get(mmap: Mmap, address: number, length: number, data: number, dataLength: number): Buf {
    if (!Number.isSafeInteger(address) || address < 0 || !Number.isSafeInteger(length) || length < 0) {
      throw new RangeError(`BufInventory: address ${address} and length ${length} must be non-negative safe integers`);
    }
    const range = mmap.range;
    const where = `${hex(address)}+${length} in mmap ${hex(range.address)}+${range.length}`;
    if (address < range.address || address + length > range.address + range.length) {
      throw new DocaError(DocaErrorCode.INVALID_VALUE, "doca_buf_inventory_buf_get_by_args", `${where}: outside the map`);
    }
    const d = doca();
    d.scratch.clear(0);
    check(
      d.fns.doca_buf_inventory_buf_get_by_args(this[HANDLE], mmap[HANDLE], address, length, data, dataLength, d.scratch.slot(0)),
      "doca_buf_inventory_buf_get_by_args",
      where,
    );
    return createBuf(d.scratch.u64(0), this, mmap, address, length);
  }

  protected destroyNative(handle: number): void {
    const f = doca().fns;
    f.doca_buf_inventory_stop?.(handle);
    check(f.doca_buf_inventory_destroy(handle), "doca_buf_inventory_destroy");
  }

  protected summary(): string {
    return `capacity=${this.capacity} bufs=${this.childCount}`;
  }
}

export class Buf extends Resource<Handle<"doca_buf">> {
  protected readonly kind = "Buf";
  #address: number;
  #length: number;
  /** The map the buffer lies in (its parent with the inventory). */
  readonly mmap: Mmap;
  /** Brand only real Bufs carry (`#brand in x` cannot be forged with Object.create). */
  readonly #brand = true;
  /** The head of the list this Buf was chained into (it releases this one), or undefined for a head. */
  #listHead: Buf | undefined;
  /** The Bufs chained after this head, in list order. */
  #listMembers: Buf[] = [];

  static {
    createBuf = (handle, inventory, mmap, address, length) => new Buf(INTERNAL, handle, inventory, mmap, address, length);
  }

  /** Not callable from outside this module: Bufs come from BufInventory.bufByAddr / bufByData. */
  private constructor(token: symbol, handle: number, inventory: BufInventory, mmap: Mmap, address: number, length: number) {
    internalOnly(token, "Buf");
    super(handle, [inventory, mmap], (h) => doca().fns.doca_buf_dec_refcount(h, 0));
    this.#address = address;
    this.#length = length;
    this.mmap = mmap;
  }

  /** Start of the buffer (changed by reuseByAddr / reuseByData). */
  get address(): number {
    return this.#address;
  }

  /** Length of the buffer. */
  get length(): number {
    return this.#length;
  }

  /**
   * Points this Buf at [address, address+length) of the same map with an empty data section (a destination), without
   * going back to the inventory (doca_buf_inventory_buf_reuse_by_addr). An element of a list (head or member) is
   * repointed alone and the list stays (NVIDIA's GGA-offload relay does so). Not while a task uses it or its list
   * (DocaError NOT_PERMITTED).
   */
  reuseByAddr(address: number, length: number): void {
    this.#reuse(address, length, address, 0, "reuseByAddr");
  }

  /** As reuseByAddr, with the data section all of the new range (a source; doca_buf_inventory_buf_reuse_by_data). */
  reuseByData(address: number, length: number): void {
    this.#reuse(address, length, address, length, "reuseByData");
  }

  #reuse(address: number, length: number, data: number, dataLength: number, what: string): void {
    this.assertOpen();
    nonNegative(`Buf.${what}`, "address", address);
    nonNegative(`Buf.${what}`, "length", length);
    const range = this.mmap.range;
    if (address < range.address || address + length > range.address + range.length) {
      throw new DocaError(
        DocaErrorCode.INVALID_VALUE,
        "doca_buf_inventory_buf_reuse_by_args",
        `Buf.${what}: ${hex(address)}+${length} outside the mmap ${hex(range.address)}+${range.length}`,
      );
    }
    const reuse = requireFns("doca_buf_inventory_buf_reuse_by_args").doca_buf_inventory_buf_reuse_by_args;
    check(reuse(this[HANDLE], address, length, data, dataLength), "doca_buf_inventory_buf_reuse_by_args", `Buf.${what}`);
    this.#address = address;
    this.#length = length;
    bufCloses++;
  }

  /** True only for a Buf made by a BufInventory (not a look-alike object or a prototype trick). */
  static isBuf(value: unknown): value is Buf {
    return typeof value === "object" && value !== null && #brand in value;
  }

  /** isBuf and not closed, in one cheap test (the DMA hot path). */
  static isOpenBuf(value: unknown): value is Buf {
    return typeof value === "object" && value !== null && #brand in value && !(value as Buf).closed;
  }

  /** Start of the data section. */
  get dataAddress(): number {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_buf_get_data(this[HANDLE], d.scratch.slot(0)), "doca_buf_get_data");
    return d.scratch.u64(0);
  }

  get dataLength(): number {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_buf_get_data_len(this[HANDLE], d.scratch.slot(0)), "doca_buf_get_data_len");
    return d.scratch.u64(0);
  }

  /** Empties the data section (DMA appends to a destination's data: reset it before reusing the Buf as one). */
  resetData(): void {
    check(doca().raw.doca_buf_reset_data_len(this[NATIVE]), "doca_buf_reset_data_len");
  }

  /** Sets the data section to [address, address+length), which must lie inside the buffer (checked here). */
  setData(address: number, length: number): void {
    nonNegative("Buf.setData", "address", address);
    nonNegative("Buf.setData", "length", length);
    if (address < this.address || address + length > this.address + this.length) {
      throw new DocaError(
        DocaErrorCode.INVALID_VALUE,
        "doca_buf_set_data",
        `data ${hex(address)}+${length} outside the buffer ${hex(this.address)}+${this.length}`,
      );
    }
    check(doca().fns.doca_buf_set_data(this[HANDLE], address, length), "doca_buf_set_data");
  }

  /**
   * Appends `next` (a head, with its own list if it has one) to the end of this Buf's list (doca_buf_chain_list).
   * Tasks then take this Buf as the whole list: a source's data in list order (gather), a destination's free tails
   * filled in list order (scatter), within each task kind's list limit (DMA: the device's max list length; RDMA:
   * `Rdma.create({ maxSendBufListLen, receiveBufListLen })`). The list is released with its head: closing this Buf
   * (or collecting it) releases every element; closing a member alone releases nothing.
   */
  chain(next: Buf): void {
    this.assertOpen();
    if (!Buf.isOpenBuf(next)) throw new TypeError("Buf.chain: next must be an open Buf from a BufInventory");
    if (this.#listHead) throw new Error("Buf.chain: this Buf is a member of another list; chain onto its head");
    if (next.#listHead || next === this) throw new Error("Buf.chain: next is already part of a list");
    check(doca().fns.doca_buf_chain_list(this[HANDLE], next[HANDLE]), "doca_buf_chain_list");
    for (const member of [next, ...next.#listMembers]) {
      member.#listHead = this;
      member.detachRelease();
      this.#listMembers.push(member);
    }
    next.#listMembers = [];
  }

  /** Bufs in this Buf's list, itself included (1 for a Buf that was never chained). */
  get listLength(): number {
    return this.#listHead ? this.#listHead.listLength : 1 + this.#listMembers.length;
  }

  protected destroyNative(handle: number): void {
    bufCloses++;
    if (this.#listHead) return; // a member: its head releases the whole list
    const d = doca();
    check(d.fns.doca_buf_dec_refcount(handle, d.scratch.slot(7)), "doca_buf_dec_refcount");
    for (const member of this.#listMembers.splice(0)) member.abandon(); // released with this head
  }

  protected summary(): string {
    const list = this.#listHead ? " (in a list)" : this.#listMembers.length ? ` list=${1 + this.#listMembers.length}` : "";
    return `${hex(this.address)}+${this.length} data=${this.dataLength}${list}`;
  }
}
