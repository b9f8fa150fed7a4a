/**
 * What the Comch server and client share: the context, the control-path send on the shared task path (messages
 * staged in a native slab, one slot per send task), option checks, and their connections as children.
 */
import { doca, loadLibc, mapPages } from "../../native/library.ts";
import { check, DocaError, OverflowError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { type CompletionCallbacks, type ConnectionOwner, type CtxOwner, nativeCallbacks } from "../../engine/callbacks.ts";
import { CtxCore, CtxResource } from "../../engine/ctx.ts";
import type { Native, TaskKind, TaskPath } from "../../engine/task-path.ts";
import type { ComchConnection } from "./comch-connection.ts";
import { connectionOverflowed, connectionOwner } from "./comch-connection-hooks.ts";
import type { Device } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";

type AllocFn = "doca_comch_server_task_send_alloc_init" | "doca_comch_client_task_send_alloc_init";

/** doca_comch_task_send: (connection, bytes) → the bytes staged in the slot's slab area, one task. */
class SendKind implements TaskKind<number, Uint8Array> {
  readonly taskName = "doca_comch_task_send";
  readonly noun = "message";
  task: Native = 0;
  readonly #slab: number;
  readonly #slabBytes: Uint8Array;

  constructor(readonly allocName: AllocFn, readonly ctxHandle: number, slots: number, readonly slotSize: number) {
    this.#slab = mapPages(slots * slotSize);
    this.#slabBytes = new Uint8Array(doca().backend.view(this.#slab, slots * slotSize));
  }

  allocInit(slot: number, connection: number, bytes: Uint8Array): number {
    // Callers check the size; this keeps a message that slipped past them out of the neighbouring slots.
    if (bytes.length > this.slotSize) return DocaErrorCode.TOO_BIG;
    const d = doca();
    const f = d.fns;
    const address = this.#slab + slot * this.slotSize;
    this.#slabBytes.set(bytes, slot * this.slotSize);
    d.scratch.clear(0);
    const rc = f[this.allocName](this.ctxHandle, connection, address, bytes.length, d.scratch.slot(0));
    if (rc !== 0) return rc;
    // The native form (bigint on Deno), as TaskPath hands it to doca_task_submit: a number there deoptimizes.
    this.task = d.raw.doca_comch_task_send_as_task(d.scratch.u64Native(0));
    return 0;
  }

  /** A queued message must not change under us if the caller reuses its array. */
  retain(connection: number, bytes: Uint8Array): [number, Uint8Array] {
    return [connection, bytes.slice()];
  }

  free(slots: number): void {
    loadLibc().libc.munmap(this.#slab, slots * this.slotSize);
  }
}

/** What one unread message costs besides its bytes (the Uint8Array and its buffer), for the unread bound. */
export const UNREAD_MESSAGE_OVERHEAD = 128;
/** Default bound on the unread messages of all an endpoint's connections, in bytes. */
export const DEFAULT_MAX_UNREAD_BYTES = 64 << 20;

/** A Comch server or client: the parent of its connections, with the send path they use. */
/** @internal what a connection asks of its endpoint: none of it is on the endpoint's public type (endpointForConnection). */
export interface EndpointForConnection {
  sendOn(connection: number, bytes: Uint8Array): Promise<void>;
  sendBatchOn(connection: number, messages: readonly Uint8Array[]): Promise<void>;
  noteUnread(connection: ComchConnection, delta: number): void;
  forgetConnection(connection: ComchConnection): void;
  endConnection(connection: ComchConnection): Promise<void> | void;
  endConnectionSync(connection: ComchConnection): void;
}

let forConnection: (endpoint: ComchEndpoint) => EndpointForConnection;

/** @internal for comch-connection.ts: a connection takes its endpoint's side once, when it is made. */
export function endpointForConnection(endpoint: ComchEndpoint): EndpointForConnection {
  return forConnection(endpoint);
}

export abstract class ComchEndpoint<H extends number = number> extends CtxResource<H> {
  static {
    forConnection = (e) => ({
      sendOn: (connection, bytes) => e.#sendOn(connection, bytes),
      sendBatchOn: (connection, messages) => e.#sendBatchOn(connection, messages),
      noteUnread: (connection, delta) => e.#noteUnread(connection, delta),
      forgetConnection: (connection) => e.forgetConnection(connection),
      endConnection: (connection) => e.endConnection(connection),
      endConnectionSync: (connection) => e.endConnectionSync(connection),
    });
  }

  abstract override readonly kind: string;
  readonly name: string;
  readonly pe: ProgressEngine;
  readonly device: Device;
  readonly maxMsgSize: number;
  /**
   * DOCA delivers every message in a callback, with no flow control on the control path: what the program has not
   * read yet waits in this process. This bounds it (bytes, all connections together, each message counted with
   * UNREAD_MESSAGE_OVERHEAD); past it the connection holding the most is cut (see overflowed).
   */
  readonly maxUnreadBytes: number;
  #unreadBytes = 0;
  readonly #unread = new Set<ComchConnection>();
  protected readonly core: CtxCore;
  readonly #send: SendKind;
  readonly #path: TaskPath<number, Uint8Array>;

  /** Creates the context core and the send path; the subclass configures (sendCallbacks) and starts. */
  protected constructor(
    handle: number,
    ctx: number,
    parents: (CtxResource | Device | ProgressEngine | import("../common/device.ts").DeviceRep)[],
    opts: { name: string; pe: ProgressEngine; device: Device },
    allocFn: AllocFn,
    maxMsgSize: number,
    sendTasks: number,
    maxUnreadBytes = DEFAULT_MAX_UNREAD_BYTES,
  ) {
    super(handle, parents);
    this.maxUnreadBytes = maxUnreadBytes;
    this.name = opts.name;
    this.pe = opts.pe;
    this.device = opts.device;
    this.maxMsgSize = maxMsgSize;
    this.#send = new SendKind(allocFn, handle, sendTasks, maxMsgSize);
    this.core = new CtxCore(ctx, opts.pe, this.callbackOwner());
    this.#path = this.core.addTasks(this.#send, sendTasks);
  }

  /** The send tasks' completion callbacks, for configureEndpoint (the native ring's when it has room). */
  protected get sendCallbacks(): CompletionCallbacks {
    return this.#path.completionCallbacks();
  }

  /** A connection sends through its endpoint's task path. */
  #sendOn(connection: number, bytes: Uint8Array): Promise<void> {
    this.assertOpen();
    const bad = this.#refusal(bytes);
    return bad ? Promise.reject(bad) : this.#path.submit(connection, bytes);
  }

  /** A connection's sendBatch: all messages checked first, then submitted in order, one Promise. */
  #sendBatchOn(connection: number, messages: readonly Uint8Array[]): Promise<void> {
    this.assertOpen();
    if (!Array.isArray(messages)) return Promise.reject(new TypeError(`${this.kind}: sendBatch takes an array of Uint8Array`));
    // Each element read once: what is checked is what is sent (a getter cannot swap in another array afterwards).
    const list: Uint8Array[] = new Array(messages.length);
    for (let i = 0; i < list.length; i++) {
      const bytes = messages[i];
      const bad = this.#refusal(bytes, `messages[${i}]`);
      if (bad) return Promise.reject(bad);
      list[i] = bytes;
    }
    return this.#path.submitBatch(new Array(list.length).fill(connection), list);
  }

  /** Why `bytes` cannot be sent, or undefined. */
  #refusal(bytes: Uint8Array, which?: string): Error | undefined {
    if (!(bytes instanceof Uint8Array)) return new TypeError(`${this.kind}: send takes a Uint8Array${which ? ` (${which} is not one)` : ""}`);
    if (bytes.length > this.maxMsgSize) {
      return new DocaError(DocaErrorCode.TOO_BIG, this.#send.allocName, `${which ? `${which}: ` : ""}message of ${bytes.length} bytes > max ${this.maxMsgSize}`);
    }
    return undefined;
  }

  /** Bytes of messages received and not read yet, on all connections (each counted with its overhead). */
  get unreadBytes(): number {
    return this.#unreadBytes;
  }

  /**
   * A connection queued (delta > 0) or handed out or dropped (delta < 0) unread bytes. Past the bound, the
   * connection holding the most is cut: a peer nobody reads is the one that piles up, not one being served.
   */
  #noteUnread(connection: ComchConnection, delta: number): void {
    this.#unreadBytes += delta;
    if (connection.unreadBytes > 0) this.#unread.add(connection);
    else this.#unread.delete(connection);
    while (this.#unreadBytes > this.maxUnreadBytes && this.#unread.size > 0) {
      let largest: ComchConnection | undefined;
      for (const c of this.#unread) if (!largest || c.unreadBytes > largest.unreadBytes) largest = c;
      connectionOverflowed(largest!, new OverflowError(
        `${this.kind}: more than ${this.maxUnreadBytes} bytes of messages were received and not read (maxUnreadBytes); ` +
          `the connection holding the most (${largest!.unreadBytes} bytes) was cut and its unread messages dropped`,
      ));
    }
  }

  /** An event for a connection whose user data is not set yet: the endpoint knows it (or not). */
  protected abstract connectionFor(connection: number, isNew: boolean): ComchConnection | undefined;

  protected override callbackOwner(): CtxOwner {
    return {
      ...super.callbackOwner(),
      connectionFor: (connection: number, isNew: boolean): ConnectionOwner | undefined => {
        const known = this.connectionFor(connection, isNew);
        return known && connectionOwner(known);
      },
    };
  }

  /** The connection ended: drop it from the endpoint's own lists (what it still holds unread stays). */
  protected forgetConnection(_connection: ComchConnection): void {}

  /** The server disconnects a client; the client's connection ends with the client's stop. */
  protected abstract endConnection(connection: ComchConnection): Promise<void> | void;
  /** Synchronous form for closeSync. */
  protected abstract endConnectionSync(connection: ComchConnection): void;

  protected override destroyNative(handle: number): void {
    this.destroyEndpoint(handle);
    this.#send.free(this.#path.capacity);
  }

  protected abstract destroyEndpoint(handle: number): void;
}

/** Each side's spelling of the configuration both share. */
const SIDE_FNS = {
  server: [
    "doca_comch_server_task_send_set_conf",
    "doca_comch_server_event_msg_recv_register",
    "doca_comch_server_event_consumer_register",
    "doca_comch_server_set_max_msg_size",
    "doca_comch_server_set_recv_queue_size",
  ],
  client: [
    "doca_comch_client_task_send_set_conf",
    "doca_comch_client_event_msg_recv_register",
    "doca_comch_client_event_consumer_register",
    "doca_comch_client_set_max_msg_size",
    "doca_comch_client_set_recv_queue_size",
  ],
} as const;

/** Configures a new server or client: send tasks, message and consumer events, and the sizes the caller gave. */
export function configureEndpoint(
  side: keyof typeof SIDE_FNS,
  handle: number,
  sendTasks: number,
  sizes: { maxMsgSize?: number; recvQueueSize?: number },
  tasks: CompletionCallbacks,
): void {
  const f = doca().fns;
  const cbs = nativeCallbacks();
  const [conf, recv, consumers, maxMsg, queue] = SIDE_FNS[side];
  // Send completions: the native completion ring when it has room, else JS callbacks.
  check(f[conf](handle, tasks.ok, tasks.error, sendTasks), conf);
  check(f[recv](handle, cbs.msgRecv.address), recv);
  const registerConsumers = f[consumers]; // optional: DOCA without the fast path has no consumer events
  if (registerConsumers) check(registerConsumers(handle, cbs.consumerNew.address, cbs.consumerExpired.address), consumers);
  if (sizes.maxMsgSize !== undefined) check(f[maxMsg](handle, sizes.maxMsgSize), maxMsg);
  if (sizes.recvQueueSize !== undefined) check(f[queue](handle, sizes.recvQueueSize), queue);
}

/**
 * Creates a server or client context named `opts.name` on `opts.device`: `create` is DOCA's create, given the name as a
 * C string and the out-parameter. Its handle, or DocaError naming the function, the name and the device.
 */
export function createEndpoint(
  createName: "doca_comch_server_create" | "doca_comch_client_create",
  opts: { name: string; device: Device },
  create: (name: number, out: number) => number,
): number {
  const d = doca();
  d.scratch.clear(0);
  check(create(d.scratch.cstring(opts.name), d.scratch.slot(0)), createName, `name "${opts.name}" on ${opts.device.info.pciAddr}`);
  return d.scratch.u64(0);
}

export function checkName(name: string, devinfo: number): void {
  if (typeof name !== "string" || name.length === 0) throw new TypeError(`Comch: the server name must be a non-empty string`);
  const d = doca();
  const getMax = d.fns.doca_comch_cap_get_max_name_len;
  if (!getMax) return;
  d.scratch.clear(0);
  check(getMax(devinfo, d.scratch.slot(0)), "doca_comch_cap_get_max_name_len");
  const max = d.scratch.u32At(0);
  if (max && new TextEncoder().encode(name).length + 1 > max) {
    throw new DocaError(DocaErrorCode.INVALID_VALUE, "doca_comch_cap_get_max_name_len", `server name "${name}" longer than ${max - 1} bytes`);
  }
}

/**
 * The sizes a new server or client runs with: the caller's, else the device's largest message and 64 send tasks;
 * the unread bound checked against the message size.
 */
export function endpointSizes(
  where: string,
  opts: { device: { info: { caps: { comchMaxMsgSize: number } } }; maxMsgSize?: number; sendTasks?: number; maxUnreadBytes?: number },
): { maxMsgSize: number; sendTasks: number; maxUnreadBytes: number } {
  const maxMsgSize = opts.maxMsgSize ?? opts.device.info.caps.comchMaxMsgSize;
  return { maxMsgSize, sendTasks: opts.sendTasks ?? 64, maxUnreadBytes: checkUnreadBound(where, opts.maxUnreadBytes, maxMsgSize) };
}

/** Checks the unread bound an endpoint is given (at least one message of the maximum size). */
function checkUnreadBound(where: string, maxUnreadBytes: number | undefined, maxMsgSize: number): number {
  if (maxUnreadBytes === undefined) return Math.max(DEFAULT_MAX_UNREAD_BYTES, maxMsgSize + UNREAD_MESSAGE_OVERHEAD);
  if (!Number.isSafeInteger(maxUnreadBytes) || maxUnreadBytes < maxMsgSize + UNREAD_MESSAGE_OVERHEAD) {
    throw new RangeError(
      `${where}: maxUnreadBytes must be an integer of at least ${maxMsgSize + UNREAD_MESSAGE_OVERHEAD} (one message of maxMsgSize), got ${maxUnreadBytes}`,
    );
  }
  return maxUnreadBytes;
}

/** Comch sizes are uint32_t in DOCA: refuse anything that would wrap or truncate on the way to C. */
export function checkSizes(where: string, sizes: Record<string, number | undefined>): void {
  for (const [name, value] of Object.entries(sizes)) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1 || value > 0xffff_ffff) {
      throw new RangeError(`${where}: ${name} must be an integer from 1 to 4294967295, got ${value}`);
    }
  }
}
