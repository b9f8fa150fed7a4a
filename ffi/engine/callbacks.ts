/**
 * Every callback DOCA makes into JS, and every task completion the native completion ring recorded, goes through
 * one bridge here (deliver(): one re-entrancy flag, one catch): one native callback per kind, created on first use
 * and kept for the process (DOCA may call them while any context lives). DOCA hands back small integer ids in the
 * user data it carries (`union doca_data`): the ctx user data names a context owner, the Comch connection user data
 * names a connection owner, the task user data names a task path of that context and a slot in it. The id tables
 * are private to this module; no JS object crosses into C.
 *
 * Task completions are routed straight to the context's task paths (routeTasks, set by its CtxCore): a completion
 * goes ring → drainCompletions() → TaskPath.onTaskDone, or JS callback → deliver() → the same routing.
 *
 * An exception thrown while handling a callback must not unwind through DOCA's C frames: the bridge catches it and
 * gives it to the owner (fail()), which rejects whoever awaits that object, so it reaches the awaiting caller.
 */
import { doca } from "../native/library.ts";
import { CALLBACKS, RDMA_CALLBACKS } from "../native/symbols.ts";
import type { NativeCallback } from "../load/types.ts";
import {
  completionRing,
  COUNTED_TAG,
  RING_COUNTED_AT,
  RING_COUNTERS,
  RING_COUNTERS_AT,
  RING_ENTRY_BYTES,
  RING_HEADER_BYTES,
  releaseCompletions,
  reserveCompletions,
  returnCounter,
  takeCounter,
} from "../native/completion-ring.ts";

/** Anything that receives callbacks: a failure while handling one goes to whoever awaits this object. */
export interface CallbackOwner {
  fail(error: unknown): void;
}

/** A context wrapper (ctx user data). */
export interface CtxOwner extends CallbackOwner {
  onStateChanged(prev: number, next: number): void;
  /**
   * Comch server/client: the owner of a connection whose user data is not set (yet). `isNew`: a connection event,
   * the server creates the connection's wrapper; otherwise only one already known is returned.
   */
  connectionFor?(connection: number, isNew: boolean): ConnectionOwner | undefined;
}

/** A Comch connection (connection user data). */
export interface ConnectionOwner extends CallbackOwner {
  onMessage(buffer: number, length: number): void;
  onStatus(connected: boolean, successful: boolean): void;
  onRemoteConsumer(consumerId: number, created: boolean): void;
}

/** An RDMA connection event (doca_rdma_set_connection_state_callbacks), as the ctx owner receives it. */
export type RdmaConnectionEvent = "request" | "connected" | "failed" | "disconnected";

/** An RDMA context (ctx user data): its connections' events come through the bridge like every other callback. */
export interface RdmaCtxOwner extends CtxOwner {
  /** `connection` is DOCA's connection, `connectionUserData` what the context set on it (0 for a request). */
  onRdmaConnection(event: RdmaConnectionEvent, connection: number, connectionUserData: number): void;
}

/** Where a completed task goes: a context's task path (task-path.ts), given the slot from the task user data. */
export interface TaskTarget {
  onTaskDone(task: number, slot: number, ok: boolean): void;
}

/** A task path whose batch members' successes the ring only counts (task-path.ts, counted groups). */
export interface CountedTarget extends TaskTarget {
  /** `successes` counted members of the group in flight succeeded since the last drain. */
  onCounted(successes: number): void;
}

/**
 * Task user data = path index * TASK_PATH_SPAN + slot, or for a counted batch member COUNTED_TAG + counter *
 * TASK_PATH_SPAN + slot: a context with several task kinds (one path each) tells its
 * completions apart without a lookup. Slots stay below 2^20 (MAX_TASKS is 65536).
 */
export const TASK_PATH_SPAN = 1 << 20;

const owners: (CallbackOwner | undefined)[] = [undefined]; // id 0 means "none"
/** Per ctx owner id: its task paths, by path index (the array is the CtxCore's own, filled as it adds paths). */
const routes: (readonly TaskTarget[] | undefined)[] = [undefined];
const freeIds: number[] = [];

export function registerOwner(owner: CallbackOwner): number {
  const id = freeIds.pop() ?? owners.length;
  owners[id] = owner;
  return id;
}

export function unregisterOwner(id: number): void {
  if (id > 0 && owners[id]) {
    owners[id] = undefined;
    routes[id] = undefined;
    freeIds.push(id);
  }
}

/** Task completions with ctx user data `id` go to `paths[index]` (index from the task user data). */
export function routeTasks(id: number, paths: readonly TaskTarget[]): void {
  routes[id] = paths;
}

/** Set while DOCA is inside one of our callbacks: progress() must not be re-entered from there. */
export let inCallback = false;

/** Scratch slot reserved for reads made inside callbacks (the caller of progress may own the low slots). */
const CALLBACK_SLOT = 120;

/** The ctx owner of a context pointer, through the ctx user data we set (doca_ctx_get_user_data). */
function ctxOwnerOf(ctx: number): CtxOwner | undefined {
  if (!ctx) return undefined;
  const d = doca();
  d.scratch.clear(CALLBACK_SLOT);
  if (d.fns.doca_ctx_get_user_data(ctx, d.scratch.slot(CALLBACK_SLOT)) !== 0) return undefined;
  return owners[d.scratch.u64(CALLBACK_SLOT)] as CtxOwner | undefined;
}

/**
 * The owner of a Comch connection: its user data when set, else the server or client context it belongs to
 * knows it (a connection event creates it; other events may come before we could set the user data).
 */
function connectionOwnerOf(connection: number, isNew = false): ConnectionOwner | undefined {
  try {
    return findConnectionOwner(connection, isNew);
  } catch {
    // A wrapper that cannot be made now (its server is closing): the event has no owner. Never throw into C.
    return undefined;
  }
}

function findConnectionOwner(connection: number, isNew: boolean): ConnectionOwner | undefined {
  const f = doca().fns;
  const id = isNew ? 0 : f.doca_comch_connection_get_user_data(connection);
  if (id) return owners[id] as ConnectionOwner | undefined;
  const server = f.doca_comch_server_get_server_ctx?.(connection);
  const client = server ? 0 : f.doca_comch_client_get_client_ctx?.(connection);
  const ctx = server ? f.doca_comch_server_as_ctx(server) : client ? f.doca_comch_client_as_ctx(client) : 0;
  return ctxOwnerOf(ctx)?.connectionFor?.(connection, isNew);
}

/** Tags a connection with its owner's id, so every later event finds it directly. */
export function setConnectionOwner(connection: number, id: number): void {
  doca().fns.doca_comch_connection_set_user_data(connection, id);
}

/** What a native callback reports; deliver() switches on it (no per-callback closures on the hot path). */
const TASK_OK = 0, TASK_ERROR = 1, STATE = 2, MESSAGE = 3, CONNECTED = 4, DISCONNECTED = 5, CONSUMER_NEW = 6, CONSUMER_GONE = 7;
/** RDMA connection events (a: the connection, b: its user data). */
const RDMA_REQUEST = 10, RDMA_ESTABLISHED = 11, RDMA_FAILURE = 12, RDMA_DISCONNECT = 13;
const RDMA_EVENTS: Record<number, RdmaConnectionEvent> = {
  [RDMA_REQUEST]: "request",
  [RDMA_ESTABLISHED]: "connected",
  [RDMA_FAILURE]: "failed",
  [RDMA_DISCONNECT]: "disconnected",
};
/** Not DOCA callbacks: the task completions the native ring recorded / counted during the last doca_pe_progress. */
const RING = 8, COUNTERS = 9;

/**
 * The one bridge: runs an owner's handler with the re-entrancy flag set and hands anything it throws to the owner
 * (which rejects whoever awaits it); nothing unwinds through DOCA's C frames. For RING (no owner: each entry names
 * its own) every entry is routed, its exception to its own owner, and the ring is emptied.
 */
function deliver(owner: CallbackOwner | undefined, event: number, a: number, b: number, c: number): number {
  // DOCA may nest callbacks (a stop inside a handler flushes tasks at once): restore, never throw into C.
  const outer = inCallback;
  inCallback = true;
  try {
    switch (event) {
      case TASK_OK:
      case TASK_ERROR:
        completeTask(a, b, c, event === TASK_OK);
        return 1;
      case RING:
        return drainRing(a);
      case COUNTERS:
        return drainCounters();
      case STATE:
        (owner as CtxOwner).onStateChanged(a, b);
        break;
      case MESSAGE:
        (owner as ConnectionOwner).onMessage(a, b);
        break;
      case CONNECTED:
      case DISCONNECTED:
        (owner as ConnectionOwner).onStatus(event === CONNECTED, c === 1);
        break;
      case CONSUMER_NEW:
      case CONSUMER_GONE:
        (owner as ConnectionOwner).onRemoteConsumer(a, event === CONSUMER_NEW);
        break;
      case RDMA_REQUEST:
      case RDMA_ESTABLISHED:
      case RDMA_FAILURE:
      case RDMA_DISCONNECT:
        (owner as RdmaCtxOwner).onRdmaConnection(RDMA_EVENTS[event], a, b);
        break;
    }
  } catch (e) {
    failOwner(owner, e);
  } finally {
    inCallback = outer;
  }
  return 0;
}

function failOwner(owner: CallbackOwner | undefined, error: unknown): void {
  try {
    owner?.fail(error);
  } catch {
    // fail() only rejects promises; never let anything reach DOCA's frames.
  }
}

/**
 * One task completion to its path (ctx user data → the context's paths, task user data → path and slot; a counted
 * member's user data names its path's counter instead).
 */
function completeTask(task: number, taskUserData: number, ctxUserData: number, ok: boolean): void {
  const paths = routes[ctxUserData];
  if (!paths) return;
  try {
    const path = taskUserData < TASK_PATH_SPAN
      ? paths[0]
      : taskUserData >= COUNTED_TAG
      ? countedPaths[Math.floor((taskUserData - COUNTED_TAG) / TASK_PATH_SPAN) % RING_COUNTERS]
      : paths[Math.floor(taskUserData / TASK_PATH_SPAN)];
    path?.onTaskDone(task, taskUserData % TASK_PATH_SPAN, ok);
  } catch (e) {
    failOwner(owners[ctxUserData], e);
  }
}

const TWO32 = 4294967296;
/** The ring as u32 halves (plain numbers on every runtime: no BigInt per entry on Deno), once it exists. */
let ringView: Uint32Array | undefined;

/** Per ring counter: the path whose successes it counts, and the ctx owner its failures go to. */
const countedPaths: (CountedTarget | undefined)[] = [];
const countedOwners: number[] = [];
/**
 * The counters in use (drainCounters reads each once per drain that counted anything). Replaced, never changed in
 * place, so that a drain iterating it visits every counter even if a handler releases one meanwhile.
 */
let liveCounters: readonly number[] = [];

/** Hands every path its counted successes and zeroes the counters. */
function drainCounters(): number {
  const u32 = ringView!;
  u32[RING_COUNTED_AT >> 2] = 0;
  u32[(RING_COUNTED_AT >> 2) + 1] = 0;
  let total = 0;
  for (const c of liveCounters) {
    const at = (RING_COUNTERS_AT >> 2) + 2 * c;
    const n = u32[at] + u32[at + 1] * TWO32;
    if (n === 0) continue;
    u32[at] = 0;
    u32[at + 1] = 0;
    total += n;
    try {
      countedPaths[c]!.onCounted(n);
    } catch (e) {
      failOwner(owners[countedOwners[c]], e);
    }
  }
  return total;
}

/** Routes the first `stored` entries, in order, and empties the ring. */
function drainRing(stored: number): number {
  const u32 = ringView!;
  try {
    for (let i = 0, o = RING_HEADER_BYTES / 4; i < stored; i++, o += RING_ENTRY_BYTES / 4) {
      completeTask(u32[o] + u32[o + 1] * TWO32, u32[o + 2] + u32[o + 3] * TWO32, u32[o + 4] + u32[o + 5] * TWO32, u32[o + 6] !== 0);
    }
  } finally {
    u32[0] = 0;
    u32[1] = 0;
  }
  return stored;
}

/**
 * Hands every completion the native ring recorded to its task path, exactly as the JS callbacks would have. Call
 * after each doca_pe_progress (ProgressEngine.progress does). Returns how many there were. A count beyond the
 * ring's capacity means completions were not recorded (a progress without a drain, or reservations bypassed): that
 * throws, after delivering those that were, instead of dropping them quietly.
 */
export function drainCompletions(): number {
  const u32 = ringView;
  if (u32 === undefined) return 0;
  const count = u32[0] + u32[1] * TWO32;
  const counted = u32[RING_COUNTED_AT >> 2] !== 0 || u32[(RING_COUNTED_AT >> 2) + 1] !== 0;
  if (count === 0 && !counted) return 0;
  const capacity = u32[2];
  if (count !== 0) deliver(undefined, RING, Math.min(count, capacity), 0, 0);
  const successes = counted ? deliver(undefined, COUNTERS, 0, 0, 0) : 0;
  if (count > capacity) {
    throw new Error(
      `CompletionRing overflow: ${count - capacity} task completions were not recorded (more than ${capacity} ` +
        "between two drains: a doca_pe_progress without a drain, or reservations bypassed)",
    );
  }
  return count + successes;
}

/** The completion callbacks a context gives its *_set_conf, and whether they are the ring's. */
export interface CompletionCallbacks {
  ok: number;
  error: number;
  ring: boolean;
  /** The ring counter the path's counted batch members use, or -1 (every completion recorded). */
  counter: number;
  /** Returns the ring reservation (idempotent); call once the context can no longer complete tasks (IDLE). */
  release(): void;
}

/**
 * The completion callbacks a context with `tasks` tasks should give its *_set_conf: the native ring's (entries
 * reserved, see completion-ring.ts) when possible, else the JS ones. With `counted` (a path that submits batches,
 * and the ctx owner id its failures go to) the path also gets a ring counter when one is free.
 */
export function completionCallbacks(tasks: number, counted?: { path: CountedTarget; owner: number }): CompletionCallbacks {
  const r = completionRing();
  if (r && reserveCompletions(tasks)) {
    ringView ??= r.view;
    let held = true;
    const counter = counted ? takeCounter() ?? -1 : -1;
    if (counter >= 0) {
      countedPaths[counter] = counted!.path;
      countedOwners[counter] = counted!.owner;
      liveCounters = [...liveCounters, counter];
    }
    return {
      ok: r.okCallback,
      error: r.errorCallback,
      ring: true,
      counter,
      release() {
        if (!held) return;
        held = false;
        releaseCompletions(tasks);
        if (counter >= 0) {
          countedPaths[counter] = undefined;
          liveCounters = liveCounters.filter((c) => c !== counter);
          returnCounter(counter);
        }
      },
    };
  }
  const js = nativeCallbacks();
  return { ok: js.taskOk.address, error: js.taskError.address, ring: false, counter: -1, release() {} };
}

interface NativeCallbacks {
  stateChanged: NativeCallback;
  taskOk: NativeCallback;
  taskError: NativeCallback;
  msgRecv: NativeCallback;
  connected: NativeCallback;
  disconnected: NativeCallback;
  consumerNew: NativeCallback;
  consumerExpired: NativeCallback;
}

let made: NativeCallbacks | undefined;

export function nativeCallbacks(): NativeCallbacks {
  if (made) return made;
  const b = doca().backend;
  const ctx = (userData: number) => owners[userData];
  made = {
    stateChanged: b.callback(CALLBACKS.ctxStateChanged, (userData, _ctx, prev, next) => {
      const owner = ctx(userData);
      if (owner) void deliver(owner, STATE, prev, next, 0);
    }),
    // Task completions: routed like the ring's entries (the fallback when a context has no ring entries).
    taskOk: b.callback(CALLBACKS.taskCompletion, (task, taskUd, ctxUd) => void deliver(owners[ctxUd], TASK_OK, task, taskUd, ctxUd)),
    taskError: b.callback(CALLBACKS.taskCompletion, (task, taskUd, ctxUd) => void deliver(owners[ctxUd], TASK_ERROR, task, taskUd, ctxUd)),
    msgRecv: b.callback(CALLBACKS.msgRecv, (_event, buffer, length, connection) => {
      const owner = connectionOwnerOf(connection);
      if (owner) void deliver(owner, MESSAGE, buffer, length, 0);
    }),
    connected: b.callback(CALLBACKS.connectionStatus, (_event, connection, ok) => {
      const owner = ok === 1 ? connectionOwnerOf(connection, true) : undefined;
      if (owner) void deliver(owner, CONNECTED, 0, 0, ok);
    }),
    disconnected: b.callback(CALLBACKS.connectionStatus, (_event, connection, ok) => {
      const owner = connectionOwnerOf(connection);
      if (owner) void deliver(owner, DISCONNECTED, 0, 0, ok);
    }),
    consumerNew: b.callback(CALLBACKS.consumerEvent, (_event, connection, id) => {
      const owner = connectionOwnerOf(connection);
      if (owner) void deliver(owner, CONSUMER_NEW, id, 0, 0);
    }),
    consumerExpired: b.callback(CALLBACKS.consumerEvent, (_event, connection, id) => {
      const owner = connectionOwnerOf(connection);
      if (owner) void deliver(owner, CONSUMER_GONE, id, 0, 0);
    }),
  };
  return made;
}

interface RdmaConnectionCallbacks {
  request: NativeCallback;
  established: NativeCallback;
  failure: NativeCallback;
  disconnect: NativeCallback;
}

let madeRdma: RdmaConnectionCallbacks | undefined;

/**
 * The four callbacks doca_rdma_set_connection_state_callbacks takes, one each for the process, routed by the ctx user
 * data to the context's owner through deliver() (the re-entrancy flag and the catch every other callback has).
 */
export function rdmaConnectionCallbacks(): RdmaConnectionCallbacks {
  if (madeRdma) return madeRdma;
  const b = doca().backend;
  const event = (kind: number) =>
    b.callback(RDMA_CALLBACKS.connectionEvent, (connection, connectionUd, ctxUd) => {
      const owner = owners[ctxUd];
      if (owner) void deliver(owner, kind, connection, connectionUd, 0);
    });
  madeRdma = {
    request: b.callback(RDMA_CALLBACKS.connectionRequest, (connection, ctxUd) => {
      const owner = owners[ctxUd];
      if (owner) void deliver(owner, RDMA_REQUEST, connection, 0, 0);
    }),
    established: event(RDMA_ESTABLISHED),
    failure: event(RDMA_FAILURE),
    disconnect: event(RDMA_DISCONNECT),
  };
  return madeRdma;
}
