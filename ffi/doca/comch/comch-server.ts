/** Comch server (DPU side): accepts host clients on a name, over a representor of the host function. */
import { INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import { setImmediate } from "node:timers";
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError, TimeoutError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { nativeCallbacks } from "../../engine/callbacks.ts";
import { STOP_TIMEOUT_MS } from "../../engine/ctx.ts";
import { type ComchConnection, newConnection } from "./comch-connection.ts";
import { checkName, checkSizes, ComchEndpoint, configureEndpoint, createEndpoint, endpointSizes } from "./comch-endpoint.ts";
import { Waiters } from "../../engine/waiters.ts";
import { integerIn, MAX_TASKS } from "../../engine/validate.ts";
import type { Device, DeviceRep } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import type { Handle } from "../../load/types.ts";

export interface ComchServerOptions {
  device: Device;
  rep: DeviceRep;
  name: string;
  pe: ProgressEngine;
  maxMsgSize?: number;
  recvQueueSize?: number;
  /** Send tasks (and the most sends in flight); default 64. */
  sendTasks?: number;
  /** Bound on received messages not read yet, all connections together, in bytes; default 64 MiB (see ComchEndpoint.maxUnreadBytes). */
  maxUnreadBytes?: number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ComchServer extends ComchEndpoint<Handle<"doca_comch_server">> {
  readonly kind: string;
  /** Live connections by native handle (this server's own list; events route through the connection user data). */
  readonly #connections = new Map<number, ComchConnection>();
  readonly #acceptQueue: ComchConnection[] = [];
  readonly #acceptWaiters: Waiters<ComchConnection>;

  private constructor(token: symbol, handle: number, opts: ComchServerOptions, maxMsgSize: number, sendTasks: number, maxUnreadBytes: number) {
    internalOnly(token, "ComchServer");
    const ctx = doca().fns.doca_comch_server_as_ctx(handle);
    super(handle, ctx, [opts.device, opts.rep, opts.pe], opts, "doca_comch_server_task_send_alloc_init", maxMsgSize, sendTasks, maxUnreadBytes);
    this.kind = `ComchServer "${opts.name}"`;
    this.#acceptWaiters = new Waiters(opts.pe);
  }

  /** Creates, configures and starts the server (it is listening when this returns). */
  static start(opts: ComchServerOptions): ComchServer {
    checkSizes("ComchServer.start", { maxMsgSize: opts.maxMsgSize, recvQueueSize: opts.recvQueueSize });
    integerIn("ComchServer.start", "sendTasks", opts.sendTasks, 1, MAX_TASKS);
    opts.device.assertOpen();
    opts.rep.assertOpen();
    opts.pe.assertOpen();
    checkName(opts.name, opts.device[DEVINFO]);
    // New connections are routed to their server through this (no guessing among servers).
    requireFns("doca_comch_server_get_server_ctx");
    const d = doca();
    const f = d.fns;
    const { maxMsgSize, sendTasks, maxUnreadBytes } = endpointSizes("ComchServer.start", opts);
    const handle = createEndpoint(
      "doca_comch_server_create",
      opts,
      (name, out) => f.doca_comch_server_create(opts.device[HANDLE], opts.rep[HANDLE], name, out),
    );
    let server: ComchServer | undefined;
    try {
      server = new ComchServer(INTERNAL, handle, opts, maxMsgSize, sendTasks, maxUnreadBytes);
      configureEndpoint("server", handle, sendTasks, opts, server.sendCallbacks);
      const cbs = nativeCallbacks();
      check(
        f.doca_comch_server_event_connection_status_changed_register(handle, cbs.connected.address, cbs.disconnected.address),
        "doca_comch_server_event_connection_status_changed_register",
      );
      server.core.start();
      return server;
    } catch (e) {
      if (server) server.closeSync();
      else f.doca_comch_server_destroy(handle);
      throw e;
    }
  }

  /** Live connections. */
  get connections(): ComchConnection[] {
    return [...this.#connections.values()].filter((c) => c.connected);
  }

  /** The next client connection (already connected ones first). */
  accept(opts: { timeoutMs?: number } = {}): Promise<ComchConnection> {
    this.assertOpen();
    const ready = this.#acceptQueue.shift();
    if (ready) return Promise.resolve(ready);
    return this.#acceptWaiters.wait(`a client to connect to Comch server "${this.name}"`, opts.timeoutMs);
  }

  /** Disconnects one client (closing its connection and whatever was created on it). */
  disconnect(connection: ComchConnection): Promise<void> {
    return connection.closeAsync();
  }

  /** A connection event (or an event before the connection's user data was set). */
  protected connectionFor(connection: number, isNew: boolean): ComchConnection | undefined {
    const known = this.#connections.get(connection);
    if (known || !isNew) return known;
    const conn = newConnection(connection, this);
    this.#connections.set(connection, conn);
    if (!this.#acceptWaiters.resolveNext(conn)) this.#acceptQueue.push(conn);
    return conn;
  }

  /**
   * A connection ended. One nobody accepted leaves the accept queue unless it still holds messages to
   * read (those count against maxUnreadBytes), so clients that come and go cannot grow the queue.
   */
  protected override forgetConnection(connection: ComchConnection): void {
    this.#connections.delete(connection[HANDLE]);
    if (connection.unreadBytes > 0) return;
    const i = this.#acceptQueue.indexOf(connection);
    if (i >= 0) this.#acceptQueue.splice(i, 1);
  }

  /** doca_comch_server_disconnect; DOCA_ERROR_AGAIN means "call again later": retried through progress. */
  protected endConnection(connection: ComchConnection): Promise<void> | void {
    if (this.#tryDisconnect(connection) !== DocaErrorCode.AGAIN) return;
    return this.#retryDisconnect(connection);
  }

  async #retryDisconnect(connection: ComchConnection): Promise<void> {
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    do {
      if (Date.now() > deadline) throw new TimeoutError(`${this.kind} to disconnect a client`, STOP_TIMEOUT_MS);
      this.pe.demand();
      try {
        await nextTurn();
      } finally {
        this.pe.release();
      }
    } while (this.#tryDisconnect(connection) === DocaErrorCode.AGAIN);
  }

  /** Synchronous form (bounded): progresses the engine itself between attempts. */
  protected endConnectionSync(connection: ComchConnection): void {
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (this.#tryDisconnect(connection) === DocaErrorCode.AGAIN) {
      if (!this.pe.progress() && Date.now() > deadline) {
        throw new TimeoutError(`${this.kind} to disconnect a client`, STOP_TIMEOUT_MS);
      }
    }
  }

  #tryDisconnect(connection: ComchConnection): number {
    const handle = connection[HANDLE];
    const rc = doca().fns.doca_comch_server_disconnect(this[HANDLE], handle);
    if (rc === DocaErrorCode.AGAIN) return rc;
    this.#connections.delete(handle);
    // NOT_CONNECTED: the client left first; the connection is gone either way.
    if (rc !== 0 && rc !== DocaErrorCode.NOT_CONNECTED) throw new DocaError(rc, "doca_comch_server_disconnect");
    return 0;
  }

  protected override fail(error: unknown): void {
    super.fail(error);
    this.#acceptWaiters.rejectAll(error);
  }

  protected override beforeStop(): void {
    super.beforeStop();
    this.#acceptWaiters.rejectAll(new Error(`${this.kind} closed`));
  }

  protected destroyEndpoint(handle: number): void {
    check(doca().fns.doca_comch_server_destroy(handle), "doca_comch_server_destroy");
  }

  protected summary(): string {
    return `"${this.name}" on ${this.device.info.pciAddr} ${this.core.stateName} connections=${this.connections.length}`;
  }
}
