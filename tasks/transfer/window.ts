/**
 * The window protocol, written once for every file copy that streams through a bounded window of slots (dma-copy's
 * extended sequence, rdma-copy in both modes). The file is cut into chunks of at most `slotSize` bytes, sent in file
 * order; a slot holds one chunk from its announcement until the receiver releases it. What differs between the
 * tasks is only how a chunk moves (a DMA or RDMA write by the sender, a DMA or RDMA read by the receiver, or nothing
 * when the receiver's side does the DMA) and how announcements and releases travel (Comch binary messages, RDMA
 * JSON messages): the callers pass those in.
 *
 * Both ends are driven by the tasks' Promises (the progress engine's pump settles them): no polling here. A sender
 * reads a chunk into its slot, starts its move, hashes it while it moves, and announces chunks in file order as their
 * moves land. A receiver checks each announcement, starts its fetch at once (several in flight), and finishes chunks
 * in file order: one read of the slot (a private copy when the peer can still write the slot: what is hashed is
 * what is written), then the release, the hash and the file write. The first failure anywhere ends the whole copy
 * (a wait for the peer included).
 */
import { PrivateCopies } from "./private-copy.ts";

export interface Chunk {
  slot: number;
  offset: number;
  length: number;
}

/** Something that can be fed bytes (a node:crypto Hash). */
export interface Hasher {
  update(bytes: Uint8Array): unknown;
}

/** Where a sender's chunks come from (a FileReader). */
export interface ChunkSource {
  readExactly(into: Uint8Array, position: number): void;
  /** After the last read: throws when the file changed while it was read (FileReader.assertUnchanged). */
  assertUnchanged?(): void;
}

/** Where a receiver's chunks go (an AtomicFile, committed or aborted by the caller). */
export interface ChunkSink {
  writeAtAsync(bytes: Uint8Array, position: number): Promise<void>;
}

export interface WindowGeometry {
  size: number;
  slotCount: number;
  slotSize: number;
  /** The local slot's bytes (the first `length`). */
  view(slot: number, length: number): Uint8Array;
}

/** The first failure of any concurrent part; waits race it so they end at once too. */
class FailureLatch {
  readonly promise: Promise<never>;
  #reject!: (e: unknown) => void;
  error: unknown;
  constructor() {
    this.promise = new Promise<never>((_, reject) => (this.#reject = reject));
    this.promise.catch(() => {}); // observed through race() or `error`
  }
  fail(e: unknown): void {
    if (this.error === undefined) {
      this.error = e;
      this.#reject(e);
    }
  }
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.promise]);
  }
}

export interface SenderEnds extends WindowGeometry {
  reader: ChunkSource;
  hash: Hasher;
  /** Moves the chunk in `slot` into the peer's slot (DMA/RDMA write); omitted when the receiver fetches it. */
  deliver?(chunk: Chunk): Promise<void>;
  /** Tells the peer the chunk is in its slot. Called in file order, one at a time. */
  announce(chunk: Chunk): Promise<void>;
  /** The peer's next release, as received (checked here against the chunks in flight). */
  nextRelease(): Promise<{ slot: number; offset?: number; length?: number }>;
  /** The error for a release that matches no chunk in flight. */
  badRelease(release: { slot: number; offset?: number; length?: number }): Error;
  /** Bytes released so far (the receiver has them). */
  onProgress?(done: number): void;
}

/** Sends the whole file through the window; resolves once the receiver released every chunk. */
export async function sendThroughWindow(o: SenderEnds): Promise<void> {
  const failure = new FailureLatch();
  const free = Array.from({ length: o.slotCount }, (_, slot) => slot);
  const inFlight = new Map<number, Chunk>();
  let offset = 0, released = 0;
  let announced: Promise<void> = Promise.resolve();
  while (offset < o.size || inFlight.size > 0) {
    if (offset < o.size && free.length > 0) {
      const chunk = { slot: free.shift()!, offset, length: Math.min(o.slotSize, o.size - offset) };
      const view = o.view(chunk.slot, chunk.length);
      o.reader.readExactly(view, chunk.offset);
      inFlight.set(chunk.slot, chunk);
      offset += chunk.length;
      const moved = o.deliver?.(chunk);
      moved?.catch(() => {}); // reported through the ordered announcements
      announced = announced.then(async () => {
        await moved;
        await o.announce(chunk);
      });
      announced.catch((e) => failure.fail(e));
      o.hash.update(view); // while it moves: the slot is only read until its release
      continue;
    }
    const release = await failure.race(o.nextRelease());
    const chunk = inFlight.get(release.slot);
    if (
      !chunk || (release.offset !== undefined && release.offset !== chunk.offset) ||
      (release.length !== undefined && release.length !== chunk.length)
    ) throw o.badRelease(release);
    inFlight.delete(release.slot);
    free.push(release.slot);
    released += chunk.length;
    o.onProgress?.(released);
  }
  await failure.race(announced);
  o.reader.assertUnchanged?.(); // before the checksum leaves: a file written meanwhile is no file the peer may keep
}

export interface ReceiverEnds extends WindowGeometry {
  hash: Hasher;
  file: ChunkSink;
  /**
   * The peer's next announcement, checked by the caller against what comes next (`expectedOffset`, the slot count,
   * the slot size and the file size); this side also refuses a slot announced again before its release.
   */
  nextAnnouncement(expectedOffset: number): Promise<Chunk>;
  /** The error for a slot announced again before its release. */
  slotHeld(chunk: Chunk): Error;
  /** Moves the chunk from the peer's slot into the local one (DMA/RDMA read); omitted when the peer delivers it. */
  fetch?(chunk: Chunk): Promise<void>;
  /** True when the peer can write the local slots (they are its target): each is then read once, into a copy. */
  peerWritable: boolean;
  /** Hands the slot back to the peer. Called in file order, one at a time. */
  release(chunk: Chunk): Promise<void>;
  /** Bytes written so far. */
  onProgress?(done: number): void;
}

/** Receives the whole file into `file` (not committed here); resolves once every chunk is written and released. */
export async function receiveThroughWindow(o: ReceiverEnds): Promise<void> {
  const failure = new FailureLatch();
  const copies = o.peerWritable ? new PrivateCopies(o.slotSize) : undefined;
  const held = new Uint8Array(o.slotCount);
  let announced = 0, written = 0;
  let finished: Promise<void> = Promise.resolve();
  let writing: Promise<void> = Promise.resolve(); // the write in place in flight, if any
  const finish = async (chunk: Chunk, fetched: Promise<void> | undefined) => {
    await fetched;
    const view = o.view(chunk.slot, chunk.length);
    if (copies) {
      // The peer can still write this slot: read it once, release it, then hash and write only the copy.
      const mine = await copies.copy(view);
      held[chunk.slot] = 0;
      await o.release(chunk);
      o.hash.update(mine);
      copies.hold(o.file.writeAtAsync(mine, chunk.offset));
    } else {
      // Only this side fills the slot, and not again before the release below.
      const stored = o.file.writeAtAsync(view, chunk.offset);
      writing = stored.catch(() => {});
      o.hash.update(view);
      await stored;
      held[chunk.slot] = 0;
      await o.release(chunk);
    }
    written += chunk.length;
    o.onProgress?.(written);
  };
  try {
    while (announced < o.size) {
      const chunk = await failure.race(o.nextAnnouncement(announced));
      if (held[chunk.slot]) throw o.slotHeld(chunk);
      held[chunk.slot] = 1;
      announced += chunk.length;
      const fetched = o.fetch?.(chunk);
      fetched?.catch((e) => failure.fail(e)); // a failed fetch ends the copy now, not when its turn comes
      finished = finished.then(() => finish(chunk, fetched));
      finished.catch((e) => failure.fail(e));
    }
    await failure.race(finished);
    await copies?.drain();
  } finally {
    // No write may still be under way once the caller aborts the file (after a failure) or commits it; a later step
    // of the chain cannot start one then (the file refuses writes once aborted).
    await writing;
    await copies?.settled();
  }
}
