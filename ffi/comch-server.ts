/** Comch server (DPU side): accepts host clients on a name, over a representor of the host function. */
import { clearTimeout, setTimeout } from "node:timers";
import { doca } from "./library.ts";
import { check, TimeoutError } from "./errors.ts";
import { comchCtxOwners, type CtxOwner, nativeCallbacks } from "./callbacks.ts";
import { CtxCore } from "./ctx.ts";
import { AsyncResource } from "./resource.ts";
import { ComchConnection, type ComchEndpoint } from "./comch-connection.ts";
import { checkName, checkSizes, copyMessage, forgetConnection, PumpGate, registerConnection, SendPath } from "./comch-endpoint.ts";
import type { Device, DeviceRep } from "./device.ts";
import type { ProgressEngine } from "./pe.ts";

export interface ComchServerOptions {
  device: Device;
  rep: DeviceRep;
  name: string;
  pe: ProgressEngine;
  maxMsgSize?: number;
  recvQueueSize?: number;
  /** Send tasks (and the most sends in flight); default 64. */
  sendTasks?: number;
}

export class ComchServer extends AsyncResource implements CtxOwner, ComchEndpoint {
  readonly kind: string;
  readonly name: string;
  readonly pe: ProgressEngine;
  readonly device: Device;
  readonly maxMsgSize: number;
  readonly #core: CtxCore;
  readonly #send: SendPath;
  readonly #gate: PumpGate;
  readonly #connections = new Map<number, ComchConnection>();
  readonly #acceptQueue: ComchConnection[] = [];
  readonly #acceptWaiters: ((c: ComchConnection) => void)[] = [];

  private constructor(handle: number, opts: ComchServerOptions, maxMsgSize: number, sendTasks: number) {
    super(handle, [opts.device, opts.rep, opts.pe], (h) => doca().fns.doca_comch_server_destroy(h));
    this.kind = `ComchServer "${opts.name}"`;
    this.name = opts.name;
    this.pe = opts.pe;
    this.device = opts.device;
    this.maxMsgSize = maxMsgSize;
    this.#gate = new PumpGate(opts.pe);
    this.#send = new SendPath(this, "doca_comch_server_task_send_alloc_init", sendTasks, maxMsgSize);
    this.#core = new CtxCore(doca().fns.doca_comch_server_as_ctx(handle), opts.pe, this);
  }

  /** Creates, configures and starts the server (it is listening when this returns). */
  static start(opts: ComchServerOptions): ComchServer {
    const d = doca();
    const f = d.fns;
    const caps = opts.device.info.caps;
    checkName(opts.name, opts.device.devinfo);
    checkSizes("ComchServer.start", { maxMsgSize: opts.maxMsgSize, recvQueueSize: opts.recvQueueSize, sendTasks: opts.sendTasks });
    const maxMsgSize = opts.maxMsgSize ?? caps.comchMaxMsgSize;
    const sendTasks = opts.sendTasks ?? 64;
    d.scratch.clear(0);
    check(
      f.doca_comch_server_create(opts.device.handle, opts.rep.handle, d.scratch.cstring(opts.name), d.scratch.slot(0)),
      "doca_comch_server_create",
      `name "${opts.name}" on ${opts.device.info.pciAddr}`,
    );
    const handle = d.scratch.u64(0);
    let server: ComchServer | undefined;
    try {
      const cbs = nativeCallbacks();
      check(f.doca_comch_server_task_send_set_conf(handle, cbs.taskOk.address, cbs.taskError.address, sendTasks), "doca_comch_server_task_send_set_conf");
      check(f.doca_comch_server_event_msg_recv_register(handle, cbs.msgRecv.address), "doca_comch_server_event_msg_recv_register");
      check(
        f.doca_comch_server_event_connection_status_changed_register(handle, cbs.connected.address, cbs.disconnected.address),
        "doca_comch_server_event_connection_status_changed_register",
      );
      if (f.doca_comch_server_event_consumer_register) {
        check(f.doca_comch_server_event_consumer_register(handle, cbs.consumerNew.address, cbs.consumerExpired.address), "doca_comch_server_event_consumer_register");
      }
      if (opts.maxMsgSize !== undefined) check(f.doca_comch_server_set_max_msg_size(handle, maxMsgSize), "doca_comch_server_set_max_msg_size");
      if (opts.recvQueueSize !== undefined) check(f.doca_comch_server_set_recv_queue_size(handle, opts.recvQueueSize), "doca_comch_server_set_recv_queue_size");
      server = new ComchServer(handle, opts, maxMsgSize, sendTasks);
      comchCtxOwners.set(server.#core.ctx, server);
      server.#core.start();
      return server;
    } catch (e) {
      if (server) server.close();
      else f.doca_comch_server_destroy(handle);
      throw e;
    }
  }

  /** Live connections. */
  get connections(): ComchConnection[] {
    return [...this.#connections.values()];
  }

  /** The next client connection (already connected ones first). */
  accept(opts: { timeoutMs?: number } = {}): Promise<ComchConnection> {
    this.assertOpen();
    const ready = this.#acceptQueue.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter = (c: ComchConnection) => {
        if (timer !== undefined) clearTimeout(timer);
        this.#gate.set(false);
        resolve(c);
      };
      if (opts.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const i = this.#acceptWaiters.indexOf(waiter);
          if (i >= 0) this.#acceptWaiters.splice(i, 1);
          this.#gate.set(false);
          reject(new TimeoutError(`a client to connect to Comch server "${this.name}"`, opts.timeoutMs!));
        }, opts.timeoutMs);
      }
      this.#acceptWaiters.push(waiter);
      this.#gate.set(true);
    });
  }

  /** Disconnects one client. */
  disconnect(connection: ComchConnection): void {
    check(doca().fns.doca_comch_server_disconnect(this.handle, connection.handle), "doca_comch_server_disconnect");
    this.#lost(connection.handle);
  }

  /** @internal ComchEndpoint */
  sendOn(connection: number, bytes: Uint8Array): Promise<void> {
    this.assertOpen();
    return this.#send.send(connection, bytes);
  }

  /** @internal ComchEndpoint */
  pump(on: boolean): void {
    if (!this.closed) this.#gate.set(on);
  }

  /** @internal */
  onConnection(connection: number, connected: boolean, successful: boolean): void {
    if (!connected) {
      this.#lost(connection);
      return;
    }
    if (!successful) return;
    const conn = new ComchConnection(connection, this, this.maxMsgSize);
    this.#connections.set(connection, conn);
    registerConnection(connection, this);
    const waiter = this.#acceptWaiters.shift();
    if (waiter) waiter(conn);
    else this.#acceptQueue.push(conn);
  }

  #lost(connection: number): void {
    const conn = this.#connections.get(connection);
    this.#connections.delete(connection);
    forgetConnection(connection);
    conn?.markDisconnected();
  }

  /** @internal */
  onConsumer(connection: number, consumerId: number, created: boolean): void {
    this.#connections.get(connection)?.noteRemoteConsumer(consumerId, created);
  }

  /** @internal */
  onMessage(buffer: number, length: number, connection: number): void {
    const conn = this.#connections.get(connection);
    if (conn) conn.deliver(copyMessage(buffer, length));
  }

  /** @internal */
  onTaskDone(_task: number, slot: number, ok: boolean): void {
    this.#send.done(slot, ok);
  }

  /** @internal */
  onStateChanged(_prev: number, next: number): void {
    this.#core?.noteState(next);
  }

  /** close(): disconnects every client, stops and destroys the server. */
  protected destroyNative(handle: number): void {
    const f = doca().fns;
    for (const conn of this.#connections.values()) {
      f.doca_comch_server_disconnect(handle, conn.handle);
      this.#lost(conn.handle);
    }
    const drained = this.#core.stopAndDrain();
    this.#send.shutdown(new Error(`${this.kind} closed`));
    this.#gate.drop();
    comchCtxOwners.delete(this.#core.ctx);
    this.#core.dispose();
    this.#send.free();
    if (!drained) throw new Error(`${this.kind}: the context did not stop within 5 s`);
    check(f.doca_comch_server_destroy(handle), "doca_comch_server_destroy");
  }

  protected summary(): string {
    return `"${this.name}" on ${this.device.info.pciAddr} ${this.#core.stateName} connections=${this.#connections.size}`;
  }
}
