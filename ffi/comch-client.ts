/** Comch client (host side): connects to a named server on the DPU. */
import { clearTimeout, setTimeout } from "node:timers";
import { doca } from "./library.ts";
import { check, TimeoutError } from "./errors.ts";
import { CtxState } from "./constants.ts";
import { comchCtxOwners, type CtxOwner, nativeCallbacks } from "./callbacks.ts";
import { CtxCore } from "./ctx.ts";
import { AsyncResource } from "./resource.ts";
import { ComchConnection, type ComchEndpoint } from "./comch-connection.ts";
import { checkName, checkSizes, copyMessage, forgetConnection, PumpGate, registerConnection, SendPath } from "./comch-endpoint.ts";
import type { Device } from "./device.ts";
import type { ProgressEngine } from "./pe.ts";

export interface ComchClientOptions {
  device: Device;
  name: string;
  pe: ProgressEngine;
  /** How long to wait for the server; default 10 s. */
  timeoutMs?: number;
  maxMsgSize?: number;
  recvQueueSize?: number;
  sendTasks?: number;
}

export class ComchClient extends AsyncResource implements CtxOwner, ComchEndpoint {
  readonly kind: string;
  readonly name: string;
  readonly pe: ProgressEngine;
  readonly device: Device;
  readonly maxMsgSize: number;
  readonly #core: CtxCore;
  readonly #send: SendPath;
  readonly #gate: PumpGate;
  #connection: ComchConnection | undefined;

  private constructor(handle: number, opts: ComchClientOptions, maxMsgSize: number, sendTasks: number) {
    super(handle, [opts.device, opts.pe], (h) => doca().fns.doca_comch_client_destroy(h));
    this.kind = `ComchClient "${opts.name}"`;
    this.name = opts.name;
    this.pe = opts.pe;
    this.device = opts.device;
    this.maxMsgSize = maxMsgSize;
    this.#gate = new PumpGate(opts.pe);
    this.#send = new SendPath(this, "doca_comch_client_task_send_alloc_init", sendTasks, maxMsgSize);
    this.#core = new CtxCore(doca().fns.doca_comch_client_as_ctx(handle), opts.pe, this);
  }

  /** Creates and starts a client and waits until it is connected (TimeoutError after timeoutMs). */
  static async connect(opts: ComchClientOptions): Promise<ComchClient> {
    const d = doca();
    const f = d.fns;
    checkName(opts.name, opts.device.devinfo);
    checkSizes("ComchClient.connect", { maxMsgSize: opts.maxMsgSize, recvQueueSize: opts.recvQueueSize, sendTasks: opts.sendTasks });
    const maxMsgSize = opts.maxMsgSize ?? opts.device.info.caps.comchMaxMsgSize;
    const sendTasks = opts.sendTasks ?? 64;
    const timeoutMs = opts.timeoutMs ?? 10_000;
    d.scratch.clear(0);
    check(
      f.doca_comch_client_create(opts.device.handle, d.scratch.cstring(opts.name), d.scratch.slot(0)),
      "doca_comch_client_create",
      `name "${opts.name}" on ${opts.device.info.pciAddr}`,
    );
    const handle = d.scratch.u64(0);
    let client: ComchClient | undefined;
    try {
      const cbs = nativeCallbacks();
      check(f.doca_comch_client_task_send_set_conf(handle, cbs.taskOk.address, cbs.taskError.address, sendTasks), "doca_comch_client_task_send_set_conf");
      check(f.doca_comch_client_event_msg_recv_register(handle, cbs.msgRecv.address), "doca_comch_client_event_msg_recv_register");
      if (f.doca_comch_client_event_consumer_register) {
        check(f.doca_comch_client_event_consumer_register(handle, cbs.consumerNew.address, cbs.consumerExpired.address), "doca_comch_client_event_consumer_register");
      }
      if (opts.maxMsgSize !== undefined) check(f.doca_comch_client_set_max_msg_size(handle, maxMsgSize), "doca_comch_client_set_max_msg_size");
      if (opts.recvQueueSize !== undefined) check(f.doca_comch_client_set_recv_queue_size(handle, opts.recvQueueSize), "doca_comch_client_set_recv_queue_size");
      client = new ComchClient(handle, opts, maxMsgSize, sendTasks);
      comchCtxOwners.set(client.#core.ctx, client);
      // DOCA_ERROR_IN_PROGRESS is the normal answer: RUNNING arrives through progress.
      if (!client.#core.start()) await client.#awaitRunning(timeoutMs);
      d.scratch.clear(0);
      check(f.doca_comch_client_get_connection(handle, d.scratch.slot(0)), "doca_comch_client_get_connection");
      const connection = d.scratch.u64(0);
      client.#connection = new ComchConnection(connection, client, maxMsgSize);
      registerConnection(connection, client);
      return client;
    } catch (e) {
      if (client) await client.close().catch(() => {});
      else f.doca_comch_client_destroy(handle);
      throw e;
    }
  }

  async #awaitRunning(timeoutMs: number): Promise<void> {
    this.#gate.set(true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TimeoutError(`Comch server "${this.name}" to accept the connection`, timeoutMs)),
        timeoutMs,
      );
    });
    try {
      while (this.#core.state !== CtxState.RUNNING) {
        await Promise.race([this.#core.nextStateChange(), timeout]);
        if (this.#core.state === CtxState.IDLE) {
          throw new Error(`Comch client "${this.name}": connection failed (context went back to idle)`);
        }
      }
    } finally {
      clearTimeout(timer);
      this.#gate.set(false);
    }
  }

  get connection(): ComchConnection {
    this.assertOpen();
    return this.#connection!;
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
  onConsumer(_connection: number, consumerId: number, created: boolean): void {
    this.#connection?.noteRemoteConsumer(consumerId, created);
  }

  /** @internal */
  onMessage(buffer: number, length: number): void {
    this.#connection?.deliver(copyMessage(buffer, length));
  }

  /** @internal */
  onTaskDone(_task: number, slot: number, ok: boolean): void {
    this.#send.done(slot, ok);
  }

  /** @internal the server went away when the running client leaves RUNNING. */
  onStateChanged(prev: number, next: number): void {
    this.#core?.noteState(next);
    if (prev === CtxState.RUNNING && next !== CtxState.RUNNING) this.#dropConnection();
  }

  #dropConnection(): void {
    if (!this.#connection) return;
    forgetConnection(this.#connection.handle);
    this.#connection.markDisconnected();
  }

  protected destroyNative(handle: number): void {
    const drained = this.#core.stopAndDrain();
    this.#dropConnection();
    this.#send.shutdown(new Error(`${this.kind} closed`));
    this.#gate.drop();
    comchCtxOwners.delete(this.#core.ctx);
    this.#core.dispose();
    this.#send.free();
    if (!drained) throw new Error(`${this.kind}: the context did not stop within 5 s`);
    check(doca().fns.doca_comch_client_destroy(handle), "doca_comch_client_destroy");
  }

  protected summary(): string {
    return `"${this.name}" on ${this.device.info.pciAddr} ${this.#core.stateName}`;
  }
}
