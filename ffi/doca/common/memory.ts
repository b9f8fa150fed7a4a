/**
 * NativeMemory: page-aligned memory from libc mmap, never on the JS heap (DOCA keeps using the address after our
 * call returns, and the peer process reads/writes it by address). `bytes` is a view over it.
 */
import { loadLibc, mapPages } from "../../native/library.ts";
import { Resource, hex, INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import type { Handle } from "../../load/types.ts";

const PAGE = 4096;
const MADV_DONTNEED = 4;

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
  readonly #mapped: number;
  #bytes: Uint8Array;

  private constructor(token: symbol, address: number, length: number, mapped: number) {
    internalOnly(token, "NativeMemory");
    super(address, [], (a) => loadLibc().libc.munmap(a, mapped));
    this.length = length;
    this.#mapped = mapped;
    this.#bytes = new Uint8Array(loadLibc().backend.view(address, length));
  }

  /** Maps `length` bytes (rounded up to whole pages, zero-filled). */
  static alloc(length: number): NativeMemory {
    if (!Number.isSafeInteger(length) || length <= 0) throw new RangeError(`NativeMemory.alloc: bad length ${length}`);
    const mapped = Math.ceil(length / PAGE) * PAGE;
    return new NativeMemory(INTERNAL, mapPages(mapped), length, mapped);
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
    this.#bytes = new Uint8Array(0);
  }

  protected summary(): string {
    return `${hex(this.address)} length=${this.length}`;
  }
}
