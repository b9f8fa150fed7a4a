/**
 * DOCA RDMA: one Rdma context (a device, a progress engine, its permissions) with one or more connections, made by
 * exchanging connection details out of band (exportConnection → peer → connect) or by RDMA CM (listen/accept,
 * connectTo). Every task kind — send, send with immediate, receive, write, write with immediate, read, atomic
 * compare-and-swap and fetch-and-add — goes through the one task path (task-path.ts): the same DocaError on submit
 * or completion, the same completion ring, the same flush when the context stops.
 *
 * Connections are not separate DOCA objects to destroy: they live and die with their context; a connection's
 * methods refuse work once it is disconnected or its Rdma closed.
 */
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError, TimeoutError } from "../../native/errors.ts";
import { Access, DocaErrorCode } from "../../native/constants.ts";
import { CtxCore } from "../../engine/ctx.ts";
import { createContext, TaskContext } from "../common/task-context.ts";
import { HANDLE, hex, NATIVE } from "../../engine/resource.ts";
import type { TaskPath } from "../../engine/task-path.ts";
import { Waiters } from "../../engine/waiters.ts";
import { duration, integerIn, permissionMask } from "../../engine/validate.ts";
import { type CtxOwner, rdmaConnectionCallbacks, type RdmaConnectionEvent, type RdmaCtxOwner } from "../../engine/callbacks.ts";
import { EndWatchers } from "../../engine/end-watchers.ts";
import type { Handle } from "../../load/types.ts";
import { Buf, BufInventory } from "../common/buf.ts";
import { Mmap } from "../common/mmap.ts";
import { NativeMemory } from "../common/memory.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import { type RdmaKind, type RdmaKinds, rdmaKinds, type RdmaOp, type ReceiveRequest } from "./rdma-kinds.ts";

/** enum doca_rdma_transport_type. */
export const RdmaTransport = { RC: 0, DC: 1 } as const;
/** enum doca_rdma_opcode: what a completed receive carried. */
export const RdmaOpcode = { SEND: 0, SEND_WITH_IMM: 1, WRITE_WITH_IMM: 2 } as const;
/** enum doca_rdma_addr_type. */
const ADDR_IPV4 = 0, ADDR_IPV6 = 1;
/** What a queued recv() message counts for beyond its bytes (its object), against maxUnreadBytes. */
const UNREAD_MESSAGE_OVERHEAD = 128;
/** Default bound on the messages recv() has not taken, in bytes. */
const DEFAULT_MAX_UNREAD_BYTES = 64 << 20;

export interface RdmaOptions {
  /** Access flags remote peers get on memory through this context; default LOCAL_READ_WRITE | RDMA_READ | RDMA_WRITE. */
  permissions?: number;
  /** GID table index (doca_rdma_set_gid_index); the device's default when omitted. */
  gidIndex?: number;
  /** Connections this context may hold; default 1, at most 65535. */
  maxConnections?: number;
  /** Transport type; default "rc" (reliable connection). */
  transport?: "rc" | "dc";
  /** Tasks of each kind preallocated (and most in flight per kind); default 64, at most 16384. */
  maxTasks?: number;
  /** Receives kept posted for recv() (buffers made with the context); default none: recv() then says to set it. */
  receives?: number;
  /** Bytes per buffer of those receives; default 4096. */
  receiveSize?: number;
  /**
   * Bound on received messages recv() has not taken yet, in bytes (each counted with its length plus 128); default
   * 64 MiB, at least one message of receiveSize. Past it, a receive that completes is not posted again until recv()
   * takes messages: the peer's sends then wait for a receive (as on a receiver-not-ready), nothing is dropped.
   */
  maxUnreadBytes?: number;
  /** How long create() waits for the context to run; default 10 s. */
  timeoutMs?: number;
  /** Local Bufs per list (Buf.chain) in send, write and read tasks (doca_rdma_set_max_send_buf_list_len); DOCA's default when omitted. */
  maxSendBufListLen?: number;
  /** Bufs per list in a receive's destination (doca_rdma_task_receive_set_dst_buf_list_len); DOCA's default when omitted. */
  receiveBufListLen?: number;
}

/** A received message: its bytes (copied out), immediate data (host order), opcode and connection. */
export interface RdmaMessage {
  bytes: Uint8Array;
  immediate: number | undefined;
  opcode: number;
  connection: RdmaConnection | undefined;
}

/** Result of receive(buf): where the message landed and what came with it. */
export interface RdmaReceived {
  buf: Buf;
  length: number;
  immediate: number | undefined;
  opcode: number;
  connection: RdmaConnection | undefined;
}

type ConnState = "exported" | "requested" | "connecting" | "connected" | "disconnected" | "failed" | "rejected";

/** Every RDMA symbol an Rdma needs to exist (optional in the table: older DOCA / no libdoca_rdma). */
const rdmaFns = () =>
  requireFns(
    "doca_rdma_create",
    "doca_rdma_destroy",
    "doca_rdma_as_ctx",
    "doca_rdma_set_permissions",
    "doca_rdma_export",
    "doca_rdma_connect",
  );

/** What RdmaConnection may ask of its Rdma beyond its public methods (set in Rdma's static block). */
let submitOn: (rdma: Rdma, kind: keyof RdmaKinds, connection: RdmaConnection, op: RdmaOp) => Promise<void>;
let submitBatchOn: (rdma: Rdma, kind: keyof RdmaKinds, connection: RdmaConnection, ops: RdmaOp[]) => Promise<void>;
let failRdma: (rdma: Rdma, error: unknown) => void;
/** A connection found gone through its tasks: Rdma stops tracking it, as when DOCA reports the end. */
let forgetOn: (rdma: Rdma, connection: RdmaConnection) => void;

/** Task errors that mean the connection itself is gone (the peer vanished or disconnected, DOCA closed it). */
const CONNECTION_GONE: ReadonlySet<number> = new Set([
  DocaErrorCode.CONNECTION_RESET,
  DocaErrorCode.CONNECTION_ABORTED,
  DocaErrorCode.NOT_CONNECTED,
]);

function checkBuf(value: unknown, where: string): asserts value is Buf {
  if (!Buf.isOpenBuf(value)) {
    throw new TypeError(`${where} must be an open Buf from BufInventory.bufByAddr/bufByData`);
  }
}

function checkImmediate(where: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw new RangeError(`${where}: immediate must be an integer from 0 to 4294967295, got ${String(value)}`);
  }
  return value;
}

function checkU64(where: string, name: string, value: unknown): bigint {
  const v = typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof v !== "bigint" || v < 0n || v >= 1n << 64n) {
    throw new RangeError(`${where}: ${name} must be an unsigned 64-bit integer (number or bigint), got ${String(value)}`);
  }
  return v;
}

export class Rdma extends TaskContext<Handle<"doca_rdma">> {
  protected readonly kind = "Rdma";
  readonly permissions: number;
  readonly maxConnections: number;
  protected readonly core: CtxCore;
  readonly #kinds: RdmaKinds;
  /** One task path per kind, indexed like the kinds (the task user data's high bits). */
  readonly #paths: TaskPath<unknown, unknown>[] = [];
  readonly #byName = new Map<string, TaskPath<unknown, unknown>>();
  /** Connections by native handle, and by our id (the connection user data). */
  readonly #connections = new Map<number, RdmaConnection>();
  readonly #byId = new Map<number, RdmaConnection>();
  #nextId = 1;
  readonly #requests: RdmaConnection[] = [];
  readonly #requestWaiters: Waiters<RdmaConnection>;
  #listening: number | undefined;
  /** Automatic receives (messages()/recv()): posted buffers and the messages waiting for a reader. */
  #autoRecv: AutoReceive | undefined;
  readonly #receiveBuffers: ReceiveBuffers | undefined;
  #failure: unknown;

  static {
    submitOn = (rdma, kind, connection, op) => rdma.#path(kind).submit(connection, op);
    submitBatchOn = (rdma, kind, connection, ops) => rdma.#path(kind).submitBatch(ops.map(() => connection), ops);
    failRdma = (rdma, error) => rdma.fail(error);
    forgetOn = (rdma, connection) => rdma.#forgetConnection(connection);
  }

  private constructor(handle: number, device: Device, pe: ProgressEngine, permissions: number, opts: RdmaOptions, buffers: ReceiveBuffers | undefined) {
    super(handle, device, pe, opts.maxTasks ?? 64);
    this.permissions = permissions;
    this.maxConnections = opts.maxConnections ?? 1;
    this.#requestWaiters = new Waiters(pe);
    this.#receiveBuffers = buffers;
    this.#kinds = rdmaKinds((slot, typed, ok, req) => this.#onReceive(slot, typed, ok, req));
    this.core = new CtxCore(rdmaFns().doca_rdma_as_ctx(handle), pe, this.callbackOwner());
  }

  /**
   * Creates, configures and starts an RDMA context on `device`. Checks every option before anything native exists;
   * a device without RDMA (or a DOCA without libdoca_rdma) is DocaError NOT_SUPPORTED.
   */
  static async create(device: Device, pe: ProgressEngine, opts: RdmaOptions = {}): Promise<Rdma> {
    const permissions = opts.permissions ?? (Access.LOCAL_READ_WRITE | Access.RDMA_READ | Access.RDMA_WRITE);
    permissionMask("Rdma.create", permissions);
    integerIn("Rdma.create", "gidIndex", opts.gidIndex, 0, 2 ** 31 - 1);
    integerIn("Rdma.create", "maxConnections", opts.maxConnections, 1, 65535);
    integerIn("Rdma.create", "maxTasks", opts.maxTasks, 1, 16384);
    integerIn("Rdma.create", "maxSendBufListLen", opts.maxSendBufListLen, 1, 0xffff_ffff);
    integerIn("Rdma.create", "receiveBufListLen", opts.receiveBufListLen, 1, 0xffff_ffff);
    integerIn("Rdma.create", "receives", opts.receives, 1, opts.maxTasks ?? 64);
    integerIn("Rdma.create", "receiveSize", opts.receiveSize, 1, 2 ** 31);
    const leastUnread = (opts.receiveSize ?? 4096) + UNREAD_MESSAGE_OVERHEAD;
    integerIn("Rdma.create", "maxUnreadBytes", opts.maxUnreadBytes, leastUnread, Number.MAX_SAFE_INTEGER);
    duration("Rdma.create", "timeoutMs", opts.timeoutMs);
    if (opts.transport !== undefined && opts.transport !== "rc" && opts.transport !== "dc") {
      throw new RangeError(`Rdma.create: transport must be "rc" or "dc", got ${String(opts.transport)}`);
    }
    device.assertOpen();
    pe.assertOpen();
    const f = rdmaFns();
    // Receive buffers first: the device closes its newest children first, so the context (newer) stops before
    // the memory its posted receives point at is released.
    const buffers = opts.receives ? makeReceiveBuffers(device, opts.receives, opts.receiveSize ?? 4096) : undefined;
    let handle = 0;
    let rdma: Rdma | undefined;
    try {
      handle = createContext(device, f.doca_rdma_create, "doca_rdma_create", device.info.pciAddr);
      rdma = new Rdma(handle, device, pe, permissions, opts, buffers);
    } catch (e) {
      if (handle) f.doca_rdma_destroy(handle);
      buffers?.free();
      throw e;
    }
    try {
      rdma.#configure(handle, opts);
      if (!rdma.core.start()) await rdma.core.untilRunning("Rdma", opts.timeoutMs ?? 10_000);
      if (buffers) {
        const bound = opts.maxUnreadBytes ?? Math.max(DEFAULT_MAX_UNREAD_BYTES, leastUnread);
        rdma.#autoRecv = new AutoReceive(rdma, buffers, bound, (buf) => rdma!.receive(buf));
      }
      return rdma;
    } catch (e) {
      await rdma.close().catch(() => {});
      throw e;
    }
  }

  #configure(handle: number, opts: RdmaOptions): void {
    const d = doca();
    const f = d.fns;
    check(f.doca_rdma_set_permissions!(handle, this.permissions), "doca_rdma_set_permissions");
    if (opts.gidIndex !== undefined) check(requireFns("doca_rdma_set_gid_index").doca_rdma_set_gid_index(handle, opts.gidIndex), "doca_rdma_set_gid_index");
    if (opts.transport !== undefined) {
      const type = opts.transport === "dc" ? RdmaTransport.DC : RdmaTransport.RC;
      check(requireFns("doca_rdma_set_transport_type").doca_rdma_set_transport_type(handle, type), "doca_rdma_set_transport_type");
    }
    if (opts.maxSendBufListLen !== undefined) {
      const set = requireFns("doca_rdma_set_max_send_buf_list_len").doca_rdma_set_max_send_buf_list_len;
      check(set(handle, opts.maxSendBufListLen), "doca_rdma_set_max_send_buf_list_len", `${opts.maxSendBufListLen}`);
    }
    if (opts.receiveBufListLen !== undefined) {
      const set = requireFns("doca_rdma_task_receive_set_dst_buf_list_len").doca_rdma_task_receive_set_dst_buf_list_len;
      check(set(handle, opts.receiveBufListLen), "doca_rdma_task_receive_set_dst_buf_list_len", `${opts.receiveBufListLen}`);
    }
    if (f.doca_rdma_set_max_num_connections) {
      check(f.doca_rdma_set_max_num_connections(handle, this.maxConnections), "doca_rdma_set_max_num_connections");
    } else if (this.maxConnections > 1) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_rdma_set_max_num_connections", "this DOCA does not export it");
    }
    if (f.doca_rdma_set_connection_state_callbacks) {
      const cb = rdmaConnectionCallbacks();
      check(
        f.doca_rdma_set_connection_state_callbacks(handle, cb.request.address, cb.established.address, cb.failure.address, cb.disconnect.address),
        "doca_rdma_set_connection_state_callbacks",
      );
    }
    const devinfo = this.device[DEVINFO];
    const native = this[NATIVE];
    for (const kind of Object.values(this.#kinds) as RdmaKind<unknown, unknown>[]) {
      const setConf = kind.setConf(f);
      const cap = kind.cap(f);
      const path = this.core.addTasks(kind, this.maxTasks);
      this.#paths[kind.index] = path;
      // A kind this DOCA or device lacks stays unconfigured: its method says NOT_SUPPORTED when called.
      if (!setConf || (cap && cap(devinfo) !== 0)) continue;
      kind.bind(native);
      const cbs = path.completionCallbacks();
      const rc = setConf(handle, cbs.ok, cbs.error, this.maxTasks);
      if (rc === DocaErrorCode.NOT_SUPPORTED) {
        path.releaseCallbacks();
        continue;
      }
      check(rc, `${kind.taskName}_set_conf`);
      this.#byName.set(kind.name, path);
    }
  }

  /** Task kinds this context configured (e.g. ["write", "read", "send", "receive", ...]). */
  get taskKinds(): string[] {
    return [...this.#byName.keys()];
  }

  /** The RDMA CM port this context listens on, if any. */
  get listeningPort(): number | undefined {
    return this.#listening;
  }

  /** Live connections (any state but disconnected/failed/rejected). */
  get connections(): RdmaConnection[] {
    return [...this.#byId.values()].filter((c) => c.state !== "disconnected" && c.state !== "failed" && c.state !== "rejected");
  }

  /** Tasks of every kind submitted and not completed. */
  get inflight(): number {
    let n = 0;
    for (const p of this.#paths) n += p?.inflight ?? 0;
    return n;
  }

  /**
   * A new connection by exchanged details: returns the connection (state "exported") and the details to give the
   * peer out of band; then `await connection.connect(peerDetails)`.
   */
  exportConnection(): { connection: RdmaConnection; details: Uint8Array } {
    this.assertOpen();
    const d = doca();
    d.scratch.clear(0);
    d.scratch.clear(1);
    d.scratch.clear(2);
    check(rdmaFns().doca_rdma_export(this[HANDLE], d.scratch.slot(0), d.scratch.slot(1), d.scratch.slot(2)), "doca_rdma_export");
    const address = d.scratch.u64(0), length = d.scratch.u64(1), handle = d.scratch.u64(2);
    const details = new Uint8Array(d.backend.view(address, length)).slice();
    const connection = this.#adopt(handle, "exported");
    return { connection, details };
  }

  /** RDMA CM: accept connection requests on `port` (1..65535). */
  listen(port: number): void {
    this.assertOpen();
    integerIn("Rdma.listen", "port", port, 1, 65535);
    const f = requireFns("doca_rdma_start_listen_to_port");
    check(f.doca_rdma_start_listen_to_port(this[HANDLE], port), "doca_rdma_start_listen_to_port", `port ${port}`);
    this.#listening = port;
  }

  /** RDMA CM: the next connection request (state "requested"): accept() or reject() it. */
  nextRequest(opts: { timeoutMs?: number } = {}): Promise<RdmaConnection> {
    try {
      this.assertOpen();
      duration("Rdma.nextRequest", "timeoutMs", opts.timeoutMs);
    } catch (e) {
      return Promise.reject(e);
    }
    const ready = this.#requests.shift();
    if (ready) return Promise.resolve(ready);
    if (this.#failure !== undefined) return Promise.reject(this.#takeFailure());
    return this.#requestWaiters.wait(`an RDMA connection request on port ${this.#listening ?? "(not listening)"}`, opts.timeoutMs);
  }

  /** RDMA CM: the next request, accepted and established. */
  async accept(opts: { timeoutMs?: number } = {}): Promise<RdmaConnection> {
    const deadline = Date.now() + (opts.timeoutMs ?? 2 ** 31 - 1);
    const request = await this.nextRequest(opts);
    await request.accept({ timeoutMs: opts.timeoutMs === undefined ? undefined : Math.max(0, deadline - Date.now()) });
    return request;
  }

  /** RDMA CM: connects to a listening peer at host (IPv4 or IPv6 literal) : port; resolves once established. */
  async connectTo(host: string, port: number, opts: { timeoutMs?: number } = {}): Promise<RdmaConnection> {
    this.assertOpen();
    if (typeof host !== "string" || host.length === 0 || host.length > 255 || host.includes("\0")) {
      throw new TypeError(`Rdma.connectTo: host must be an IP address, got ${JSON.stringify(host)}`);
    }
    integerIn("Rdma.connectTo", "port", port, 1, 65535);
    duration("Rdma.connectTo", "timeoutMs", opts.timeoutMs);
    const f = requireFns("doca_rdma_addr_create", "doca_rdma_addr_destroy", "doca_rdma_connect_to_addr");
    const d = doca();
    d.scratch.clear(1);
    const type = host.includes(":") ? ADDR_IPV6 : ADDR_IPV4;
    check(f.doca_rdma_addr_create(type, d.scratch.cstring(host, 2), port, d.scratch.slot(1)), "doca_rdma_addr_create", `${host}:${port}`);
    const addr = d.scratch.u64(1);
    const connection = this.#adopt(0, "connecting");
    try {
      check(f.doca_rdma_connect_to_addr(this[HANDLE], addr, connection.id), "doca_rdma_connect_to_addr", `${host}:${port}`);
      await untilEstablished(connection, opts.timeoutMs ?? 10_000, `an RDMA CM connection to ${host}:${port}`);
      return connection;
    } catch (e) {
      this.#forgetConnection(connection);
      // Say where to: the connection's own reason only knows its number.
      if (e instanceof DocaError && e.fn === "doca_rdma_connection") {
        throw new DocaError(e.code, "doca_rdma_connect_to_addr", `no RDMA connection to ${host}:${port} (the peer refused, is not listening, or is unreachable)`);
      }
      throw e;
    } finally {
      f.doca_rdma_addr_destroy(addr);
    }
  }

  /**
   * Posts `buf` (its whole range) as a receive; resolves when a send / send-with-immediate / write-with-immediate
   * from any connection completed it. Rejects with DocaError (fn "doca_rdma_task_receive") on failure or close.
   */
  async receive(buf: Buf): Promise<RdmaReceived> {
    checkBuf(buf, "Rdma.receive: buf");
    this.assertOpen();
    const req: ReceiveRequest = { buf, length: 0, opcode: 0, immWire: undefined, connection: 0 };
    await this.#path("receive").submit(req, undefined);
    return this.#received(req);
  }

  #received(req: ReceiveRequest): RdmaReceived {
    return {
      buf: req.buf,
      length: req.length,
      immediate: req.immWire,
      opcode: req.opcode,
      connection: this.#connections.get(req.connection),
    };
  }

  /** Reads a completed receive's results (called by the task path before the task is freed). */
  #onReceive(_slot: number, typed: number, ok: boolean, req: ReceiveRequest): void {
    if (!ok) return;
    const f = doca().fns;
    req.length = f.doca_rdma_task_receive_get_result_len?.(typed) ?? req.buf.dataLength;
    req.opcode = f.doca_rdma_task_receive_get_result_opcode!(typed);
    req.immWire = req.opcode === RdmaOpcode.SEND ? undefined : f.doca_rdma_task_receive_get_result_immediate_data!(typed);
    req.connection = f.doca_rdma_task_receive_get_result_rdma_connection?.(typed) ?? 0;
  }

  /**
   * The next message from any connection, through receives this context keeps posted (`receives` buffers of
   * `receiveSize` bytes, made on first use). The bytes are copied out.
   */
  recv(opts: { timeoutMs?: number } = {}): Promise<RdmaMessage> {
    try {
      this.assertOpen();
      duration("Rdma.recv", "timeoutMs", opts.timeoutMs);
      if (!this.#autoRecv) throw new Error("Rdma.recv: create the Rdma with { receives: N } to keep receives posted, or post your own with receive(buf)");
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#autoRecv.next(opts.timeoutMs);
  }

  #path(kind: keyof RdmaKinds): TaskPath<unknown, unknown> {
    const name = this.#kinds[kind].name;
    const path = this.#byName.get(name);
    if (!path) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, `doca_rdma_task_${name}_set_conf`, `${this.device.info.pciAddr} has no RDMA ${name} task`);
    }
    return path;
  }

  #adopt(handle: number, state: ConnState): RdmaConnection {
    const id = this.#nextId++;
    const connection = newConnection(this, handle, id, state);
    this.#byId.set(id, connection);
    if (handle) this.#bindHandle(connection, handle);
    return connection;
  }

  #bindHandle(connection: RdmaConnection, handle: number): void {
    bindConnection(connection, handle);
    this.#connections.set(handle, connection);
    doca().fns.doca_rdma_connection_set_user_data?.(handle, connection.id);
  }

  #forgetConnection(connection: RdmaConnection): void {
    this.#byId.delete(connection.id);
    const handle = handleOf(connection);
    if (handle) this.#connections.delete(handle);
  }

  /** DOCA's callbacks reach this context through the one bridge (callbacks.ts deliver()), connection events too. */
  protected override callbackOwner(): CtxOwner {
    const owner: RdmaCtxOwner = {
      ...super.callbackOwner(),
      onRdmaConnection: (event, connection, connectionUserData) => this.#onConnection(event, connection, connectionUserData),
    };
    return owner;
  }

  /** A connection request (RDMA CM), or the establishment, failure or end of a connection. */
  #onConnection(event: RdmaConnectionEvent, handle: number, connUd: number): void {
    if (event === "request") {
      const connection = this.#adopt(handle, "requested");
      if (!this.#requestWaiters.resolveNext(connection)) this.#requests.push(connection);
      return;
    }
    const connection = this.#byId.get(connUd) ?? this.#connections.get(handle);
    if (!connection) return;
    if (!handleOf(connection) && handle) this.#bindHandle(connection, handle);
    noteConnectionState(connection, event);
    // A connection that ended gets no more events: the maps keep live ones only (a server that serves connection
    // after connection does not grow), and DOCA may reuse the handle for a later connection.
    if (event !== "connected") this.#forgetConnection(connection);
  }

  /** A callback failed: whoever awaits this context learns why. */
  protected override fail(error: unknown): void {
    super.fail(error);
    if (this.#requestWaiters.size > 0) this.#requestWaiters.rejectAll(error);
    else this.#failure ??= error;
  }

  #takeFailure(): unknown {
    const f = this.#failure;
    this.#failure = undefined;
    return f;
  }

  protected override beforeStop(): void {
    const reason = new Error("Rdma closed");
    this.#autoRecv?.close(reason);
    this.#requestWaiters.rejectAll(reason);
    for (const c of this.#byId.values()) noteConnectionState(c, "disconnected", reason);
  }

  protected destroyNative(handle: number): void {
    check(rdmaFns().doca_rdma_destroy(handle), "doca_rdma_destroy");
    this.#receiveBuffers?.free();
  }

  protected override summary(): string {
    const listen = this.#listening ? ` listening=:${this.#listening}` : "";
    return `${this.device.info.pciAddr} ${this.core.stateName} connections=${this.connections.length}${listen} inflight=${this.inflight}`;
  }
}

/**
 * Only Rdma makes connections and drives their state; these are set in RdmaConnection's static block, so none of
 * it is a member of the connection's public type (and no raw address is reachable through it).
 */
let newConnection: (rdma: Rdma, handle: number, id: number, state: ConnState) => RdmaConnection;
/** The native connection once DOCA named it (0 before). */
let handleOf: (connection: RdmaConnection) => number;
let bindConnection: (connection: RdmaConnection, handle: number) => void;
/** DOCA reported a state (or the Rdma is closing: "disconnected" with its reason). */
let noteConnectionState: (connection: RdmaConnection, state: ConnState, reason?: unknown) => void;
/** Resolves once connected (RDMA CM), rejects on failure or timeout. */
let untilEstablished: (connection: RdmaConnection, timeoutMs: number, what: string) => Promise<void>;

/** One RDMA connection of an Rdma context; every task method returns a Promise settled on the one task path. */
export class RdmaConnection {
  readonly rdma: Rdma;
  /** Our id (the DOCA connection user data). */
  readonly id: number;
  #handle = 0;
  #native: number | bigint = 0;
  #state: ConnState;
  #reason: unknown;
  readonly #changes: Waiters<void>;
  /** Keeps the engine pumped while an onDisconnect handler waits, so a peer's disconnect is noticed while idle. */
  readonly #watch: Waiters<void>;
  /** onDisconnect's handlers (the one implementation Comch and RDMA connections share). */
  readonly #ends: EndWatchers<unknown>;

  static {
    newConnection = (rdma, handle, id, state) => new RdmaConnection(rdma, handle, id, state);
    handleOf = (connection) => connection.#handle;
    bindConnection = (connection, handle) => connection.#bind(handle);
    noteConnectionState = (connection, state, reason) => connection.#noteState(state, reason);
    untilEstablished = (connection, timeoutMs, what) => connection.#established(timeoutMs, what);
  }

  private constructor(rdma: Rdma, handle: number, id: number, state: ConnState) {
    if (!(rdma instanceof Rdma)) throw new TypeError("RdmaConnection objects are made by Rdma, not with new");
    this.rdma = rdma;
    this.id = id;
    this.#state = state;
    this.#changes = new Waiters(rdma.pe);
    this.#watch = new Waiters(rdma.pe);
    this.#ends = new EndWatchers("RdmaConnection.onDisconnect", (error) => failRdma(rdma, error));
    if (handle) this.#bind(handle);
  }

  /** "exported", "requested", "connecting", "connected", "disconnected", "failed" or "rejected". */
  get state(): ConnState {
    return this.#state;
  }

  /** Loader form of the native connection, for the task kinds (keyed by a symbol the package does not export). */
  get [NATIVE](): number | bigint {
    return this.#native;
  }

  #bind(handle: number): void {
    this.#handle = handle;
    this.#native = doca().backend.native(handle);
  }

  /**
   * Registers a callback for when the connection ends (peer disconnect, failure, rejection, or the Rdma closing),
   * called once with the reason, after the event that ended it. Registered after the end, it is still called. What
   * it throws goes to whoever awaits the Rdma (as any callback failure) and does not stop the callbacks after it.
   * While a callback waits, the progress engine keeps running, so the end is noticed without other work.
   */
  onDisconnect(cb: (reason: unknown) => void): void {
    this.#ends.add(cb);
    if (!this.#ends.ended && this.#watch.size === 0) void this.#watch.wait(`RDMA connection ${this.id} to end`).catch(() => {});
  }

  #noteState(state: ConnState, reason?: unknown): void {
    if (this.#state === state) return;
    this.#state = state;
    if (state === "connected") {
      this.#changes.resolveAll();
      return;
    }
    this.#reason = reason ?? new DocaError(
      state === "failed" ? DocaErrorCode.CONNECTION_ABORTED : DocaErrorCode.NOT_CONNECTED,
      "doca_rdma_connection",
      `RDMA connection ${this.id} ${state}`,
    );
    this.#changes.rejectAll(this.#reason);
    this.#watch.resolveAll();
    this.#ends.end(this.#reason);
  }

  /**
   * A task failed: when its error says the connection itself is gone (a peer that disconnected or vanished while
   * tasks were in flight), the state says so at once, and onDisconnect's handlers run, rather than "connected" until
   * DOCA reports an end it may never report (a connection made by exchanged details has no state callbacks).
   */
  #taskFailed(error: unknown): void {
    if (this.#state !== "connected" || !(error instanceof DocaError) || !CONNECTION_GONE.has(error.code)) return;
    this.#noteState("disconnected", error);
    forgetOn(this.rdma, this);
  }

  /** The task Promise, watched for an error that ends the connection (it still rejects with that error). */
  #watched(tasks: Promise<void>): Promise<void> {
    return tasks.catch((e) => {
      this.#taskFailed(e);
      throw e;
    });
  }

  async #established(timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.#state !== "connected") {
      if (this.#state === "failed" || this.#state === "disconnected" || this.#state === "rejected") throw this.#reason;
      const left = deadline - Date.now();
      if (left <= 0) throw new TimeoutError(what, timeoutMs);
      await this.#changes.wait(what, left);
    }
  }

  /** Exported connections: connect with the peer's details (its exportConnection().details). */
  connect(peerDetails: Uint8Array): void {
    this.rdma.assertOpen();
    if (!(peerDetails instanceof Uint8Array) || peerDetails.length === 0) {
      throw new TypeError("RdmaConnection.connect: peer details must be a non-empty Uint8Array");
    }
    if (this.#state !== "exported") throw new Error(`RdmaConnection.connect: connection is ${this.#state}, not exported`);
    const d = doca();
    const staging = d.scratch.bytes(peerDetails);
    try {
      check(rdmaFns().doca_rdma_connect(this.rdma[HANDLE], staging.address, peerDetails.length, this.#handle), "doca_rdma_connect");
    } finally {
      staging.done();
    }
    this.#state = "connected";
    this.#changes.resolveAll();
  }

  /** RDMA CM: accepts a requested connection; resolves once established. */
  async accept(opts: { timeoutMs?: number } = {}): Promise<void> {
    this.rdma.assertOpen();
    duration("RdmaConnection.accept", "timeoutMs", opts.timeoutMs);
    if (this.#state !== "requested") throw new Error(`RdmaConnection.accept: connection is ${this.#state}, not requested`);
    check(requireFns("doca_rdma_connection_accept").doca_rdma_connection_accept(this.#handle, 0, 0), "doca_rdma_connection_accept");
    this.#state = "connecting";
    await this.#established(opts.timeoutMs ?? 10_000, `RDMA connection ${this.id} to be established`);
  }

  /** RDMA CM: refuses a requested connection. */
  reject(): void {
    this.rdma.assertOpen();
    if (this.#state !== "requested") throw new Error(`RdmaConnection.reject: connection is ${this.#state}, not requested`);
    check(requireFns("doca_rdma_connection_reject").doca_rdma_connection_reject(this.#handle), "doca_rdma_connection_reject");
    this.#noteState("rejected");
  }

  /** Ends the connection (in-flight tasks on it fail); idempotent. */
  disconnect(): void {
    if (this.#state === "disconnected" || this.#state === "failed" || this.#state === "rejected" || this.rdma.closed) return;
    const f = doca().fns;
    if (this.#handle && f.doca_rdma_connection_disconnect) check(f.doca_rdma_connection_disconnect(this.#handle), "doca_rdma_connection_disconnect");
    this.#noteState("disconnected");
  }

  #usable(method: string): void {
    this.rdma.assertOpen();
    if (this.#state !== "connected") {
      throw this.#reason instanceof Error && this.#state !== "exported" && this.#state !== "requested"
        ? this.#reason
        : new DocaError(DocaErrorCode.NOT_CONNECTED, `RdmaConnection.${method}`, `connection ${this.id} is ${this.#state}`);
    }
  }

  #run(method: string, kind: keyof RdmaKinds, op: RdmaOp, check: () => void): Promise<void> {
    try {
      check();
      this.#usable(method);
      return this.#watched(submitOn(this.rdma, kind, this, op));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #runBatch(method: string, kind: keyof RdmaKinds, ops: RdmaOp[]): Promise<void> {
    try {
      this.#usable(method);
      return this.#watched(submitBatchOn(this.rdma, kind, this, ops));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** [src, dst] pairs as RdmaOps, each Buf checked (a bad one throws naming its place). */
  #pairs(method: string, pairs: ReadonlyArray<readonly [Buf, Buf]>): RdmaOp[] {
    if (!Array.isArray(pairs)) throw new TypeError(`${method}: pairs must be an array of [src, dst] Bufs`);
    // a plain loop: map() would skip the holes of a sparse array
    const ops: RdmaOp[] = new Array(pairs.length);
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i];
      if (!Array.isArray(pair) || pair.length !== 2) throw new TypeError(`${method}: pairs[${i}] must be [src, dst]`);
      checkBuf(pair[0], `${method}: pairs[${i}][0]`);
      checkBuf(pair[1], `${method}: pairs[${i}][1]`);
      ops[i] = { src: pair[0], dst: pair[1] };
    }
    return ops;
  }

  /**
   * Many RDMA writes with one Promise (resolves once all completed; rejects with the first failure after all
   * settled), in order on the connection: for small writes, where one Promise per task costs more than the write.
   */
  writeBatch(pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<void> {
    try {
      return this.#runBatch("writeBatch", "write", this.#pairs("writeBatch", pairs));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Many RDMA reads (peer's src → local dst) with one Promise (see writeBatch). */
  readBatch(pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<void> {
    try {
      return this.#runBatch("readBatch", "read", this.#pairs("readBatch", pairs));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Many sends with one Promise, in order (see writeBatch); each takes one of the peer's posted receives. */
  sendBatch(srcs: readonly Buf[]): Promise<void> {
    try {
      if (!Array.isArray(srcs)) throw new TypeError("sendBatch: srcs must be an array of Bufs");
      const ops: RdmaOp[] = new Array(srcs.length);
      for (let i = 0; i < srcs.length; i++) {
        checkBuf(srcs[i], `sendBatch: srcs[${i}]`);
        ops[i] = { src: srcs[i] };
      }
      return this.#runBatch("sendBatch", "send", ops);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** RDMA write: `src`'s data section into the peer's `dst` (a Buf on an imported map); dst's data grows. */
  write(src: Buf, dst: Buf): Promise<void> {
    return this.#run("write", "write", { src, dst }, () => (checkBuf(src, "write: src"), checkBuf(dst, "write: dst")));
  }

  /** RDMA write with immediate: the peer's posted receive completes with `immediate` (u32). */
  writeImm(src: Buf, dst: Buf, immediate: number): Promise<void> {
    const op: RdmaOp = { src, dst };
    return this.#run("writeImm", "writeImm", op, () => {
      checkBuf(src, "writeImm: src");
      checkBuf(dst, "writeImm: dst");
      op.imm = checkImmediate("writeImm", immediate);
    });
  }

  /** RDMA read: the peer's `src` (a Buf on an imported map) into the local `dst`. */
  read(src: Buf, dst: Buf): Promise<void> {
    return this.#run("read", "read", { src, dst }, () => (checkBuf(src, "read: src"), checkBuf(dst, "read: dst")));
  }

  /** Send: `src`'s data section to the peer's next posted receive. */
  send(src: Buf): Promise<void> {
    return this.#run("send", "send", { src }, () => checkBuf(src, "send: src"));
  }

  /**
   * Send with immediate data: a u32 handed to DOCA's doca_be32_t as is, so the receiver (doca-ts or C, e.g.
   * NVIDIA's samples) reads back the same number; byte order on the wire is DOCA's business.
   */
  sendImm(src: Buf, immediate: number): Promise<void> {
    const op: RdmaOp = { src };
    return this.#run("sendImm", "sendImm", op, () => {
      checkBuf(src, "sendImm: src");
      op.imm = checkImmediate("sendImm", immediate);
    });
  }

  /** Atomic compare-and-swap of the 8 bytes at the peer's `dst`; the old value lands in `result` (8 bytes). */
  compareSwap(dst: Buf, result: Buf, compare: number | bigint, swap: number | bigint): Promise<void> {
    const op: RdmaOp = { dst, result };
    return this.#run("compareSwap", "compareSwap", op, () => {
      checkBuf(dst, "compareSwap: dst");
      checkBuf(result, "compareSwap: result");
      op.a = checkU64("compareSwap", "compare", compare);
      op.b = checkU64("compareSwap", "swap", swap);
    });
  }

  /** Atomic fetch-and-add on the 8 bytes at the peer's `dst`; the old value lands in `result` (8 bytes). */
  fetchAdd(dst: Buf, result: Buf, add: number | bigint): Promise<void> {
    const op: RdmaOp = { dst, result };
    return this.#run("fetchAdd", "fetchAdd", op, () => {
      checkBuf(dst, "fetchAdd: dst");
      checkBuf(result, "fetchAdd: result");
      op.a = checkU64("fetchAdd", "add", add);
    });
  }

  toString(): string {
    const h = this.#handle ? ` ${hex(this.#handle)}` : "";
    return `RdmaConnection { id=${this.id} ${this.#state}${h} }`;
  }

  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/** A completed automatic receive as a message: its bytes copied out of the posted buffer. */
function messageOf(r: RdmaReceived): RdmaMessage {
  const bytes = new Uint8Array(doca().backend.view(r.buf.address, r.length)).slice();
  return { bytes, immediate: r.immediate, opcode: r.opcode, connection: r.connection };
}

/**
 * recv(): a set of receive buffers kept posted; completions become copied-out messages. The messages nobody took yet
 * are bounded (maxUnreadBytes): past the bound, a buffer whose receive completed is parked rather than posted again,
 * so a peer that sends faster than this side reads waits for receives instead of growing this process's memory; the
 * parked buffers are posted again as recv() takes messages.
 */
class AutoReceive {
  readonly #queue: RdmaMessage[] = [];
  readonly #waiters: Waiters<RdmaMessage>;
  #failure: unknown;
  #failures = 0;
  #closed = false;
  /** Bytes of the queued messages, each with UNREAD_MESSAGE_OVERHEAD. */
  #unreadBytes = 0;
  readonly #parked: Buf[] = [];
  readonly #post: (buf: Buf) => void;

  constructor(readonly rdma: Rdma, set: ReceiveBuffers, readonly maxUnreadBytes: number, receive: (buf: Buf) => Promise<RdmaReceived>) {
    this.#waiters = new Waiters(rdma.pe);
    const { buffers } = set;
    const post = (buf: Buf) => {
      if (this.#closed) return;
      buf.resetData();
      receive(buf).then((r) => {
        this.#failures = 0;
        const message = messageOf(r);
        if (!this.#waiters.resolveNext(message)) {
          this.#queue.push(message);
          this.#unreadBytes += message.bytes.length + UNREAD_MESSAGE_OVERHEAD;
        }
        if (this.#unreadBytes > this.maxUnreadBytes) this.#parked.push(buf);
        else post(buf);
      }, (e) => {
        if (this.#closed) return;
        if (this.#waiters.size > 0) this.#waiters.rejectAll(e);
        else this.#failure ??= e;
        // Keep the buffer posted (one failed receive must not shrink the set), unless receives keep failing: a
        // device refusing every receive would otherwise spin here.
        if (++this.#failures <= buffers.length * 4) post(buf);
      });
    };
    this.#post = post;
    for (const buf of buffers) post(buf);
  }

  /** Bytes of received messages recv() has not taken (with their overhead). */
  get unreadBytes(): number {
    return this.#unreadBytes;
  }

  next(timeoutMs: number | undefined): Promise<RdmaMessage> {
    const ready = this.#queue.shift();
    if (ready) {
      this.#unreadBytes -= ready.bytes.length + UNREAD_MESSAGE_OVERHEAD;
      while (this.#unreadBytes <= this.maxUnreadBytes && this.#parked.length > 0) this.#post(this.#parked.shift()!);
      return Promise.resolve(ready);
    }
    if (this.#failure !== undefined) {
      const f = this.#failure;
      this.#failure = undefined;
      return Promise.reject(f);
    }
    return this.#waiters.wait("an RDMA message", timeoutMs);
  }

  close(reason: Error): void {
    this.#closed = true;
    this.#waiters.rejectAll(reason);
  }

}

/** Receive buffers for recv(): one NativeMemory, one map, one Buf per posted receive (made before the context). */
export interface ReceiveBuffers {
  buffers: Buf[];
  free: () => void;
}

function makeReceiveBuffers(device: Device, count: number, size: number): ReceiveBuffers {
  const memory = NativeMemory.alloc(count * size);
  let mmap: Mmap | undefined, inventory: BufInventory | undefined;
  try {
    // Local access only: receives are filled by this device on the peer's sends, never reached by the peer.
    mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
    inventory = new BufInventory(count);
    const buffers: Buf[] = [];
    for (let i = 0; i < count; i++) buffers.push(inventory.bufByAddr(mmap, memory.address + i * size, size));
    const m = mmap, inv = inventory;
    return { buffers, free: () => (inv.close(), m.close(), memory.close()) };
  } catch (e) {
    inventory?.close();
    mmap?.close();
    memory.close();
    throw e;
  }
}
