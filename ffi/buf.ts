/** Buffer inventories and the buffers they hand out (a window of an mmap, with a data section inside it). */
import { doca } from "./library.ts";
import { check } from "./errors.ts";
import { Resource, hex } from "./resource.ts";
import type { Mmap } from "./mmap.ts";

export class BufInventory extends Resource {
  protected readonly kind = "BufInventory";
  readonly capacity: number;

  constructor(capacity: number) {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_buf_inventory_create(capacity, d.scratch.slot(0)), "doca_buf_inventory_create");
    const handle = d.scratch.u64(0);
    const rc = d.fns.doca_buf_inventory_start(handle);
    if (rc !== 0) {
      d.fns.doca_buf_inventory_destroy(handle);
      check(rc, "doca_buf_inventory_start");
    }
    super(handle, [], (h) => doca().fns.doca_buf_inventory_destroy(h));
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
      throw new RangeError(`BufInventory: address ${address} and length ${length} must be non-negative integers`);
    }
    const d = doca();
    d.scratch.clear(0);
    check(
      d.fns.doca_buf_inventory_buf_get_by_args(this.handle, mmap.handle, address, length, data, dataLength, d.scratch.slot(0)),
      "doca_buf_inventory_buf_get_by_args",
      `${hex(address)}+${length} in mmap ${hex(mmap.range.address)}+${mmap.range.length}`,
    );
    return new Buf(d.scratch.u64(0), this, mmap, address, length);
  }

  protected destroyNative(handle: number): void {
    const f = doca().fns;
    f.doca_buf_inventory_stop?.(handle);
    check(f.doca_buf_inventory_destroy(handle), "doca_buf_inventory_destroy");
  }

  protected summary(): string {
    return `capacity=${this.capacity}`;
  }
}

export class Buf extends Resource {
  protected readonly kind = "Buf";
  readonly address: number;
  readonly length: number;

  /** @internal created by BufInventory. */
  constructor(handle: number, inventory: BufInventory, mmap: Mmap, address: number, length: number) {
    super(handle, [inventory, mmap], (h) => doca().fns.doca_buf_dec_refcount(h, 0));
    this.address = address;
    this.length = length;
  }

  /** Start of the data section. */
  get dataAddress(): number {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_buf_get_data(this.handle, d.scratch.slot(0)), "doca_buf_get_data");
    return d.scratch.u64(0);
  }

  get dataLength(): number {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_buf_get_data_len(this.handle, d.scratch.slot(0)), "doca_buf_get_data_len");
    return d.scratch.u64(0);
  }

  /** Empties the data section (DMA appends to a destination's data: reset it before reusing the Buf as one). */
  resetData(): void {
    check(doca().raw.doca_buf_reset_data_len(this.native), "doca_buf_reset_data_len");
  }

  setData(address: number, length: number): void {
    check(doca().fns.doca_buf_set_data(this.handle, address, length), "doca_buf_set_data");
  }

  protected destroyNative(handle: number): void {
    const d = doca();
    check(d.fns.doca_buf_dec_refcount(handle, d.scratch.slot(7)), "doca_buf_dec_refcount");
  }

  protected summary(): string {
    return `${hex(this.address)}+${this.length} data=${this.dataLength}`;
  }
}
