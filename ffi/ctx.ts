/**
 * The part every DOCA context wrapper shares (DMA, comch server/client, producer, consumer): our owner id in the
 * ctx user data, the state-changed callback, connecting to a progress engine, start, and a stop that drains.
 */
import { doca } from "./library.ts";
import { check, DocaError } from "./errors.ts";
import { CtxState, CTX_STATE_NAMES, DocaErrorCode } from "./constants.ts";
import { type CtxOwner, nativeCallbacks, registerOwner, unregisterOwner } from "./callbacks.ts";
import type { ProgressEngine } from "./pe.ts";

export class CtxCore {
  readonly ctx: number;
  readonly id: number;
  readonly pe: ProgressEngine;
  /** Last state DOCA reported through the state-changed callback. */
  state: number = CtxState.IDLE;
  #stateWaiters: (() => void)[] = [];

  constructor(ctx: number, pe: ProgressEngine, owner: CtxOwner) {
    const f = doca().fns;
    this.ctx = ctx;
    this.pe = pe;
    this.id = registerOwner(owner);
    try {
      check(f.doca_ctx_set_user_data(ctx, this.id), "doca_ctx_set_user_data");
      check(f.doca_ctx_set_state_changed_cb(ctx, nativeCallbacks().stateChanged.address), "doca_ctx_set_state_changed_cb");
      check(f.doca_pe_connect_ctx(pe.handle, ctx), "doca_pe_connect_ctx");
    } catch (e) {
      unregisterOwner(this.id);
      throw e;
    }
  }

  /** Called by the owner's onStateChanged. */
  noteState(next: number): void {
    this.state = next;
    const waiters = this.#stateWaiters;
    this.#stateWaiters = [];
    for (const w of waiters) w();
  }

  /** Resolves on the next state change (the pump must be demanded by the caller). */
  nextStateChange(): Promise<void> {
    return new Promise((resolve) => this.#stateWaiters.push(resolve));
  }

  /** The state as DOCA has it now. */
  queryState(): number {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_ctx_get_state(this.ctx, d.scratch.slot(0)), "doca_ctx_get_state");
    return d.scratch.u32At(0);
  }

  get stateName(): string {
    return CTX_STATE_NAMES[this.state] ?? String(this.state);
  }

  /** doca_ctx_start; returns true when already RUNNING, false when IN_PROGRESS (running comes via progress). */
  start(): boolean {
    const rc = doca().fns.doca_ctx_start(this.ctx);
    if (rc === DocaErrorCode.IN_PROGRESS) return false;
    check(rc, "doca_ctx_start");
    this.state = this.queryState();
    return this.state === CtxState.RUNNING;
  }

  /**
   * Stops the context and progresses until it is IDLE (in-flight tasks are flushed through their callbacks
   * meanwhile). Synchronous: callers are close paths. Returns false if it did not reach IDLE in time.
   */
  stopAndDrain(timeoutMs = 5000): boolean {
    const f = doca().fns;
    if (this.queryState() === CtxState.IDLE) return true;
    const rc = f.doca_ctx_stop(this.ctx);
    if (rc !== 0 && rc !== DocaErrorCode.IN_PROGRESS && rc !== DocaErrorCode.AGAIN) {
      throw new DocaError(rc, "doca_ctx_stop");
    }
    return this.pe.progressUntil(() => this.queryState() === CtxState.IDLE, timeoutMs);
  }

  dispose(): void {
    unregisterOwner(this.id);
  }
}
