/**
 * Every callback DOCA makes into JS goes through one bridge (task completions through their one entry point,
 * dispatchTaskCompletion, which a second completion source can call too): one native callback per kind, created on
 * first use and kept for the process (DOCA may call them while any context lives). DOCA hands back small integer ids
 * in the user data it carries (`union doca_data`): the ctx user data names a context owner, the Comch connection
 * user data names a connection owner. The id table is private to this module; no JS object crosses into C.
 *
 * An exception thrown while handling a callback must not unwind through DOCA's C frames: the bridge catches it and
 * gives it to the owner (fail()), which rejects whoever awaits that object, so it reaches the awaiting caller.
 */
import { doca } from "./library.ts";
import { CALLBACKS } from "./symbols.ts";
import type { NativeCallback } from "./types.ts";

/** Anything that receives callbacks: a failure while handling one goes to whoever awaits this object. */
export interface CallbackOwner {
  fail(error: unknown): void;
}

/** A context wrapper (ctx user data). */
export interface CtxOwner extends CallbackOwner {
  onStateChanged(prev: number, next: number): void;
  /** The one completion entry point of a context's task path (success and error alike). */
  onTaskDone?(task: number, taskUserData: number, ok: boolean): void;
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

const owners: (CallbackOwner | undefined)[] = [undefined]; // id 0 means "none"
const freeIds: number[] = [];

export function registerOwner(owner: CallbackOwner): number {
  const id = freeIds.pop() ?? owners.length;
  owners[id] = owner;
  return id;
}

export function unregisterOwner(id: number): void {
  if (id > 0 && owners[id]) {
    owners[id] = undefined;
    freeIds.push(id);
  }
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

type Args = [number, number, number, number];

/** The one bridge: finds the owner, runs the handler with the re-entrancy flag set, hands errors to the owner. */
function bridge<O extends CallbackOwner>(
  def: (typeof CALLBACKS)[keyof typeof CALLBACKS],
  route: (...args: Args) => O | undefined,
  handle: (owner: O, ...args: Args) => void,
): NativeCallback {
  return doca().backend.callback(def, (a = 0, b = 0, c = 0, d = 0) => {
    const owner = route(a, b, c, d);
    if (!owner) return;
    inCallback = true;
    try {
      handle(owner, a, b, c, d);
    } catch (e) {
      try {
        owner.fail(e);
      } catch {
        // fail() only rejects promises; never let anything reach DOCA's frames.
      }
    } finally {
      inCallback = false;
    }
  });
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

/**
 * Routes one task completion to its context's task path: the entry point every completion source uses (DOCA's
 * completion callbacks below; a native completion ring drained after progress can call it the same way).
 */
export function dispatchTaskCompletion(task: number, taskUserData: number, ctxUserData: number, ok: boolean): void {
  const owner = owners[ctxUserData] as CtxOwner | undefined;
  if (!owner?.onTaskDone) return;
  inCallback = true;
  try {
    owner.onTaskDone(task, taskUserData, ok);
  } catch (e) {
    try {
      owner.fail(e);
    } catch {
      // fail() only rejects promises; never let anything reach DOCA's frames.
    }
  } finally {
    inCallback = false;
  }
}

export function nativeCallbacks(): NativeCallbacks {
  if (made) return made;
  const b = doca().backend;
  const ctxById = (userData: number) => owners[userData] as CtxOwner | undefined;
  made = {
    stateChanged: bridge(CALLBACKS.ctxStateChanged, ctxById, (o, _ud, _ctx, prev, next) => o.onStateChanged(prev, next)),
    // Task completions are the hot path: straight to the completion entry point (its own call sites stay monomorphic).
    taskOk: b.callback(CALLBACKS.taskCompletion, (task, taskUd, ctxUd) => dispatchTaskCompletion(task, taskUd, ctxUd, true)),
    taskError: b.callback(CALLBACKS.taskCompletion, (task, taskUd, ctxUd) => dispatchTaskCompletion(task, taskUd, ctxUd, false)),
    msgRecv: bridge(CALLBACKS.msgRecv, (_e, _b, _l, conn) => connectionOwnerOf(conn), (o, _e, buffer, length) => o.onMessage(buffer, length)),
    connected: bridge(
      CALLBACKS.connectionStatus,
      (_e, conn, ok) => (ok === 1 ? connectionOwnerOf(conn, true) : undefined),
      (o) => o.onStatus(true, true),
    ),
    disconnected: bridge(CALLBACKS.connectionStatus, (_e, conn) => connectionOwnerOf(conn), (o, _e, _c, ok) => o.onStatus(false, ok === 1)),
    consumerNew: bridge(CALLBACKS.consumerEvent, (_e, conn) => connectionOwnerOf(conn), (o, _e, _c, id) => o.onRemoteConsumer(id, true)),
    consumerExpired: bridge(CALLBACKS.consumerEvent, (_e, conn) => connectionOwnerOf(conn), (o, _e, _c, id) => o.onRemoteConsumer(id, false)),
  };
  return made;
}
