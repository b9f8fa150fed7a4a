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

/**
 * The one bridge: runs an owner's handler with the re-entrancy flag set and hands anything it throws to the owner
 * (which rejects whoever awaits it); nothing unwinds through DOCA's C frames.
 */
function deliver(owner: CallbackOwner, event: number, a: number, b: number, c: number): void {
  inCallback = true;
  try {
    switch (event) {
      case TASK_OK:
      case TASK_ERROR:
        (owner as CtxOwner).onTaskDone?.(a, b, event === TASK_OK);
        break;
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
    }
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
 * Routes one task completion to its context's task path: exactly what DOCA's completion callbacks below do, as a
 * function another completion source (a native completion ring drained after each progress) can call.
 */
export function dispatchTaskCompletion(task: number, taskUserData: number, ctxUserData: number, ok: boolean): void {
  const owner = owners[ctxUserData] as CtxOwner | undefined;
  if (!owner) return;
  // deliver() without its event switch: this runs once per task (the ring drain calls it for every completion).
  inCallback = true;
  try {
    owner.onTaskDone?.(task, taskUserData, ok);
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
  const ctx = (userData: number) => owners[userData];
  made = {
    stateChanged: b.callback(CALLBACKS.ctxStateChanged, (userData, _ctx, prev, next) => {
      const owner = ctx(userData);
      if (owner) deliver(owner, STATE, prev, next, 0);
    }),
    // Task completions: the completion entry point (a second completion source calls it the same way).
    taskOk: b.callback(CALLBACKS.taskCompletion, (task, taskUd, ctxUd) => dispatchTaskCompletion(task, taskUd, ctxUd, true)),
    taskError: b.callback(CALLBACKS.taskCompletion, (task, taskUd, ctxUd) => dispatchTaskCompletion(task, taskUd, ctxUd, false)),
    msgRecv: b.callback(CALLBACKS.msgRecv, (_event, buffer, length, connection) => {
      const owner = connectionOwnerOf(connection);
      if (owner) deliver(owner, MESSAGE, buffer, length, 0);
    }),
    connected: b.callback(CALLBACKS.connectionStatus, (_event, connection, ok) => {
      const owner = ok === 1 ? connectionOwnerOf(connection, true) : undefined;
      if (owner) deliver(owner, CONNECTED, 0, 0, ok);
    }),
    disconnected: b.callback(CALLBACKS.connectionStatus, (_event, connection, ok) => {
      const owner = connectionOwnerOf(connection);
      if (owner) deliver(owner, DISCONNECTED, 0, 0, ok);
    }),
    consumerNew: b.callback(CALLBACKS.consumerEvent, (_event, connection, id) => {
      const owner = connectionOwnerOf(connection);
      if (owner) deliver(owner, CONSUMER_NEW, id, 0, 0);
    }),
    consumerExpired: b.callback(CALLBACKS.consumerEvent, (_event, connection, id) => {
      const owner = connectionOwnerOf(connection);
      if (owner) deliver(owner, CONSUMER_GONE, id, 0, 0);
    }),
  };
  return made;
}
