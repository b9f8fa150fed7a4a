/**
 * The lifecycle every wrapper shares: an open/closed native handle, children closed before their parents,
 * use-after-close caught in JS (never handed to native code), double close a no-op, a FinalizationRegistry
 * backstop for handles the program forgot, and a short REPL summary.
 */
import { closedError } from "./errors.ts";
import { loadLibc } from "./library.ts";

interface Backstop {
  release: () => void;
}

/** Frees native handles whose JS object was collected while still open (best effort, errors ignored). */
const backstop = new FinalizationRegistry<Backstop>((held) => {
  try {
    held.release();
  } catch {
    // Nothing useful to do while the garbage collector runs.
  }
});

export abstract class Resource {
  #handle: number;
  readonly #children = new Set<Resource>();
  readonly #parents: Resource[] = [];
  #closing = false;
  #native: number | bigint | undefined;

  /** What the object is called in errors ("Mmap", "Device 0000:03:00.1"). */
  protected abstract readonly kind: string;

  protected constructor(handle: number, parents: Resource[] = [], release?: (handle: number) => void) {
    this.#handle = handle;
    // Check every parent before linking to any, so a refused object leaves no dangling child behind.
    for (const parent of parents) parent.assertOpen();
    for (const parent of parents) {
      parent.#children.add(this);
      this.#parents.push(parent);
    }
    if (release) backstop.register(this, { release: () => release(handle) }, this);
  }

  /** The native pointer; throws a clear Error once closed. */
  get handle(): number {
    if (this.#handle === 0) throw closedError(this.kind);
    return this.#handle;
  }

  /** The handle in the loader's fastest argument form (bigint on Deno), cached for hot paths. */
  get native(): number | bigint {
    const handle = this.handle;
    return (this.#native ??= loadLibc().backend.native(handle));
  }

  get closed(): boolean {
    return this.#handle === 0;
  }

  assertOpen(): void {
    if (this.#handle === 0 || this.#closing) throw closedError(this.kind);
  }

  /** For constructors that fail after super(): the caller freed the native object itself. */
  protected abandon(): void {
    backstop.unregister(this);
    this.#handle = 0;
    for (const parent of this.#parents) parent.#children.delete(this);
  }

  /** Frees the native object (children already gone). Errors propagate to close(). */
  protected abstract destroyNative(handle: number): void;

  /** Closes children (newest first), then this object. Closing twice does nothing. */
  close(): void | Promise<void> {
    if (this.#handle === 0 || this.#closing) return;
    this.#closing = true;
    try {
      for (const child of [...this.#children].reverse()) {
        // Async closers (comch) finish their native work synchronously; a rejection here has nowhere to go.
        const done = child.close();
        if (done) done.catch(() => {});
      }
      this.destroyNative(this.#handle);
    } finally {
      backstop.unregister(this);
      this.#handle = 0;
      this.#native = undefined;
      this.#closing = false;
      for (const parent of this.#parents) parent.#children.delete(this);
    }
  }

  [Symbol.dispose](): void {
    void this.close();
  }

  /** One line for humans: PCI address, range, state — not internals. */
  protected abstract summary(): string;

  toString(): string {
    return `${this.constructor.name} { ${this.closed ? "closed" : this.summary()} }`;
  }

  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/** Contexts whose close is awaited (Comch): the same lifecycle, with close() returning a Promise for `await using`. */
export abstract class AsyncResource extends Resource {
  override close(): Promise<void> {
    try {
      super.close();
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

export const hex = (n: number) => `0x${n.toString(16)}`;
