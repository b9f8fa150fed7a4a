/**
 * The RDMA task kinds on the one task path (task-path.ts): each says only how to allocate its DOCA task; the path
 * does slots, submit, completion (native ring or JS callback), errors (DocaError naming the task kind), flush on
 * stop. One Rdma context owns one TaskPath per kind; the task user data carries (kind index << 16 | slot) so the
 * context's single completion entry point (Rdma.onTaskDone) finds the path.
 */
import { doca } from "../../native/library.ts";
import { NATIVE } from "../../engine/resource.ts";
import type { Native, TaskKind } from "../../engine/task-path.ts";
import type { Buf } from "../common/buf.ts";

/** What one RDMA request carries besides its connection (kinds read the fields they need). */
export interface RdmaOp {
  src?: Buf;
  dst?: Buf;
  result?: Buf;
  /** Immediate data (u32, passed to DOCA's doca_be32_t unchanged). */
  imm?: number;
  /** Atomics: compare / swap / add operands (u64). */
  a?: bigint;
  b?: bigint;
}

/** A posted receive and, once it completed, what arrived. */
export interface ReceiveRequest {
  buf: Buf;
  length: number;
  opcode: number;
  /** Immediate data as DOCA returned it; undefined for a plain send. */
  immWire: number | undefined;
  /** The doca_rdma_connection the message came over (a native pointer, mapped to its wrapper by Rdma). */
  connection: number;
}

type Raw = ReturnType<typeof doca>["raw"];
type Fns = ReturnType<typeof doca>["fns"];
/** A DOCA function a kind configures or queries with: picked from the symbol table by name, never spelled at run time. */
type FnPick = (f: Fns) => ((...args: number[]) => number) | undefined;
/** (rdma, connection, op, user data, out) → doca_error_t; leaves the typed task in scratch slot 0. */
type Alloc<A, B> = (raw: Raw, rdma: Native, a: A, b: B, ud: Native, out: Native) => number;

/** One RDMA task kind: its DOCA names and how to allocate it. */
export class RdmaKind<A, B> implements TaskKind<A, B> {
  task: Native = 0;
  #rdma: Native = 0;
  readonly #raw = doca().raw;
  readonly #scratch = doca().scratch;
  readonly #out = doca().scratch.slotNative(0);
  /** The task user data at allocate_init: the task path sets the real one right after. */
  readonly #noUserData = doca().backend.native(0);

  constructor(
    readonly index: number,
    readonly name: string,
    readonly alloc: Alloc<A, B>,
    readonly asTask: (raw: Raw, typed: Native) => Native,
    /** doca_rdma_task_<kind>_set_conf and doca_rdma_cap_task_<kind>_is_supported (undefined: this DOCA lacks it). */
    readonly setConf: FnPick,
    readonly cap: FnPick,
    readonly complete?: (slot: number, typedTask: number, ok: boolean, a: A, b: B) => void,
  ) {}

  /** What one task is called in "closed before/while" errors. */
  get noun(): string {
    return `RDMA ${this.name.replaceAll("_", " ")}`;
  }

  get taskName(): string {
    return `doca_rdma_task_${this.name}`;
  }

  /** Error text only: DocaError names the function that failed. */
  get allocName(): string {
    return `doca_rdma_task_${this.name}_allocate_init`;
  }

  bind(rdma: Native): void {
    this.#rdma = rdma;
  }

  allocInit(_slot: number, a: A, b: B): number {
    const rc = this.alloc(this.#raw, this.#rdma, a, b, this.#noUserData, this.#out);
    if (rc === 0) this.task = this.asTask(this.#raw, this.#scratch.u64Native(0));
    return rc;
  }
}

/** A connection's native handle in loader form (the kinds take RdmaConnection-like objects). */
export interface HasConnection {
  readonly [NATIVE]: Native;
}

/** Every RDMA kind doca-ts submits; the order fixes each kind's index in the task user data. */
export interface RdmaKinds {
  write: RdmaKind<HasConnection, RdmaOp>;
  writeImm: RdmaKind<HasConnection, RdmaOp>;
  read: RdmaKind<HasConnection, RdmaOp>;
  send: RdmaKind<HasConnection, RdmaOp>;
  sendImm: RdmaKind<HasConnection, RdmaOp>;
  compareSwap: RdmaKind<HasConnection, RdmaOp>;
  fetchAdd: RdmaKind<HasConnection, RdmaOp>;
  receive: RdmaKind<ReceiveRequest, undefined>;
}

/** `ud`/`out` are native forms; Bufs give theirs through NATIVE. */
export function rdmaKinds(onReceive: (slot: number, typedTask: number, ok: boolean, r: ReceiveRequest) => void): RdmaKinds {
  const n = (x: Buf | undefined) => x![NATIVE];
  const native = doca().backend.native;
  let i = 0;
  return {
    write: new RdmaKind<HasConnection, RdmaOp>(i++, "write", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_write_allocate_init!(rdma, c[NATIVE], n(op.src), n(op.dst), ud, out), (r, t) => r.doca_rdma_task_write_as_task!(t),
      (f) => f.doca_rdma_task_write_set_conf, (f) => f.doca_rdma_cap_task_write_is_supported),
    writeImm: new RdmaKind<HasConnection, RdmaOp>(i++, "write_imm", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_write_imm_allocate_init!(rdma, c[NATIVE], n(op.src), n(op.dst), op.imm!, ud, out), (r, t) => r.doca_rdma_task_write_imm_as_task!(t),
      (f) => f.doca_rdma_task_write_imm_set_conf, noCap),
    read: new RdmaKind<HasConnection, RdmaOp>(i++, "read", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_read_allocate_init!(rdma, c[NATIVE], n(op.src), n(op.dst), ud, out), (r, t) => r.doca_rdma_task_read_as_task!(t),
      (f) => f.doca_rdma_task_read_set_conf, (f) => f.doca_rdma_cap_task_read_is_supported),
    send: new RdmaKind<HasConnection, RdmaOp>(i++, "send", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_send_allocate_init!(rdma, c[NATIVE], n(op.src), ud, out), (r, t) => r.doca_rdma_task_send_as_task!(t),
      (f) => f.doca_rdma_task_send_set_conf, (f) => f.doca_rdma_cap_task_send_is_supported),
    sendImm: new RdmaKind<HasConnection, RdmaOp>(i++, "send_imm", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_send_imm_allocate_init!(rdma, c[NATIVE], n(op.src), op.imm!, ud, out), (r, t) => r.doca_rdma_task_send_imm_as_task!(t),
      (f) => f.doca_rdma_task_send_imm_set_conf, noCap),
    compareSwap: new RdmaKind<HasConnection, RdmaOp>(i++, "atomic_cmp_swp", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_atomic_cmp_swp_allocate_init!(rdma, c[NATIVE], n(op.dst), n(op.result), wide(native, op.a!), wide(native, op.b!), ud, out),
      (r, t) => r.doca_rdma_task_atomic_cmp_swp_as_task!(t),
      (f) => f.doca_rdma_task_atomic_cmp_swp_set_conf, (f) => f.doca_rdma_cap_task_atomic_cmp_swp_is_supported),
    fetchAdd: new RdmaKind<HasConnection, RdmaOp>(i++, "atomic_fetch_add", (r, rdma, c, op, ud, out) =>
      r.doca_rdma_task_atomic_fetch_add_allocate_init!(rdma, c[NATIVE], n(op.dst), n(op.result), wide(native, op.a!), ud, out),
      (r, t) => r.doca_rdma_task_atomic_fetch_add_as_task!(t),
      (f) => f.doca_rdma_task_atomic_fetch_add_set_conf, (f) => f.doca_rdma_cap_task_atomic_fetch_add_is_supported),
    receive: new RdmaKind<ReceiveRequest, undefined>(i++, "receive", (r, rdma, req, _b, ud, out) =>
      r.doca_rdma_task_receive_allocate_init!(rdma, req.buf[NATIVE], ud, out), (r, t) => r.doca_rdma_task_receive_as_task!(t),
      (f) => f.doca_rdma_task_receive_set_conf, (f) => f.doca_rdma_cap_task_receive_is_supported,
      (slot, typed, ok, req) => onReceive(slot, typed, ok, req)),
  };
}

/** The immediate kinds: doca-ts does not bind their capability queries (the plain kind's answers for them). */
const noCap: FnPick = () => undefined;

/** A u64 operand in the loader's argument form: Deno takes a BigInt, Bun and koffi a BigInt or a number. */
function wide(native: (n: number) => Native, value: bigint): Native {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? native(Number(value)) : value;
}
