/**
 * One native callback per kind per runtime, created on first use and never freed (DOCA may call them while any
 * context lives). DOCA hands back a small integer id in the ctx user data (`union doca_data`); it indexes the owner
 * table below, so no JS object ever crosses into native code.
 */
import { doca } from "./library.ts";
import { CALLBACKS } from "./symbols.ts";
import type { NativeCallback } from "./types.ts";

/** What a context wrapper implements to receive DOCA's callbacks. */
export interface CtxOwner {
  onStateChanged(prev: number, next: number): void;
  onTaskDone?(task: number, taskUserData: number, ok: boolean): void;
  onMessage?(buffer: number, length: number, connection: number): void;
  onConnection?(connection: number, connected: boolean, successful: boolean): void;
  onConsumer?(connection: number, consumerId: number, created: boolean): void;
}

const owners: (CtxOwner | undefined)[] = [undefined]; // id 0 means "none"
const freeIds: number[] = [];

export function registerOwner(owner: CtxOwner): number {
  const id = freeIds.pop() ?? owners.length;
  owners[id] = owner;
  return id;
}

export function unregisterOwner(id: number): void {
  if (owners[id]) {
    owners[id] = undefined;
    freeIds.push(id);
  }
}

export function ownerOf(id: number): CtxOwner | undefined {
  return owners[id];
}

/** Set while DOCA is inside one of our callbacks: progress() must not be re-entered from there. */
export let inCallback = false;

/** Per-connection routing for comch events, which carry a connection pointer, not our id. */
export const connectionOwners = new Map<number, CtxOwner>();
/** Comch ctx pointer → owner, to route events of connections not seen yet. */
export const comchCtxOwners = new Map<number, CtxOwner>();

function routeConnection(connection: number): CtxOwner | undefined {
  const known = connectionOwners.get(connection);
  if (known) return known;
  const d = doca();
  for (const fn of ["doca_comch_server_get_server_ctx", "doca_comch_client_get_client_ctx"] as const) {
    if (!d.has(fn)) continue;
    const ctx = d.fns[fn]!(connection);
    const owner = ctx ? comchCtxOwners.get(ctx) : undefined;
    if (owner) return owner;
  }
  // Fall back on the only comch context there is, if just one.
  return comchCtxOwners.size === 1 ? comchCtxOwners.values().next().value : undefined;
}

/** An exception must not unwind through DOCA's C frames: report it asynchronously and carry on. */
function report(e: unknown): void {
  void Promise.reject(e);
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
  made = {
    stateChanged: b.callback(CALLBACKS.ctxStateChanged, (userData, _ctx, prev, next) => {
      inCallback = true;
      try {
        owners[userData]?.onStateChanged(prev, next);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    taskOk: b.callback(CALLBACKS.taskCompletion, (task, taskUserData, ctxUserData) => {
      inCallback = true;
      try {
        owners[ctxUserData]?.onTaskDone?.(task, taskUserData, true);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    taskError: b.callback(CALLBACKS.taskCompletion, (task, taskUserData, ctxUserData) => {
      inCallback = true;
      try {
        owners[ctxUserData]?.onTaskDone?.(task, taskUserData, false);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    msgRecv: b.callback(CALLBACKS.msgRecv, (_event, buffer, length, connection) => {
      inCallback = true;
      try {
        routeConnection(connection)?.onMessage?.(buffer, length, connection);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    connected: b.callback(CALLBACKS.connectionStatus, (_event, connection, ok) => {
      inCallback = true;
      try {
        routeConnection(connection)?.onConnection?.(connection, true, ok === 1);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    disconnected: b.callback(CALLBACKS.connectionStatus, (_event, connection, ok) => {
      inCallback = true;
      try {
        routeConnection(connection)?.onConnection?.(connection, false, ok === 1);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    consumerNew: b.callback(CALLBACKS.consumerEvent, (_event, connection, id) => {
      inCallback = true;
      try {
        routeConnection(connection)?.onConsumer?.(connection, id, true);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
    consumerExpired: b.callback(CALLBACKS.consumerEvent, (_event, connection, id) => {
      inCallback = true;
      try {
        routeConnection(connection)?.onConsumer?.(connection, id, false);
      } catch (e) {
        report(e);
      } finally {
        inCallback = false;
      }
    }),
  };
  return made;
}
