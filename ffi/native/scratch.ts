/**
 * A native scratch area for out-parameters and short C strings. DOCA writes pointers/sizes into it; we read them
 * back through typed views created once, so hot calls (task alloc) allocate nothing. Single-threaded use only:
 * a value must be read before the next call that uses the same slot.
 */
export class Scratch {
  readonly address: number;
  private readonly u8: Uint8Array;
  private readonly u32: Uint32Array;
  private readonly encoder = new TextEncoder();
  /** Offset of the string area (the first 1 KiB holds 8-byte out slots). */
  private static readonly STRINGS = 1024;

  constructor(
    address: number,
    buffer: ArrayBuffer,
    private readonly mapPages: (length: number) => number,
    private readonly unmapPages: (address: number, length: number) => void,
    private readonly view: (address: number, length: number) => ArrayBuffer,
    native: (n: number) => number | bigint,
  ) {
    this.address = address;
    this.#bigints = typeof native(1) === "bigint";
    this.#big64 = new BigUint64Array(buffer);
    this.#slotNative = Array.from({ length: 128 }, (_, i) => native(address + i * 8));
    this.u8 = new Uint8Array(buffer);
    this.u32 = new Uint32Array(buffer);
  }

  readonly #bigints: boolean;
  readonly #big64: BigUint64Array;
  readonly #slotNative: (number | bigint)[];

  /** slot(i) in native form (see Backend.native), precomputed. */
  slotNative(i: number): number | bigint {
    return this.#slotNative[i];
  }

  /** Slot `i` as a 64-bit value in native form: what raw functions take back without conversion. */
  u64Native(i: number): number | bigint {
    return this.#bigints ? this.#big64[i] : this.u64(i);
  }

  /** Address of 8-byte out slot `i` (0..127). */
  slot(i: number): number {
    return this.address + i * 8;
  }

  /** Reads slot `i` as an unsigned 64-bit integer (pointer, size_t, uint64_t): two u32 reads, no BigInt. */
  u64(i: number): number {
    return this.u32[i * 2] + this.u32[i * 2 + 1] * 4294967296;
  }

  /** Reads slot `i` as a uint32_t / enum. */
  u32At(i: number): number {
    return this.u32[i * 2];
  }

  /** Reads slot `i` as an int32_t. */
  i32At(i: number): number {
    return this.u32[i * 2] | 0;
  }

  /** Reads slot `i` as a uint8_t. */
  u8At(i: number): number {
    return this.u8[i * 8];
  }

  /** Reads slot `i` as a uint16_t. */
  u16At(i: number): number {
    return this.u8[i * 8] | (this.u8[i * 8 + 1] << 8);
  }

  /** Zeroes slot `i` (so a function that fails without writing leaves 0 = NULL). */
  clear(i: number): void {
    this.u32[i * 2] = 0;
    this.u32[i * 2 + 1] = 0;
  }

  /** Writes a NUL-terminated string into string area `n` (0..2, 1 KiB each); returns its address. */
  cstring(s: string, n = 0): number {
    const offset = Scratch.STRINGS + n * 1024;
    const { written } = this.encoder.encodeInto(s, this.u8.subarray(offset, offset + 1023));
    this.u8[offset + written!] = 0;
    return this.address + offset;
  }

  /**
   * Stages bytes in native memory for one call: the scratch string areas when they fit, else fresh pages.
   * Call done() after the native call (frees the pages when any were mapped).
   */
  bytes(data: Uint8Array): { address: number; done(): void } {
    if (data.length <= 3 * 1024) {
      this.u8.set(data, Scratch.STRINGS);
      return { address: this.address + Scratch.STRINGS, done() {} };
    }
    const length = data.length;
    const address = this.mapPages(length);
    new Uint8Array(this.view(address, length)).set(data);
    return { address, done: () => this.unmapPages(address, length) };
  }

  /** Address of a zeroed output text buffer of `size` bytes (string area 3+, up to 1 KiB). */
  outText(size: number): number {
    const offset = Scratch.STRINGS + 3 * 1024;
    this.u8.fill(0, offset, offset + size);
    return this.address + offset;
  }

  /** Reads the NUL-terminated text written into outText(). */
  readOutText(size: number): string {
    const offset = Scratch.STRINGS + 3 * 1024;
    const bytes = this.u8.subarray(offset, offset + size);
    const end = bytes.indexOf(0);
    return new TextDecoder().decode(bytes.subarray(0, end < 0 ? size : end));
  }

  /** Bytes the scratch area needs: 1 KiB of slots, 3 × 1 KiB of input strings, 1 KiB of output text. */
  static readonly SIZE = 8192;
}
