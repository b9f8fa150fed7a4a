/**
 * What every DOCA context wrapper shares (DMA, Comch server/client, producer, consumer): our owner id in the ctx
 * user data, the state-changed callback, connecting to a progress engine, the context's task paths (a context = a
 * CtxCore + its task kinds: `core.addTasks(kind, capacity)`; the core is their completion target and stops them with
 * the context), start, waiting for a state, and stop.
 *
 * Stopping is asynchronous in DOCA: doca_ctx_stop may leave the context STOPPING while in-flight tasks are flushed
 * through their callbacks; it reaches IDLE inside a later doca_pe_progress. stop() awaits that transition while the
 * engine's pump runs (it sleeps on the notification fd when nothing moves), so the event loop is never blocked.
 * stopSync() is the bounded synchronous fallback that `using` ([Symbol.dispose]) and synchronous parents need: it
 * drives progress itself for at most STOP_TIMEOUT_MS. Prefer `await using` / `await x.close()`.
 */
import { doca } from "../native/library.ts";
import { check, DocaError, TimeoutError } from "../native/errors.ts";
import { CTX_STATE_NAMES, CtxState, DocaErrorCode } from "../native/constants.ts";
import { type CtxOwner, nativeCallbacks, registerOwner, routeTasks, type TaskTarget, unregisterOwner } from "./callbacks.ts";
import { type TaskKind, TaskPath } from "./task-path.ts";
import { remaining, Waiters } from "./waiters.ts";
import { hex, Resource, HANDLE } from "./resource.ts";
import type { ProgressEngine } from "./pe.ts";

/** How long a stop may take before close() gives up (the object then stays open and close() may be retried). */
export const STOP_TIMEOUT_MS = 10_000;

export class CtxCore {
  readonly ctx: number;
  readonly id: number;
  readonly pe: ProgressEngine;
  /** Last state DOCA reported through the state-changed callback. */
  state: number = CtxState.IDLE;
  readonly #changes: Waiters<void>;
  /** Set once the native context is destroyed: nothing may touch `ctx` any more. */
  #disposed = false;
  /** The context's task paths, one per task kind. */
  readonly #paths: TaskPath<never, never>[] = [];
  /** Where completions are routed by index (callbacks.ts): the paths, and targets of tasks a wrapper keeps itself. */
  readonly #targets: TaskTarget[] = [];

  constructor(ctx: number, pe: ProgressEngine, owner: CtxOwner) {
    const f = doca().fns;
    this.ctx = ctx;
    this.pe = pe;
    this.#changes = new Waiters<void>(pe);
    this.id = registerOwner(owner);
    routeTasks(this.id, this.#targets);
    try {
      check(f.doca_ctx_set_user_data(ctx, this.id), "doca_ctx_set_user_data");
      check(f.doca_ctx_set_state_changed_cb(ctx, nativeCallbacks().stateChanged.address), "doca_ctx_set_state_changed_cb");
      check(f.doca_pe_connect_ctx(pe[HANDLE], ctx), "doca_pe_connect_ctx");
    } catch (e) {
      unregisterOwner(this.id);
      throw e;
    }
  }

  /**
   * A task kind of this context: its path (slots, submit, completion, queue, flush on stop), whose completions come
   * back here. Give `path.completionCallbacks()` to the kind's *_set_conf before the context starts.
   */
  addTasks<A, B>(kind: TaskKind<A, B>, capacity: number): TaskPath<A, B> {
    const path = new TaskPath(kind, this.pe, capacity, this.#targets.length, this.id);
    this.#paths.push(path as unknown as TaskPath<never, never>);
    this.#targets.push(path);
    return path;
  }

  /**
   * A completion target for tasks the wrapper keeps for their whole life instead of taking a path (a SHA partial
   * session owns its task: DOCA keeps the running digest in it). Its index makes the task user data
   * (index * TASK_PATH_SPAN + slot, slot < TASK_PATH_SPAN); give `nativeCallbacks().taskOk/taskError` to the kind's
   * *_set_conf, so its completions come through the one bridge like every other.
   */
  addTarget(target: TaskTarget): number {
    this.#targets.push(target);
    return this.#targets.length - 1;
  }

  /** Before the stop: every path refuses new work (queued work rejects, kept tasks are freed). */
  refuseTasks(what: string): void {
    for (const path of this.#paths) path.refuse(new Error(`${what} closed before the ${path.noun} was submitted`));
  }

  /** IDLE: whatever DOCA did not flush settles, ring reservations are returned. */
  shutdownTasks(what: string): void {
    for (const path of this.#paths) path.shutdown(new Error(`${what} closed while the ${path.noun} was in flight`));
  }

  /** Called by the owner's onStateChanged. */
  noteState(next: number): void {
    this.state = next;
    this.#changes.resolveAll();
  }

  /** A callback of this context failed: whoever awaits a state change learns why. */
  fail(error: unknown): void {
    this.#changes.rejectAll(error);
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

  /** Waits (pumping the engine) until the context is RUNNING; an IDLE context means it failed to start. */
  async untilRunning(what: string, timeoutMs: number, idleMeans = `${what} failed to start (the context went back to idle)`): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.state !== CtxState.RUNNING) {
      // Closed meanwhile (an interrupted connect: the owner closed it while this waited): never ask DOCA about a
      // context that is gone.
      if (this.#disposed) throw new Error(`${what}: the context was closed while it started`);
      if (this.state === CtxState.IDLE && this.queryState() === CtxState.IDLE) throw new Error(idleMeans);
      await this.#nextChange(`${what} to start`, deadline, timeoutMs);
    }
  }

  async #nextChange(what: string, deadline: number, timeoutMs: number): Promise<void> {
    if (Date.now() >= deadline) throw new TimeoutError(what, timeoutMs);
    await this.#changes.wait(what, remaining(deadline)).catch((e) => {
      throw e instanceof TimeoutError ? new TimeoutError(what, timeoutMs) : e;
    });
  }

  /** Asks DOCA to stop; true when the context is IDLE at once (nothing was in flight). */
  requestStop(): boolean {
    if (this.queryState() === CtxState.IDLE) return true;
    const rc = doca().fns.doca_ctx_stop(this.ctx);
    if (rc !== 0 && rc !== DocaErrorCode.IN_PROGRESS && rc !== DocaErrorCode.AGAIN) throw new DocaError(rc, "doca_ctx_stop");
    this.state = this.queryState();
    return this.state === CtxState.IDLE;
  }

  /** After requestStop(): awaits IDLE through the engine's pump (in-flight tasks are flushed meanwhile). */
  async untilIdle(what: string, timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // A synchronous close may take over meanwhile and destroy the context: stop looking at it then.
    while (!this.#disposed && this.queryState() !== CtxState.IDLE) {
      await this.#nextChange(`${what} to stop`, deadline, timeoutMs);
    }
    this.state = CtxState.IDLE;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** The bounded synchronous fallback of stop() (for `using` and synchronous parents): drives progress itself. */
  stopSync(what: string, timeoutMs = STOP_TIMEOUT_MS): void {
    if (this.requestStop()) return;
    const deadline = Date.now() + timeoutMs;
    while (this.queryState() !== CtxState.IDLE) {
      if (!this.pe.progress() && Date.now() > deadline) throw new TimeoutError(`${what} to stop`, timeoutMs);
    }
    this.state = CtxState.IDLE;
  }

  dispose(): void {
    this.#disposed = true;
    for (const path of this.#paths) path.releaseCallbacks(); // a context that never started: its reservation

    this.#changes.rejectAll(new Error("context destroyed"));
    unregisterOwner(this.id);
  }
}

/**
 * A context wrapper: close() is a Promise (stop awaited, then destroy), `await using` works, and `using` falls back
 * to the bounded synchronous stop. Subclasses give their core, what to do once stopped, and the native destroy.
 */
export abstract class CtxResource<H extends number = number> extends Resource<H> {
  protected abstract readonly core: CtxCore | undefined;

  /**
   * What DOCA's callbacks reach this context through (callbacks.ts, given to its CtxCore): an object of its own, so
   * the handlers stay protected, off the package's public types. Subclasses add the events they receive.
   */
  protected callbackOwner(): CtxOwner {
    return { onStateChanged: (prev, next) => this.onStateChanged(prev, next), fail: (error) => this.fail(error) };
  }

  /** Before the stop (the task paths then refuse new work): reject other waiters. */
  protected beforeStop(): void {}
  /** After IDLE and the task paths settled what was left, before the native destroy. */
  protected afterStop(): void {}

  override close(): Promise<void> {
    return this.closeAsync();
  }

  /** Stops (awaiting IDLE only when DOCA is still flushing), then destroys; synchronous when nothing is in flight. */
  protected override destroyAsync(handle: number): Promise<void> | void {
    this.beforeStop();
    this.core?.refuseTasks(this.kind);
    if (!this.core || this.core.requestStop()) return this.#finish(handle);
    const core = this.core;
    // If a synchronous close took over while we waited, it already destroyed the context.
    return core.untilIdle(this.kind).then(() => core.disposed ? undefined : this.#finish(handle));
  }

  protected override destroySync(handle: number): void {
    this.beforeStop();
    this.core?.refuseTasks(this.kind);
    this.core?.stopSync(this.kind);
    this.#finish(handle);
  }

  #finish(handle: number): void {
    this.core?.shutdownTasks(this.kind);
    this.afterStop();
    this.destroyNative(handle);
    this.core?.dispose();
  }

  /** DOCA reported a state change. */
  protected onStateChanged(_prev: number, next: number): void {
    this.core?.noteState(next);
  }

  /** A callback of this context threw: reject whoever awaits it. */
  protected fail(error: unknown): void {
    this.core?.fail(error);
  }

  /**
   * For a constructor whose context failed to start: the core (if made) disposed, the native context destroyed by
   * `destroy`, and this object forgotten. The caller rethrows.
   */
  protected abandonUnstarted(core: CtxCore | undefined, destroy: () => void): void {
    core?.dispose();
    destroy();
    this.abandon();
  }

  /** How a task context prints (its summary()): its device, its state, the tasks in flight and its handle. */
  protected taskSummary(device: { info: { pciAddr: string } }, inflight: number): string {
    return `${device.info.pciAddr} ${this.core?.stateName ?? "?"} inflight=${inflight} ${hex(this[HANDLE])}`;
  }
}
