/**
 * The lifecycle every wrapper shares, i.e. the ownership tree:
 *
 *   - A child names its parents when it is created (a Buf: its inventory and mmap; a context: its device and
 *     progress engine; a producer: its Comch connection). The child holds its parents strongly; a parent knows its
 *     children only by native handle (handle → link with a WeakRef), so a forgotten child can still be collected.
 *   - Closing a parent closes its live children first (newest first), then frees itself. A child that was collected
 *     before anyone closed it is released through its link; one whose finalizer already ran is simply gone.
 *   - A FinalizationRegistry keyed by the child's link frees the native object of a forgotten child. The link holds
 *     the child's parents, so no parent is ever finalized (destroyed) before a child that still needs it.
 *   - A native destroy that fails leaves the object open (closed stays false) and the error says so: close() may be
 *     retried once the cause is gone.
 *   - close() is synchronous for plain objects and a Promise for contexts (CtxResource), whose stop is awaited through
 *     the progress engine. closeAsync() / `await using` never blocks the event loop; closeSync() / `using` falls back
 *     to a bounded synchronous stop for any context below (see ctx.ts).
 */
import { closedError } from "../native/errors.ts";
import { loadLibc } from "../native/library.ts";
import { printable } from "./printable.ts";

/** How a parent knows one child without keeping it alive. */
interface Link {
  readonly handle: number;
  readonly ref: WeakRef<Resource>;
  /** Frees the native object of a child that was collected while open (no JS object left to call). */
  release: ((handle: number) => unknown) | undefined;
  /** Held strongly on purpose: while this link is registered, every parent stays alive. */
  readonly parents: Resource[];
  done: boolean;
}

/** Keys of the native pointer accessors: for ffi/ modules, not exported by mod.ts (the REPL: diagnostics.ts). */
export const HANDLE: unique symbol = Symbol("doca-ts native handle");
export const NATIVE: unique symbol = Symbol("doca-ts native handle, loader form");

/**
 * H: the handle's type, e.g. Handle<"doca_dev"> (ffi/load/types.ts): a number at runtime, told apart from other DOCA
 * handles by the type checker, so `doca_mmap_add_dev(dev[HANDLE], mmap[HANDLE])` (swapped) fails `deno check`.
 */
export abstract class Resource<H extends number = number> {
  #handle: number;
  #native: number | bigint | undefined;
  #link: Link;
  readonly #children = new Map<number, Link>();
  #closing: Promise<void> | boolean = false;

  /** What the object is called in errors ("Mmap", "Device 0000:03:00.1"). */
  protected abstract readonly kind: string;

  static readonly #finalizer = new FinalizationRegistry<Link>((link) => Resource.#release(link));

  /** Releases a forgotten child's native object and unlinks it from its parents (errors ignored: GC time). */
  static #release(link: Link): void {
    if (link.done) return;
    link.done = true;
    Resource.#finalizer.unregister(link);
    try {
      link.release?.(link.handle);
    } catch {
      // Nothing useful to do with an error while collecting garbage.
    }
    Resource.#unlink(link);
  }

  /** Removes a link from its parents (only where it is still the entry: a handle may have been reused since). */
  static #unlink(link: Link): void {
    for (const parent of link.parents) {
      if (parent.#children.get(link.handle) === link) parent.#children.delete(link.handle);
    }
  }

  /**
   * @param release frees the native object if the JS object is collected while open (the finalizer's job);
   *   omit it for objects something else keeps alive until closed (contexts, registered with their engine).
   */
  protected constructor(handle: number, parents: Resource[] = [], release?: (handle: number) => unknown) {
    // Check every parent before linking to any, so a refused object leaves no dangling child behind.
    for (const parent of parents) parent.assertOpen();
    this.#handle = handle;
    this.#link = { handle, ref: new WeakRef(this), release, parents: [...parents], done: false };
    for (const parent of parents) parent.#children.set(handle, this.#link);
    if (release) Resource.#finalizer.register(this, this.#link, this.#link);
  }

  /** The native pointer, for ffi/ only (a symbol key: tasks and users never see it); throws once closed. */
  get [HANDLE](): H {
    if (this.#handle === 0) throw closedError(this.kind);
    return this.#handle as H;
  }

  /** The handle in the loader's fastest argument form (bigint on Deno), cached for hot paths (ffi/ only). */
  get [NATIVE](): number | bigint {
    if (this.#handle === 0) throw closedError(this.kind);
    return (this.#native ??= loadLibc().backend.native(this.#handle));
  }

  get closed(): boolean {
    return this.#handle === 0;
  }

  /** Live children (for tests and the REPL): how many objects this one would close first. */
  get childCount(): number {
    return this.#children.size;
  }

  assertOpen(): void {
    if (this.#handle === 0 || this.#closing !== false) throw closedError(this.kind);
  }

  /** For constructors that fail after super(): the caller freed the native object itself. */
  protected abandon(): void {
    this.#forget();
  }

  /**
   * From now on another object releases this one's native object (a buffer chained into a list is released with
   * the list's head): no finalizer of its own, so a collected member never releases what its head already did, and
   * no longer a child of its parents.
   */
  protected detachRelease(): void {
    Resource.#finalizer.unregister(this.#link);
    this.#link.release = undefined;
    // Its parents close it through the object that now owns it (a list's head), and must not keep it reachable
    // (a parent's children map would hold it, and through it the other parents, for ever)
    Resource.#unlink(this.#link);
  }

  /** Frees the native object (children already gone). Throwing leaves the object open. */
  protected abstract destroyNative(handle: number): void;

  /** The synchronous teardown (contexts: bounded stop first). Default: destroyNative. */
  protected destroySync(handle: number): void {
    this.destroyNative(handle);
  }

  /** The asynchronous teardown (contexts: await the stop through the engine). Default: destroyNative. */
  protected destroyAsync(handle: number): Promise<void> | void {
    this.destroyNative(handle);
  }

  /** Closes children (newest first), then this object, without awaiting anything. Closing twice does nothing. */
  closeSync(): void {
    // An async close still waiting (a context STOPPING) is finished here, synchronously: a synchronous parent
    // cannot wait for it. Its pending Promise then resolves as the object is closed.
    if (this.#handle === 0 || this.#closing === true) return;
    this.#closing = true;
    try {
      for (const link of this.#childLinks()) {
        const child = link.ref.deref();
        if (child) child.closeSync();
        else Resource.#release(link);
      }
      this.destroySync(this.#handle);
    } catch (e) {
      throw this.#stillOpen(e);
    } finally {
      this.#closing = false;
    }
    this.#forget();
  }

  /**
   * Closes children (newest first, each awaited), then this object; never blocks the event loop. Whatever can be
   * done at once is done before this returns (a context with nothing in flight is stopped and destroyed already):
   * only a real wait (a context still STOPPING) continues asynchronously.
   */
  closeAsync(): Promise<void> {
    if (this.#handle === 0) return Promise.resolve();
    if (this.#closing instanceof Promise) return this.#closing;
    if (this.#closing) return Promise.resolve(); // a synchronous close is running (we were called from it)
    this.#closing = true;
    let pending: Promise<void> | undefined;
    try {
      pending = this.#closeFrom(this.#childLinks(), 0);
    } catch (e) {
      this.#closing = false;
      return Promise.reject(this.#stillOpen(e));
    }
    if (!pending) {
      this.#closing = false;
      this.#forget();
      return Promise.resolve();
    }
    const closing = pending.then(
      () => {
        this.#closing = false;
        this.#forget();
      },
      (e) => {
        this.#closing = false;
        if (this.#handle === 0) return; // a synchronous close took over and finished it
        throw this.#stillOpen(e);
      },
    );
    this.#closing = closing;
    return closing;
  }

  /** Closes children from `links[i]` on, then destroys: undefined when all of it happened synchronously. */
  #closeFrom(links: Link[], i: number): Promise<void> | undefined {
    if (this.#handle === 0) return undefined; // a synchronous close took over meanwhile
    for (; i < links.length; i++) {
      const child = links[i].ref.deref();
      if (!child) {
        Resource.#release(links[i]);
        continue;
      }
      const done = child.closeAsync();
      if (!child.closed) {
        const next = i + 1;
        return done.then(() => this.#closeFrom(links, next));
      }
    }
    const destroyed = this.destroyAsync(this.#handle);
    return destroyed ? destroyed : undefined;
  }

  /** Plain objects close synchronously; contexts override this with closeAsync(). */
  close(): void {
    this.closeSync();
  }

  [Symbol.dispose](): void {
    this.closeSync();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.closeAsync();
  }

  #childLinks(): Link[] {
    return [...this.#children.values()].reverse();
  }

  /** Errors already told that their object stays open (a child's failure travels up through each parent's close). */
  static #toldStillOpen = new WeakSet<Error>();

  #stillOpen(e: unknown): unknown {
    if (e instanceof Error && !Resource.#toldStillOpen.has(e)) {
      Resource.#toldStillOpen.add(e);
      e.message += ` (${this.kind} is still open; close() may be retried)`;
    }
    return e;
  }

  #forget(): void {
    const link = this.#link;
    link.done = true;
    Resource.#finalizer.unregister(link);
    Resource.#unlink(link);
    this.#handle = 0;
    this.#native = undefined;
  }

  /** One line for humans: PCI address, range, state — not internals. */
  protected abstract summary(): string;

  /** Escaped (ffi/engine/printable.ts): names and vuids come from the device and its configuration, and reach a REPL raw. */
  toString(): string {
    return printable(`${this.constructor.name} { ${this.closed ? "closed" : this.summary()} }`);
  }

  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/**
 * Passed by ffi/ to constructors that must not be called from outside (a forged handle would reach native code):
 * module-private to ffi/, not exported by mod.ts.
 */
export const INTERNAL: unique symbol = Symbol("doca-ts internal constructor");

export function internalOnly(token: unknown, what: string): void {
  if (token !== INTERNAL) throw new TypeError(`${what} objects are created by doca-ts, not with new ${what}(...)`);
}

export const hex = (n: number) => `0x${n.toString(16)}`;
