/** Comch client (host side): connects to a named server on the DPU. */
import { INTERNAL, internalOnly, HANDLE } from "../../engine/resource.ts";
import { doca } from "../../native/library.ts";
import { check } from "../../native/errors.ts";
import { CtxState } from "../../native/constants.ts";
import { type ComchConnection, newConnection } from "./comch-connection.ts";
import { connectionGone } from "./comch-connection-hooks.ts";
import { checkName, checkSizes, ComchEndpoint, configureEndpoint, createEndpoint, endpointSizes } from "./comch-endpoint.ts";
import { duration, integerIn, MAX_TASKS } from "../../engine/validate.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import type { Handle } from "../../load/types.ts";

export interface ComchClientOptions {
  device: Device;
  name: string;
  pe: ProgressEngine;
  /** How long to wait for the server; default 10 s. */
  timeoutMs?: number;
  maxMsgSize?: number;
  recvQueueSize?: number;
  sendTasks?: number;
  /** Bound on received messages not read yet, in bytes; default 64 MiB (see ComchEndpoint.maxUnreadBytes). */
  maxUnreadBytes?: number;
}

export class ComchClient extends ComchEndpoint<Handle<"doca_comch_client">> {
  readonly kind: string;
  #connection: ComchConnection | undefined;

  private constructor(token: symbol, handle: number, opts: ComchClientOptions, maxMsgSize: number, sendTasks: number, maxUnreadBytes: number) {
    internalOnly(token, "ComchClient");
    const ctx = doca().fns.doca_comch_client_as_ctx(handle);
    super(handle, ctx, [opts.device, opts.pe], opts, "doca_comch_client_task_send_alloc_init", maxMsgSize, sendTasks, maxUnreadBytes);
    this.kind = `ComchClient "${opts.name}"`;
  }

  /** Creates and starts a client and waits until it is connected (TimeoutError after timeoutMs). */
  static async connect(opts: ComchClientOptions): Promise<ComchClient> {
    checkSizes("ComchClient.connect", { maxMsgSize: opts.maxMsgSize, recvQueueSize: opts.recvQueueSize });
    integerIn("ComchClient.connect", "sendTasks", opts.sendTasks, 1, MAX_TASKS);
    duration("ComchClient.connect", "timeoutMs", opts.timeoutMs);
    opts.device.assertOpen();
    opts.pe.assertOpen();
    checkName(opts.name, opts.device[DEVINFO]);
    const d = doca();
    const f = d.fns;
    const { maxMsgSize, sendTasks, maxUnreadBytes } = endpointSizes("ComchClient.connect", opts);
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const handle = createEndpoint("doca_comch_client_create", opts, (name, out) => f.doca_comch_client_create(opts.device[HANDLE], name, out));
    let client: ComchClient | undefined;
    try {
      client = new ComchClient(INTERNAL, handle, opts, maxMsgSize, sendTasks, maxUnreadBytes);
      configureEndpoint("client", handle, sendTasks, opts, client.sendCallbacks);
      // DOCA_ERROR_IN_PROGRESS is the normal answer: RUNNING arrives through progress.
      if (client.core.start()) client.#adoptConnection();
      else {
        await client.core.untilRunning(
          `Comch server "${opts.name}" to accept the connection`,
          timeoutMs,
          `Comch client "${opts.name}": connection failed (the server refused it or is gone)`,
        );
      }
      return client;
    } catch (e) {
      if (client) await client.close().catch(() => {});
      else f.doca_comch_client_destroy(handle);
      throw e;
    }
  }

  get connection(): ComchConnection {
    this.assertOpen();
    return this.#connection!;
  }

  /**
   * Wraps the client's connection and tags it with its id at once: called from the RUNNING state callback, so a
   * message arriving in the same progress call already finds its owner.
   */
  #adoptConnection(): void {
    if (this.#connection && !this.#connection.closed) return;
    const d = doca();
    d.scratch.clear(119);
    check(doca().fns.doca_comch_client_get_connection(this[HANDLE], d.scratch.slot(119)), "doca_comch_client_get_connection");
    this.#connection = newConnection(d.scratch.u64(119), this);
  }

  /** An event on our connection before its user data was set. */
  protected connectionFor(_connection: number, _isNew: boolean): ComchConnection | undefined {
    if (!this.#connection && this.core.state === CtxState.RUNNING) this.#adoptConnection();
    return this.#connection && !this.#connection.closed ? this.#connection : undefined;
  }

  /** The client's connection ends when the client stops. */
  protected endConnection(_connection: ComchConnection): void {}

  protected endConnectionSync(_connection: ComchConnection): void {}

  /** The server went away when the running client leaves RUNNING. */
  protected override onStateChanged(prev: number, next: number): void {
    super.onStateChanged(prev, next);
    if (next === CtxState.RUNNING) this.#adoptConnection();
    else if (prev === CtxState.RUNNING) if (this.#connection) connectionGone(this.#connection);
  }

  protected destroyEndpoint(handle: number): void {
    check(doca().fns.doca_comch_client_destroy(handle), "doca_comch_client_destroy");
  }

  protected summary(): string {
    return `"${this.name}" on ${this.device.info.pciAddr} ${this.core.stateName}`;
  }
}
