/**
 * DOCA erasure coding (libdoca_erasure_coding) on the one task path: an ErasureCoding context with DOCA's four task
 * kinds (create, recover, update, galois_mul), and CodingMatrix resources in the ownership tree under it (closing
 * the context destroys its matrices first). Tasks take Bufs laid out as DOCA lays them out: the input blocks one
 * after the other in the source (its data, a buffer list read in order), the output blocks appended to the
 * destination. encode()/recoverBlocks() do the same over bytes held in JS.
 *
 * libdoca_erasure_coding is optional: without it the constructor throws DocaError NOT_SUPPORTED naming the missing
 * function. Matrix entries and recovery rules: sim/README.md ("Erasure coding").
 */
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { CtxCore } from "../../engine/ctx.ts";
import { createContext, TaskContext } from "../common/task-context.ts";
import { hex, HANDLE, NATIVE } from "../../engine/resource.ts";
import type { Native, TaskPath } from "../../engine/task-path.ts";
import { integerIn, MAX_TASKS } from "../../engine/validate.ts";
import type { Handle } from "../../load/types.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import { Buf } from "../common/buf.ts";
import { AllocKind, changedFieldsRearming, type Rearming } from "../common/alloc-kind.ts";
import { stagedTask } from "../common/staging.ts";
import { HeldHandle, HeldHandles } from "../common/held-handle.ts";

/** DOCA's matrix types (enum doca_ec_matrix_type: CAUCHY = 1, VANDERMONDE = 2). */
export type MatrixType = "cauchy" | "vandermonde";
const MATRIX_TYPE: Record<MatrixType, number> = { cauchy: 1, vandermonde: 2 };

/** What a matrix maps: N data blocks to M redundancy blocks (coding), available to missing blocks, or an update. */
export type MatrixRole = "coding" | "recover" | "update";

export interface ErasureCodingOptions {
  /** Tasks DOCA preallocates per kind (and the most in flight at once); default 64, at most 65536. */
  maxTasks?: number;
}

export interface ErasureCodingCaps {
  /** Largest block a task may use, bytes (doca_ec_cap_get_max_block_size). */
  maxBlockSize: number;
  /** Largest buffer list a task may use (doca_ec_cap_get_max_buf_list_len). */
  maxBufListLen: number;
  create: boolean;
  recover: boolean;
}

/** DOCA's block alignment: a block is a multiple of 64 bytes. */
export const EC_BLOCK_ALIGN = 64;

/** A task's matrix (its native handle taken at submit: valid until the task settles, even if the matrix is closed). */
type Request = { matrix: CodingMatrix; native: number | bigint; src: Buf };

function assertBuf(buf: Buf, where: string, name: string): void {
  if (!Buf.isBuf(buf)) throw new TypeError(`ErasureCoding: ${where}${name} must be a Buf from a BufInventory`);
  buf.assertOpen();
}

function assertBufs(src: Buf, dst: Buf, where: string): void {
  assertBuf(src, where, "src");
  assertBuf(dst, where, "dst");
}

type KindName = "create" | "recover" | "update" | "galois_mul";
type Raw = ReturnType<typeof doca>["raw"];
/** (ec, callbacks, callbacks, number of tasks) → doca_error_t: the *_set_conf of one task type. */
type SetConf = (ec: number, ok: number, error: number, tasks: number) => number;
/** (ec, matrix, src, dst, user data, out) → doca_error_t: one task type's allocate_init. */
type EcAlloc = (ec: Native, matrix: number | bigint, src: Native, dst: Native, ud: Native, out: Native) => number;

/** Each task type's DOCA functions, named in full (picked from the table by name, none assembled at run time). */
/** alloc and asTask pick the raw function itself from the table, so a task calls it with no wrapper in between. */
const KIND_FUNCTIONS: Record<KindName, { noun: string; alloc: (raw: Raw) => EcAlloc; asTask: (raw: Raw) => (typed: Native) => Native; setConf: () => SetConf }> = {
  create: {
    noun: "erasure-coding create",
    alloc: (raw) => raw.doca_ec_task_create_allocate_init!,
    asTask: (raw) => raw.doca_ec_task_create_as_task!,
    setConf: () => requireFns("doca_ec_task_create_set_conf").doca_ec_task_create_set_conf,
  },
  recover: {
    noun: "erasure-coding recover",
    alloc: (raw) => raw.doca_ec_task_recover_allocate_init!,
    asTask: (raw) => raw.doca_ec_task_recover_as_task!,
    setConf: () => requireFns("doca_ec_task_recover_set_conf").doca_ec_task_recover_set_conf,
  },
  update: {
    noun: "erasure-coding update",
    alloc: (raw) => raw.doca_ec_task_update_allocate_init!,
    asTask: (raw) => raw.doca_ec_task_update_as_task!,
    setConf: () => requireFns("doca_ec_task_update_set_conf").doca_ec_task_update_set_conf,
  },
  galois_mul: {
    noun: "Galois multiplication",
    alloc: (raw) => raw.doca_ec_task_galois_mul_allocate_init!,
    asTask: (raw) => raw.doca_ec_task_galois_mul_as_task!,
    setConf: () => requireFns("doca_ec_task_galois_mul_set_conf").doca_ec_task_galois_mul_set_conf,
  },
};

/**
 * Task reuse for create tasks (the kind a throughput program runs): the matrix and both Bufs set on a kept task, each
 * only when it differs from what the task holds. Undefined when this DOCA lacks a setter (tasks are then allocated and
 * freed one by one).
 */
function createRearming(raw: Raw): Rearming<Request, Buf> | undefined {
  const setMatrix = raw.doca_ec_task_create_set_coding_matrix, setSrc = raw.doca_ec_task_create_set_original_data_blocks;
  const setDst = raw.doca_ec_task_create_set_rdnc_blocks;
  if (!setMatrix || !setSrc || !setDst) return undefined;
  return changedFieldsRearming<Request, Buf>([
    { key: (req) => req.native, set: (typed, req) => setMatrix(typed, req.native) },
    { key: (req) => req.src[HANDLE], set: (typed, req) => setSrc(typed, req.src[NATIVE]) },
    { key: (_req, d) => d[HANDLE], set: (typed, _req, d) => setDst(typed, d[NATIVE]) },
  ]);
}

function taskKind(name: KindName): AllocKind<Request, Buf> {
  const k = KIND_FUNCTIONS[name];
  const taskName = `doca_ec_task_${name}`;
  const raw = doca().raw;
  const alloc = k.alloc(raw), asTask = k.asTask(raw);
  return new AllocKind<Request, Buf>(
    taskName,
    `${taskName}_allocate_init`,
    k.noun,
    (_raw, ec, _slot, req, dst, ud, out) => alloc(ec, req.native, req.src[NATIVE], dst[NATIVE], ud, out),
    (_raw, typed) => asTask(typed),
    undefined,
    name === "create" ? createRearming(raw) : undefined,
  );
}

export class ErasureCoding extends TaskContext<Handle<"doca_ec">> {
  protected readonly kind = "ErasureCoding";
  readonly caps: ErasureCodingCaps;
  protected readonly core: CtxCore;
  readonly #paths: Record<"create" | "recover" | "update" | "galois_mul", TaskPath<Request, Buf>>;
  /** @internal closed matrixs that tasks still read (held-handle.ts) */
  readonly heldHandles: HeldHandles = new HeldHandles();

  constructor(device: Device, pe: ProgressEngine, opts: ErasureCodingOptions = {}) {
    integerIn("ErasureCoding", "maxTasks", opts.maxTasks, 1, MAX_TASKS);
    const maxTasks = opts.maxTasks ?? 64;
    device.assertOpen();
    pe.assertOpen();
    const f = requireFns("doca_ec_create", "doca_ec_destroy", "doca_ec_as_ctx", "doca_ec_task_create_set_conf");
    const caps = ErasureCoding.caps(device);
    if (!caps.create) throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_ec_cap_task_create_is_supported", device.info.pciAddr);
    const handle = createContext(device, f.doca_ec_create, "doca_ec_create") as Handle<"doca_ec">;
    super(handle, device, pe, maxTasks);
    this.caps = caps;
    const kinds = { create: taskKind("create"), recover: taskKind("recover"), update: taskKind("update"), galois_mul: taskKind("galois_mul") };
    let core: CtxCore | undefined;
    try {
      core = new CtxCore(f.doca_ec_as_ctx(handle), pe, this.callbackOwner());
      const paths = {} as Record<keyof typeof kinds, TaskPath<Request, Buf>>;
      for (const name of Object.keys(kinds) as (keyof typeof kinds)[]) {
        const kind = kinds[name];
        kind.bind(this[NATIVE]);
        const path = core.addTasks(kind, maxTasks);
        paths[name] = path;
        const setConf = KIND_FUNCTIONS[name].setConf();
        const cbs = path.completionCallbacks();
        check(setConf(handle, cbs.ok, cbs.error, maxTasks), `doca_ec_task_${name}_set_conf`);
      }
      this.#paths = paths;
      core.start();
    } catch (e) {
      this.abandonUnstarted(core, () => f.doca_ec_destroy(handle));
      throw e;
    }
    this.core = core;
  }

  /** What the device offers (capability queries; false/0 when libdoca_erasure_coding is absent). */
  static caps(device: Device): ErasureCodingCaps {
    device.assertOpen();
    const d = doca();
    const f = d.fns;
    if (!f.doca_ec_cap_get_max_block_size || !f.doca_ec_cap_get_max_buf_list_len) {
      return { maxBlockSize: 0, maxBufListLen: 0, create: false, recover: false };
    }
    const devinfo = device[DEVINFO];
    d.scratch.clear(0);
    const block = f.doca_ec_cap_get_max_block_size(devinfo, d.scratch.slot(0)) === 0 ? d.scratch.u64(0) : 0;
    d.scratch.clear(1);
    const list = f.doca_ec_cap_get_max_buf_list_len(devinfo, d.scratch.slot(1)) === 0 ? d.scratch.u32At(1) : 0;
    return {
      maxBlockSize: block,
      maxBufListLen: list,
      create: f.doca_ec_cap_task_create_is_supported?.(devinfo) === 0,
      recover: f.doca_ec_cap_task_recover_is_supported?.(devinfo) === 0,
    };
  }

  /** DOCA's coding matrix of `type` for `dataBlocks` data and `redundancyBlocks` redundancy blocks. */
  matrix(type: MatrixType, dataBlocks: number, redundancyBlocks: number): CodingMatrix {
    this.assertOpen();
    if (!(type in MATRIX_TYPE)) throw new TypeError(`ErasureCoding.matrix: type must be "cauchy" or "vandermonde", got ${String(type)}`);
    integerIn("ErasureCoding.matrix", "dataBlocks", dataBlocks, 1, 255);
    integerIn("ErasureCoding.matrix", "redundancyBlocks", redundancyBlocks, 1, 255);
    const d = doca();
    d.scratch.clear(0);
    check(
      requireFns("doca_ec_matrix_create").doca_ec_matrix_create(this[HANDLE], MATRIX_TYPE[type], dataBlocks, redundancyBlocks, d.scratch.slot(0)),
      "doca_ec_matrix_create",
      `${type} ${dataBlocks}+${redundancyBlocks}`,
    );
    return new CodingMatrix(this, d.scratch.u64(0), "coding", dataBlocks, redundancyBlocks, dataBlocks, redundancyBlocks, []);
  }

  /** A coding matrix from its entries: `dataBlocks` rows of `redundancyBlocks` bytes (row i: data block i). */
  matrixFromRaw(entries: Uint8Array, dataBlocks: number, redundancyBlocks: number): CodingMatrix {
    this.assertOpen();
    integerIn("ErasureCoding.matrixFromRaw", "dataBlocks", dataBlocks, 1, 255);
    integerIn("ErasureCoding.matrixFromRaw", "redundancyBlocks", redundancyBlocks, 1, 255);
    if (!(entries instanceof Uint8Array) || entries.length !== dataBlocks * redundancyBlocks) {
      throw new RangeError(`ErasureCoding.matrixFromRaw: entries must be a Uint8Array of ${dataBlocks * redundancyBlocks} bytes`);
    }
    const d = doca();
    const staged = d.scratch.bytes(entries);
    try {
      d.scratch.clear(0);
      check(
        requireFns("doca_ec_matrix_create_from_raw").doca_ec_matrix_create_from_raw(this[HANDLE], staged.address, dataBlocks, redundancyBlocks, d.scratch.slot(0)),
        "doca_ec_matrix_create_from_raw",
      );
    } finally {
      staged.done();
    }
    return new CodingMatrix(this, d.scratch.u64(0), "coding", dataBlocks, redundancyBlocks, dataBlocks, redundancyBlocks, []);
  }

  /** Tasks submitted and not yet completed, all kinds. */
  get inflight(): number {
    return Object.values(this.#paths).reduce((n, p) => n + p.inflight, 0);
  }

  /** Redundancy blocks of the source's N data blocks, appended to dst. Rejects with DocaError (doca_ec_task_create). */
  create(matrix: CodingMatrix, src: Buf, dst: Buf): Promise<void> {
    return this.#submit("create", "coding", matrix, src, dst);
  }

  /**
   * Many create tasks with one Promise (resolves once all completed; rejects with the first failure after all
   * settled): each pair is (src: the N data blocks, dst: where the redundancy blocks go). What a throughput-minded
   * program uses for small stripes: the per-task Promise is the largest cost of a 4 KiB task.
   */
  createBatch(matrix: CodingMatrix, pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<void> {
    return this.#submitBatch("create", "coding", matrix, pairs);
  }

  /** The missing blocks of a recover matrix from the N available blocks in src, appended to dst. */
  recover(matrix: CodingMatrix, src: Buf, dst: Buf): Promise<void> {
    return this.#submit("recover", "recover", matrix, src, dst);
  }

  /** New redundancy blocks from (old, new) pairs of the updated blocks and the old redundancy blocks. */
  update(matrix: CodingMatrix, src: Buf, dst: Buf): Promise<void> {
    return this.#submit("update", "update", matrix, src, dst);
  }

  /** dst blocks = src blocks times a coding matrix (DOCA's galois_mul task). */
  galoisMul(matrix: CodingMatrix, src: Buf, dst: Buf): Promise<void> {
    return this.#submit("galois_mul", "coding", matrix, src, dst);
  }

  /**
   * Bytes in, bytes out: `data` holds the matrix's input blocks back to back (its length a multiple of the input
   * block count, each block a multiple of 64 bytes); resolves with the output blocks back to back.
   */
  async encode(matrix: CodingMatrix, data: Uint8Array): Promise<Uint8Array> {
    return await this.#staged(matrix.role === "recover" ? "recover" : matrix.role === "update" ? "update" : "create", matrix, data);
  }

  /** Bytes in, bytes out, through a recover matrix: the N available blocks in, the missing ones out. */
  async recoverBlocks(matrix: CodingMatrix, available: Uint8Array): Promise<Uint8Array> {
    if (matrix.role !== "recover") throw new TypeError("ErasureCoding.recoverBlocks: matrix must come from CodingMatrix.recoverMatrix()");
    return await this.#staged("recover", matrix, available);
  }

  async #staged(kind: "create" | "recover" | "update", matrix: CodingMatrix, data: Uint8Array): Promise<Uint8Array> {
    if (!(data instanceof Uint8Array)) throw new TypeError("ErasureCoding: data must be a Uint8Array");
    this.#assertMatrix(matrix);
    if (data.length === 0 || data.length % matrix.inputBlocks !== 0) {
      throw new RangeError(`ErasureCoding: ${data.length} bytes are not ${matrix.inputBlocks} blocks of equal size`);
    }
    const block = data.length / matrix.inputBlocks;
    return await stagedTask(this.device, [data], block * matrix.outputBlocks, (src, dst) => matrix.using((native) => this.#paths[kind].submit({ matrix, native, src }, dst)));
  }

  #assertMatrix(matrix: CodingMatrix): void {
    if (!(matrix instanceof CodingMatrix)) throw new TypeError("ErasureCoding: matrix must be a CodingMatrix of this context");
    if (matrix.owner !== this) throw new TypeError("ErasureCoding: the matrix belongs to another ErasureCoding");
    matrix.assertOpen();
  }

  #submit(kind: KindName, role: MatrixRole, matrix: CodingMatrix, src: Buf, dst: Buf): Promise<void> {
    this.#assertTask(kind, role, matrix);
    assertBufs(src, dst, "");
    return matrix.using((native) => this.#paths[kind].submit({ matrix, native, src }, dst));
  }

  #submitBatch(kind: KindName, role: MatrixRole, matrix: CodingMatrix, pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<void> {
    this.#assertTask(kind, role, matrix);
    if (!Array.isArray(pairs)) throw new TypeError("ErasureCoding: pairs must be an array of [src, dst] Bufs");
    const dsts: Buf[] = new Array(pairs.length);
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i];
      if (!Array.isArray(pair) || pair.length !== 2) throw new TypeError(`ErasureCoding: pairs[${i}] must be [src, dst]`);
      assertBufs(pair[0], pair[1], `pairs[${i}] `);
      dsts[i] = pair[1];
    }
    return matrix.using((native) => this.#paths[kind].submitBatch(pairs.map(([src]) => ({ matrix, native, src })), dsts));
  }

  #assertTask(kind: KindName, role: MatrixRole, matrix: CodingMatrix): void {
    this.assertOpen();
    this.#assertMatrix(matrix);
    if (matrix.role !== role && !(kind === "recover" && matrix.role === "coding")) {
      throw new TypeError(`ErasureCoding: a ${kind} task needs a ${role} matrix, got a ${matrix.role} matrix`);
    }
  }

  protected override afterStop(): void {
    // IDLE: DOCA flushed every task, so nothing native reads these matrices any more
    this.heldHandles.destroyAll();
  }

  protected destroyNative(handle: number): void {
    check(doca().fns.doca_ec_destroy!(handle), "doca_ec_destroy");
  }
}

/**
 * A doca_ec_matrix: DOCA's coding matrix (N data → M redundancy blocks), or one derived from it for recovery or
 * update. A child of its ErasureCoding: destroyed with it, or by close().
 */
export class CodingMatrix extends HeldHandle<Handle<"doca_ec_matrix">> {
  protected readonly kind = "CodingMatrix";

  /** @internal made by ErasureCoding.matrix / matrixFromRaw and CodingMatrix.recoverMatrix / updateMatrix. */
  constructor(
    readonly owner: ErasureCoding,
    handle: number,
    readonly role: MatrixRole,
    readonly dataBlocks: number,
    readonly redundancyBlocks: number,
    /** Blocks a task with this matrix reads. */
    readonly inputBlocks: number,
    /** Blocks it writes. */
    readonly outputBlocks: number,
    /** recover: the missing block indices (data 0..N-1, redundancy N..N+M-1); update: the updated data blocks. */
    readonly indices: readonly number[],
  ) {
    super(handle, [owner], (h) => doca().fns.doca_ec_matrix_destroy!(h));
  }

  /**
   * The recover matrix for these missing blocks (ascending, data blocks 0..N-1 then redundancy blocks N..N+M-1):
   * a recover task then reads the first N blocks not missing, in index order, and writes the missing ones.
   */
  recoverMatrix(missing: readonly number[]): CodingMatrix {
    return this.#derive("recover", missing, this.dataBlocks + this.redundancyBlocks);
  }

  /** The update matrix for these updated data blocks (ascending). */
  updateMatrix(updated: readonly number[]): CodingMatrix {
    return this.#derive("update", updated, this.dataBlocks);
  }

  /** Which block indices a recover task with this recover matrix reads, in order. */
  get availableBlocks(): number[] {
    if (this.role !== "recover") return [];
    const out: number[] = [];
    for (let i = 0; i < this.dataBlocks + this.redundancyBlocks && out.length < this.dataBlocks; i++) {
      if (!this.indices.includes(i)) out.push(i);
    }
    return out;
  }

  #derive(role: "recover" | "update", indices: readonly number[], limit: number): CodingMatrix {
    this.assertOpen();
    this.owner.assertOpen();
    if (this.role !== "coding") throw new TypeError(`CodingMatrix.${role}Matrix: only a coding matrix derives others`);
    if (!Array.isArray(indices) || indices.length === 0) throw new TypeError(`CodingMatrix.${role}Matrix: indices must be a non-empty array`);
    indices.forEach((v, i) => {
      integerIn(`CodingMatrix.${role}Matrix`, `indices[${i}]`, v, 0, limit - 1);
      if (i > 0 && v <= indices[i - 1]) throw new RangeError(`CodingMatrix.${role}Matrix: indices must be ascending and distinct`);
    });
    if (role === "recover" && indices.length > this.redundancyBlocks) {
      throw new RangeError(`CodingMatrix.recoverMatrix: ${indices.length} missing blocks, at most ${this.redundancyBlocks} can be recovered`);
    }
    const d = doca();
    const list = new Uint8Array(new Uint32Array(indices).buffer);
    const staged = d.scratch.bytes(list);
    const fn = role === "recover" ? "doca_ec_matrix_create_recover" : "doca_ec_matrix_create_update";
    try {
      d.scratch.clear(0);
      check(requireFns(fn)[fn](this.owner[HANDLE], this[HANDLE], staged.address, indices.length, d.scratch.slot(0)), fn, indices.join(","));
    } finally {
      staged.done();
    }
    const n = this.dataBlocks, m = this.redundancyBlocks;
    return role === "recover"
      ? new CodingMatrix(this.owner, d.scratch.u64(0), "recover", n, m, n, indices.length, [...indices])
      : new CodingMatrix(this.owner, d.scratch.u64(0), "update", n, m, 2 * indices.length + m, m, [...indices]);
  }

  protected get waiting(): HeldHandles {
    return this.owner.heldHandles;
  }

  protected destroyHandle(handle: number): void {
    check(doca().fns.doca_ec_matrix_destroy!(handle), "doca_ec_matrix_destroy");
  }

  protected summary(): string {
    return `${this.role} ${this.dataBlocks}+${this.redundancyBlocks}${this.indices.length ? ` [${this.indices.join(",")}]` : ""} ${hex(this[HANDLE])}`;
  }
}
