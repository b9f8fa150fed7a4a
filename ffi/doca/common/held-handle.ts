/**
 * A handle that tasks read natively (an AES-GCM key, an erasure-coding matrix): closed while tasks in flight still read
 * it, its native destroy waits until they settle, and at the latest until its context stops (DOCA has flushed every
 * task then). The context keeps the waiting ones in a HeldHandles set and destroys them in its afterStop.
 */
import { NATIVE, Resource } from "../../engine/resource.ts";

/** A context's handles whose native destroy waits for their tasks. @internal */
export class HeldHandles {
  readonly #waiting = new Set<HeldHandle>();

  add(handle: HeldHandle): void {
    this.#waiting.add(handle);
  }

  delete(handle: HeldHandle): void {
    this.#waiting.delete(handle);
  }

  /** The context is IDLE: nothing native reads them any more. */
  destroyAll(): void {
    for (const handle of [...this.#waiting]) handle.destroyDeferred();
  }
}

export abstract class HeldHandle<H extends number = number> extends Resource<H> {
  #uses = 0;
  #deferred: number | undefined;

  /** The owning context's set of handles waiting for their tasks. */
  protected abstract readonly waiting: HeldHandles;
  /** The checked native destroy (doca_aes_gcm_key_destroy, doca_ec_matrix_destroy). */
  protected abstract destroyHandle(handle: number): void;

  /** @internal Runs submit with this handle kept alive natively until the task it returns settles. */
  using(submit: (native: number | bigint) => Promise<void>): Promise<void> {
    this.assertOpen();
    this.#uses++;
    let task: Promise<void>;
    try {
      task = submit(this[NATIVE]);
    } catch (err) {
      this.#release(); // refused before it was submitted: nothing native reads the handle for it
      throw err;
    }
    task.then(this.#release, this.#release);
    return task;
  }

  /** One task that read the handle settled (one function per handle: nothing allocated per task but the then). */
  readonly #release = (): void => {
    if (--this.#uses === 0 && this.#deferred !== undefined) this.destroyDeferred();
  };

  /** @internal */
  destroyDeferred(): void {
    const handle = this.#deferred;
    if (handle === undefined) return;
    this.#deferred = undefined;
    this.waiting.delete(this);
    this.destroyHandle(handle);
  }

  /** Tasks in flight that read this handle: its native destroy waits for them (DOCA reads it until they complete). */
  protected destroyNative(handle: number): void {
    if (this.#uses > 0) {
      this.#deferred = handle;
      this.waiting.add(this);
      return;
    }
    this.destroyHandle(handle);
  }
}
