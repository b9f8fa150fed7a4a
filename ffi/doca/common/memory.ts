/**
 * NativeMemory: page-aligned memory from libc mmap, never on the JS heap (DOCA keeps using the address after our
 * call returns, and the peer process reads/writes it by address). `bytes` is a view over it. `NativeMemory.shared`
 * backs it with a memory file (memfd) instead, whose descriptor `fd` can name the memory as a dma-buf range
 * (Mmap.create({ dmabuf: true })).
 */
import { loadLibc, mapPages } from "../../native/library.ts";
import { Resource, hex, INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import type { Handle } from "../../load/types.ts";

const PAGE = 4096;
const MADV_DONTNEED = 4;
const PROT_READ_WRITE = 3, MAP_SHARED = 1, MFD_CLOEXEC = 1;

/** Detaches an ArrayBuffer so stale views throw instead of touching unmapped memory; false if not possible. */
function tryDetach(buffer: ArrayBuffer): boolean {
  try {
    structuredClone(buffer, { transfer: [buffer] });
    return buffer.byteLength === 0;
  } catch {
    return false;
  }
}

export class NativeMemory extends Resource<Handle<"void">> {
  protected readonly kind = "NativeMemory";
  readonly length: number;
  /** The memory file behind `NativeMemory.shared` memory (mapped from offset 0), else undefined. */
  readonly fd: number | undefined;
  readonly #mapped: number;
  #bytes: Uint8Array;

  private constructor(token: symbol, address: number, length: number, mapped: number, fd?: number) {
    internalOnly(token, "NativeMemory");
    super(address, [], (a) => {
      const { libc } = loadLibc();
      libc.munmap(a, mapped);
      if (fd !== undefined) libc.close(fd);
    });
    this.length = length;
    this.fd = fd;
    this.#mapped = mapped;
    this.#bytes = new Uint8Array(loadLibc().backend.view(address, length));
  }

  /** Maps `length` bytes (rounded up to whole pages, zero-filled). */
  static alloc(length: number): NativeMemory {
    if (!Number.isSafeInteger(length) || length <= 0) throw new RangeError(`NativeMemory.alloc: bad length ${length}`);
    const mapped = Math.ceil(length / PAGE) * PAGE;
    return new NativeMemory(INTERNAL, mapPages(mapped), length, mapped);
  }

  /**
   * Maps `length` bytes (whole pages, zero-filled) of a fresh memory file, shared: the file's descriptor (`fd`) can
   * name this memory as a dma-buf range (Mmap.create({ dmabuf: true }); on the software device a memfd stands in for
   * a dma-buf where /dev/udmabuf is absent). The descriptor is closed with the memory.
   */
  static shared(length: number): NativeMemory {
    if (!Number.isSafeInteger(length) || length <= 0) throw new RangeError(`NativeMemory.shared: bad length ${length}`);
    const mapped = Math.ceil(length / PAGE) * PAGE;
    const { libc, backend } = loadLibc();
    const name = new TextEncoder().encode("doca-ts-shared\0");
    const nameAddress = mapPages(PAGE);
    let fd: number;
    try {
      new Uint8Array(backend.view(nameAddress, name.length)).set(name);
      fd = libc.memfd_create(nameAddress, MFD_CLOEXEC) as number;
    } finally {
      libc.munmap(nameAddress, PAGE);
    }
    if (fd < 0) throw new Error(`NativeMemory.shared: memfd_create failed`);
    if ((libc.ftruncate(fd, mapped) as number) !== 0) {
      libc.close(fd);
      throw new Error(`NativeMemory.shared: cannot size the memory file to ${mapped} bytes`);
    }
    const address = libc.mmap(0, mapped, PROT_READ_WRITE, MAP_SHARED, fd, 0) as number;
    if (address === 0 || address >= 2 ** 63) {
      libc.close(fd);
      throw new Error(`NativeMemory.shared: mmap of ${mapped} bytes failed`);
    }
    return new NativeMemory(INTERNAL, address, length, mapped, fd);
  }

  get address(): number {
    return this[HANDLE];
  }

  /** A view over the native memory (throws once closed). */
  get bytes(): Uint8Array {
    this.assertOpen();
    return this.#bytes;
  }

  protected destroyNative(address: number): void {
    const { libc } = loadLibc();
    if (tryDetach(this.#bytes.buffer as ArrayBuffer)) {
      libc.munmap(address, this.#mapped);
    } else {
      // A view we cannot detach may still be used: keep the mapping valid (zero pages) and give the memory back.
      libc.madvise(address, this.#mapped, MADV_DONTNEED);
    }
    // a mapping outlives its file's descriptor
    if (this.fd !== undefined) libc.close(this.fd);
    this.#bytes = new Uint8Array(0);
  }

  protected summary(): string {
    return `${hex(this.address)} length=${this.length}${this.fd !== undefined ? " shared" : ""}`;
  }
}
