/**
 * What a Comch connection's endpoint (server or client) and DOCA's callbacks may do to it beyond its public methods:
 * reach its callback owner, tell it DOCA ended it, cut it for holding too much unread. Each connection registers its
 * hooks here when it is made; the endpoint calls these functions, so none of it is a member of the connection's
 * public type, and comch-endpoint.ts does not import comch-connection.ts (which imports it).
 */
import type { ConnectionOwner } from "../../engine/callbacks.ts";

export interface ConnectionHooks {
  /** What DOCA's callbacks reach the connection through (callbacks.ts). */
  owner: ConnectionOwner;
  /** DOCA ended the connection (a server's disconnect event, a client leaving RUNNING). */
  gone(): void;
  /**
   * The connection held the most unread bytes when its endpoint passed maxUnreadBytes: its unread messages are
   * dropped, the next recv() rejects with `error`, later messages are dropped, and a server disconnects the client.
   */
  cut(error: Error): void;
}

const hooks = new WeakMap<object, ConnectionHooks>();

export function registerConnectionHooks(connection: object, h: ConnectionHooks): void {
  hooks.set(connection, h);
}

function of(connection: object): ConnectionHooks {
  const h = hooks.get(connection);
  if (!h) throw new TypeError("not a ComchConnection");
  return h;
}

export function connectionOwner(connection: object): ConnectionOwner {
  return of(connection).owner;
}

export function connectionGone(connection: object): void {
  of(connection).gone();
}

export function connectionOverflowed(connection: object, error: Error): void {
  of(connection).cut(error);
}
