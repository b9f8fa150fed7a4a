/**
 * Bytes verified are bytes committed (issue 29): a receiver whose window the peer can write (rdma-copy write mode,
 * dma-copy DPU → host) reads each announced slot exactly once, into memory of its own, and hashes and writes that
 * copy. Reading the window twice (once to hash, once to write) let a lying sender that kept writing after its
 * announcement get foreign bytes committed under the agreed checksum.
 *
 * The copy also frees the slot at once: the peer may refill it while this side hashes and writes the copy. Two
 * buffers alternate, so copying chunk k+1 overlaps writing chunk k; a buffer is reused only after its write ended.
 */
export class PrivateCopies {
  readonly #buffers: Uint8Array[];
  readonly #uses: (Promise<void> | undefined)[];
  #next = 0;
  #failure: { error: unknown } | undefined;

  /** `chunk`: the largest slot that will be copied; `depth`: buffers in rotation (memory: depth × chunk). */
  constructor(readonly chunk: number, depth = 2) {
    this.#buffers = Array.from({ length: depth }, () => new Uint8Array(chunk));
    this.#uses = new Array(depth).fill(undefined);
  }

  /**
   * Copies `peerWritable` (the slot, as announced) into the next private buffer, once its previous use has ended,
   * and returns the copy. Throws the failure of an earlier use (a write that failed).
   */
  async copy(peerWritable: Uint8Array): Promise<Uint8Array> {
    if (peerWritable.length > this.chunk) {
      throw new RangeError(`a slot of ${peerWritable.length} bytes exceeds the chunk of ${this.chunk}`);
    }
    const k = this.#next;
    this.#next = (k + 1) % this.#buffers.length;
    const previous = this.#uses[k];
    this.#uses[k] = undefined;
    if (previous) await previous;
    this.#throwIfFailed();
    const mine = this.#buffers[k].subarray(0, peerWritable.length);
    mine.set(peerWritable);
    return mine;
  }

  /** The copy handed out last stays in use until `use` settles (e.g. the file write from it). */
  hold(use: Promise<void>): void {
    const k = (this.#next + this.#buffers.length - 1) % this.#buffers.length;
    this.#uses[k] = use.catch((error) => void (this.#failure ??= { error }));
  }

  /** Waits until every copy's use ended; throws the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.#uses);
    this.#uses.fill(undefined);
    this.#throwIfFailed();
  }

  /** Waits until every copy's use ended, failed or not: call it before closing what they use (the file). */
  async settled(): Promise<void> {
    await Promise.all(this.#uses);
  }

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }
}
