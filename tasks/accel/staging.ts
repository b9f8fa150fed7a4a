/**
 * Native memory the accelerator tasks read and write: one region per role (source, destination), mapped for the
 * device and grown (re-mapped) when a larger piece comes, with the inventory their Bufs come from.
 */
import { Access, type Buf, BufInventory, type Device, Mmap, NativeMemory } from "../../mod.ts";

export class Region {
  #memory: NativeMemory | undefined;
  #mmap: Mmap | undefined;

  constructor(private readonly device: Device) {}

  /** Room for at least `length` bytes (a fresh, larger region when needed: contents are not kept). */
  ensure(length: number): void {
    if (this.#memory && this.#memory.length >= length) return;
    this.close();
    const size = Math.max(4096, length);
    this.#memory = NativeMemory.alloc(size);
    this.#mmap = Mmap.create({ memory: this.#memory, permissions: Access.LOCAL_READ_WRITE, devices: [this.device] });
  }

  get bytes(): Uint8Array {
    return this.#memory!.bytes;
  }

  /** A Buf whose data is the first `length` bytes (a source). */
  data(inventory: BufInventory, length: number): Buf {
    this.ensure(Math.max(length, 1));
    return inventory.bufByData(this.#mmap!, this.#memory!.address, length);
  }

  /** An empty Buf over the first `room` bytes (a destination). */
  room(inventory: BufInventory, room: number): Buf {
    this.ensure(Math.max(room, 1));
    return inventory.bufByAddr(this.#mmap!, this.#memory!.address, Math.max(room, 1));
  }

  close(): void {
    this.#mmap?.close();
    this.#memory?.close();
    this.#mmap = undefined;
    this.#memory = undefined;
  }
}

/** A source and a destination region and their inventory. */
export class Staging {
  readonly src: Region;
  readonly dst: Region;
  readonly inventory = new BufInventory(8);

  constructor(device: Device) {
    this.src = new Region(device);
    this.dst = new Region(device);
  }

  [Symbol.dispose](): void {
    this.inventory.close();
    this.src.close();
    this.dst.close();
  }
}
