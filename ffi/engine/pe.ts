/**
 * ProgressEngine: doca_pe plus an internal pump. Contexts call demand()/release() while they have work outstanding
 * (tasks in flight, someone awaiting a message); the pump then runs progress() while things move (see
 * MAX_MICROTASK_MS), and when nothing moves it sleeps on the engine's notification handle (an fd polled off the
 * main thread) instead of spinning.
 */
import { setImmediate, setTimeout } from "node:timers";
import { doca, loadLibc, mapPages, type PresentFns, requireFns } from "../native/library.ts";
import { check } from "../native/errors.ts";
import { drainCompletions, inCallback } from "./callbacks.ts";
import { Resource, hex, HANDLE, NATIVE } from "./resource.ts";
import type { Handle } from "../load/types.ts";

const POLLIN = 1;
/** Empty progress rounds (macrotask turns) before the pump goes to sleep on the fd. */
const IDLE_SPINS = 32;
/** Longest single sleep: the pump re-checks demand at least this often. */
const MAX_SLEEP_MS = 50;

/**
 * After progress() completed something, the pump first lets promise continuations run (they usually submit the
 * next task) and progresses again within the same macrotask; an event-loop turn costs microseconds (more on Deno),
 * which at ~30 µs per 1 MiB copy was 10-20 % of the bandwidth. It still yields a full turn at least this often, so
 * timers and I/O never starve.
 */
const MAX_MICROTASK_MS = 2;
/** Microtask hops per yield: enough for a continuation two or three awaits away (memcpy in an async helper). */
const MICROTASK_HOPS = 4;

type NotifyFn = "doca_pe_get_notification_handle" | "doca_pe_request_notification" | "doca_pe_clear_notification";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function microtaskYield(): Promise<void> {
  for (let i = 0; i < MICROTASK_HOPS; i++) await null;
}

export class ProgressEngine extends Resource<Handle<"doca_pe">> {
  protected readonly kind = "ProgressEngine";
  /** The notification fd, or -1 when this DOCA has no notification API (the pump then sleeps on timers). */
  readonly notificationFd: number;
  /** pollfd for this engine (8 bytes in its own page, shared with the poll thread). */
  readonly #pollfd: number;
  readonly #pollView: DataView;
  #demand = 0;
  #pumping = false;
  #kick: (() => void) | undefined;
  #pendingPoll: Promise<number> | undefined;
  /** The notification API, when this DOCA has all of it. */
  readonly #notify: PresentFns<NotifyFn> | undefined;
  /** Hot path: doca_pe_progress and our handle in native form, in plain fields (a getter per call costs on Deno). */
  readonly #raw = doca().raw;
  #native: number | bigint;

  constructor() {
    const d = doca();
    d.scratch.clear(0);
    check(d.fns.doca_pe_create(d.scratch.slot(0)), "doca_pe_create");
    const handle = d.scratch.u64(0);
    super(handle, [], (h) => doca().fns.doca_pe_destroy(h));
    this.#native = this[NATIVE];
    let fd = -1;
    const f = d.fns;
    if (f.doca_pe_get_notification_handle && f.doca_pe_request_notification && f.doca_pe_clear_notification) {
      this.#notify = requireFns("doca_pe_get_notification_handle", "doca_pe_request_notification", "doca_pe_clear_notification");
      d.scratch.clear(0);
      if (this.#notify.doca_pe_get_notification_handle(handle, d.scratch.slot(0)) === 0) fd = d.scratch.i32At(0);
    }
    this.notificationFd = fd;
    this.#pollfd = mapPages(4096);
    this.#pollView = new DataView(d.backend.view(this.#pollfd, 8));
  }

  /** Runs DOCA's progress once; true when something happened. Never call it from inside a DOCA callback. */
  progress(): boolean {
    if (inCallback) throw new Error("ProgressEngine.progress() called from inside a DOCA callback");
    if (this.#native === 0) void this[NATIVE]; // closed: throws the usual "closed" error
    const moved = this.#raw.doca_pe_progress(this.#native) === 1;
    // The native completion ring: completions recorded during that progress go to their task paths now, through
    // the same bridge as JS callbacks (callbacks.ts).
    drainCompletions();
    return moved;
  }

  /** Tasks in flight on this engine (when DOCA can tell). */
  get inflight(): number | undefined {
    const d = doca();
    const get = d.fns.doca_pe_get_num_inflight_tasks;
    if (!get) return undefined;
    d.scratch.clear(0);
    check(get(this[HANDLE], d.scratch.slot(0)), "doca_pe_get_num_inflight_tasks");
    return d.scratch.u64(0);
  }

  /**
   * Sleeps until the engine signals (or `timeoutMs` passes) without spinning: arms the notification, polls its fd
   * off the main thread, clears it. Resolves true when woken by an event. Call progress() afterwards.
   */
  async wait(timeoutMs: number): Promise<boolean> {
    const handle = this[HANDLE];
    const notify = this.#notify;
    if (!notify || this.notificationFd < 0) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(timeoutMs, 1)));
      return false;
    }
    if (!this.#pendingPoll) {
      check(notify.doca_pe_request_notification(handle), "doca_pe_request_notification");
      // Something may have completed before the arm took effect: progress once more before sleeping.
      if (this.progress()) return true;
      this.#pollView.setInt32(0, this.notificationFd, true);
      this.#pollView.setInt16(4, POLLIN, true);
      this.#pollView.setInt16(6, 0, true);
      this.#pendingPoll = loadLibc().libc.pollAsync(this.#pollfd, 1, Math.max(0, Math.round(timeoutMs)));
      this.#pendingPoll.finally(() => {
        this.#pendingPoll = undefined;
        if (!this.closed) notify.doca_pe_clear_notification(this[HANDLE], this.notificationFd);
      });
    }
    const kicked = new Promise<number>((resolve) => (this.#kick = () => resolve(-2)));
    const rc = await Promise.race([this.#pendingPoll, kicked]);
    this.#kick = undefined;
    return rc > 0;
  }

  /** Tasks and waits keeping the pump running (0: nothing outstanding, the engine sleeps). */
  get outstanding(): number {
    return this.#demand;
  }

  /** A context has work outstanding: keep the pump running until the matching release(). */
  demand(): void {
    this.#demand++;
    if (this.#kick) this.#kick();
    if (!this.#pumping) void this.#pump();
  }

  /** The matching end of demand(). */
  release(): void {
    if (this.#demand > 0) this.#demand--;
  }

  /** Wakes a sleeping pump (new work was submitted). */
  kick(): void {
    if (this.#kick) this.#kick();
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    let idle = 0;
    let turnStart = performance.now();
    try {
      while (this.#demand > 0 && !this.closed) {
        let moved = false;
        for (let i = 0; i < 64 && this.progress(); i++) moved = true;
        if (moved) {
          idle = 0;
          if (performance.now() - turnStart < MAX_MICROTASK_MS) {
            await microtaskYield();
          } else {
            await nextTurn();
            turnStart = performance.now();
          }
        } else if (++idle < IDLE_SPINS) {
          await nextTurn();
          turnStart = performance.now();
        } else {
          await this.wait(MAX_SLEEP_MS);
          idle = IDLE_SPINS - 4; // after a sleep, spin a little before sleeping again
          turnStart = performance.now();
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  protected destroyNative(handle: number): void {
    const d = doca();
    this.#kick?.();
    check(d.fns.doca_pe_destroy(handle), "doca_pe_destroy");
    this.#native = 0;
    // The pollfd page is left mapped while a poll may still be reading it; a few bytes per engine.
    if (!this.#pendingPoll) loadLibc().libc.munmap(this.#pollfd, 4096);
  }

  protected summary(): string {
    return `${hex(this[HANDLE])} fd=${this.notificationFd} demand=${this.#demand}`;
  }
}
