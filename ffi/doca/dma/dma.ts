/**
 * DMA memcpy on the shared task path (task-path.ts): a copy is one task between two Bufs of at most the device's
 * max buf size; copy() splits a range of any length into such tasks, several in flight, one Promise.
 */
import { doca } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { CtxCore } from "../../engine/ctx.ts";
import { createContext, TaskContext } from "../common/task-context.ts";
import { HANDLE, NATIVE } from "../../engine/resource.ts";
import type { BatchHandles, Native, TaskKind, TaskPath } from "../../engine/task-path.ts";
import { integerIn, MAX_TASKS, nonNegative } from "../../engine/validate.ts";
import type { Device } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import type { Mmap } from "../common/mmap.ts";
import { Buf, bufClosesSoFar, BufInventory } from "../common/buf.ts";
import { callEach, type CallEach, symbolAddress } from "../../native/native-call.ts";
import type { Handle } from "../../load/types.ts";
import { NativeKind } from "../common/alloc-kind.ts";

/** Native addresses of the functions memcpyBatch runs over columns of handles (native-call.ts), looked up once. */
let batchFns: { setSrc: number; setDst: number; submit: number; reset: number } | undefined;
function batchFunctions(): { setSrc: number; setDst: number; submit: number; reset: number } {
  if (!batchFns) {
    const files = doca().info.files;
    batchFns = {
      setSrc: symbolAddress(files.dma, "doca_dma_task_memcpy_set_src"),
      setDst: symbolAddress(files.dma, "doca_dma_task_memcpy_set_dst"),
      submit: symbolAddress(files.common, "doca_task_submit"),
      reset: symbolAddress(files.common, "doca_buf_reset_data_len"),
    };
  }
  return batchFns;
}

export interface DmaOptions {
  /** Tasks DOCA preallocates (and the most in flight at once); default 256, at most 65536. */
  maxTasks?: number;
}

/** A stretch of a memory map: where a copy reads or writes. */
export interface DmaRange {
  mmap: Mmap;
  address: number;
  length: number;
}

export interface DmaRangeCopyOptions {
  /** Tasks in flight at once for this copy; default 8 (bounded by the Dma's maxTasks). */
  inflight?: number;
}

/** Only a Buf from a BufInventory carries a live doca_buf; anything else would hand native code a forged pointer. */
function assertBuf(value: unknown, method: string, name: string): asserts value is Buf {
  if (!Buf.isBuf(value)) {
    throw new TypeError(`Dma.${method}: ${name} must be a Buf from BufInventory.bufByAddr/bufByData, got ${describe(value)}`);
  }
  value.assertOpen();
}

function describe(value: unknown): string {
  if (value === null || typeof value !== "object") return String(value);
  return value.constructor?.name ?? "object";
}

/**
 * doca_dma_task_memcpy: (src Buf, dst Buf) → one task, the slot as its user data. Tasks are reused: a completed
 * task is re-armed with doca_dma_task_memcpy_set_src/_set_dst (only when the buffers changed) and resubmitted.
 */
class MemcpyKind extends NativeKind implements TaskKind<Buf, Buf> {
  readonly taskName = "doca_dma_task_memcpy";
  readonly noun = "copy";
  readonly allocName = "doca_dma_task_memcpy_alloc_init";

  // Per slot: the doca_dma_task_memcpy (native form, for calls), and as plain numbers (comparisons and the batch
  // columns: on Deno native values are BigInts, whose === and conversions cost on every task) the same task, its
  // doca_task, and the buffers it is armed with.
  readonly #memcpyTasks: Native[];
  readonly #memcpyTasksH: number[];
  readonly #tasksH: number[];
  readonly #armedSrc: number[];
  readonly #armedDst: number[];
  /** The native batch loop, or undefined (no executable memory, unsupported arch, DOCA_TS_JS_CALLBACKS=1). */
  readonly #each: CallEach | undefined;
  /** Rows of the shared CallEach columns that still hold what the last submitMany wrote (0: none known). */
  #columnRows = 0;

  constructor(capacity: number) {
    super();
    this.#memcpyTasks = new Array(capacity).fill(0);
    this.#memcpyTasksH = new Array(capacity).fill(0);
    this.#tasksH = new Array(capacity).fill(0);
    this.#armedSrc = new Array(capacity).fill(0);
    this.#armedDst = new Array(capacity).fill(0);
    this.#each = callEach();
    if (this.#each === undefined) this.submitMany = undefined;
  }

  allocInit(slot: number, src: Buf, dst: Buf): number {
    // Hot path: raw functions with pre-converted arguments (see Backend.native), looked up once; nothing allocated.
    const raw = this.raw;
    const rc = raw.doca_dma_task_memcpy_alloc_init(this.ctx, src[NATIVE], dst[NATIVE], this.noUserData, this.out);
    if (rc === 0) {
      const memcpyTask = this.scratch.u64Native(0);
      this.task = raw.doca_dma_task_memcpy_as_task(memcpyTask);
      this.#memcpyTasks[slot] = memcpyTask;
      this.#memcpyTasksH[slot] = Number(memcpyTask);
      this.#tasksH[slot] = Number(this.task);
      this.#armedSrc[slot] = src[HANDLE];
      this.#armedDst[slot] = dst[HANDLE];
    }
    return rc;
  }

  rearm(slot: number, src: Buf, dst: Buf): number {
    const raw = this.raw;
    const s = src[HANDLE], t = dst[HANDLE];
    if (this.#armedSrc[slot] !== s) {
      raw.doca_dma_task_memcpy_set_src(this.#memcpyTasks[slot], src[NATIVE]);
      this.#armedSrc[slot] = s;
    }
    if (this.#armedDst[slot] !== t) {
      raw.doca_dma_task_memcpy_set_dst(this.#memcpyTasks[slot], dst[NATIVE]);
      this.#armedDst[slot] = t;
    }
    return 0;
  }

  /**
   * Re-arms and submits n kept tasks with native loops (native-call.ts): set_src and set_dst over columns only when
   * some pair changed, then doca_task_submit over the task column stopping at the first failure: three FFI calls
   * per batch instead of one or three per task. Columns skip writes of unchanged values, so a batch that repeats
   * the previous one writes nothing.
   */
  submitMany?(slots: Int32Array, n: number, srcs: readonly Buf[], dsts: readonly Buf[], handles?: BatchHandles, again = false): number {
    const each = this.#each!;
    n = Math.min(n, each.capacity);
    const fns = batchFunctions();
    const T = 0, S = 1, D = 2, K = 3; // columns: memcpy tasks, sources, destinations, tasks
    // The same slots and pairs as the previous call, and the columns still as it left them: only the submit loop.
    const mine = each.claim(this);
    if (again && mine && this.#columnRows === n) return each.run(fns.submit, n, true, K);
    this.#columnRows = 0;
    // The handles memcpyBatch already read (one getter per Buf per batch).
    const srcN: ArrayLike<number> = handles?.a ?? srcs.map((b) => b[HANDLE]);
    const dstN: ArrayLike<number> = handles?.b ?? dsts.map((b) => b[HANDLE]);
    let rearm = false;
    for (let k = 0; k < n; k++) {
      const slot = slots[k];
      const s = srcN[k], t = dstN[k];
      if (this.#armedSrc[slot] !== s || this.#armedDst[slot] !== t) {
        rearm = true;
        this.#armedSrc[slot] = s;
        this.#armedDst[slot] = t;
      }
      each.set(T, k, this.#memcpyTasksH[slot]);
      each.set(S, k, s);
      each.set(D, k, t);
      each.set(K, k, this.#tasksH[slot]);
    }
    if (rearm) {
      each.run(fns.setSrc, n, false, T, S);
      each.run(fns.setDst, n, false, T, D);
    }
    this.#columnRows = n;
    return each.run(fns.submit, n, true, K);
  }

  /** Resets the data section of every destination (memcpyBatch's resetDestinations), natively where possible. */
  resetAll(dstN: ArrayLike<number>, count: number): void {
    const each = this.#each;
    let done = 0;
    if (each && count >= 2) {
      if (!each.claim(this)) this.#columnRows = 0; // another user's rows are in the columns now
      const n = Math.min(count, each.capacity);
      for (let k = 0; k < n; k++) each.set(2, k, dstN[k]);
      done = each.run(batchFunctions().reset, n, true, 2);
    }
    const native = doca().backend.native;
    for (let k = done; k < count; k++) check(this.raw.doca_buf_reset_data_len(native(dstN[k])), "doca_buf_reset_data_len");
  }


}

export class Dma extends TaskContext<Handle<"doca_dma">> {
  protected readonly kind = "Dma";
  /** The largest copy one task may do (doca_dma_cap_task_memcpy_get_max_buf_size). */
  readonly maxBufSize: number;
  protected readonly core: CtxCore;
  readonly #path: TaskPath<Buf, Buf>;
  readonly #kind: MemcpyKind;
  #srcN = new Float64Array(0);
  #dstN = new Float64Array(0);
  /**
   * The batch whose handles #srcN/#dstN hold: its pairs array, Bufs, and the Buf close count when it was checked.
   * A memcpyBatch that repeats it (a loop over the same buffers, none closed since) needs no Buf checked again.
   * Weakly held: a cache must not keep Bufs the caller dropped from their finalizers.
   */
  #checked: WeakRef<{ pairs: Array<[Buf, Buf]>; srcs: Buf[]; dsts: Buf[]; closes: number }> | undefined;

  constructor(device: Device, pe: ProgressEngine, opts: DmaOptions = {}) {
    integerIn("Dma", "maxTasks", opts.maxTasks, 1, MAX_TASKS);
    const maxTasks = opts.maxTasks ?? 256;
    device.assertOpen();
    pe.assertOpen();
    if (!device.info.caps.dmaMemcpy) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_dma_cap_task_memcpy_is_supported", device.info.pciAddr);
    }
    const d = doca();
    const f = d.fns;
    const handle = createContext(device, f.doca_dma_create, "doca_dma_create");
    super(handle, device, pe, maxTasks);
    // 0 means the device did not say: no limit of ours (the device still refuses what it cannot do).
    this.maxBufSize = device.info.caps.dmaMaxBufSize || Number.MAX_SAFE_INTEGER;
    const kind = new MemcpyKind(maxTasks);
    kind.bind(this[NATIVE]);
    this.#kind = kind;
    let core: CtxCore | undefined;
    try {
      core = new CtxCore(f.doca_dma_as_ctx(handle), pe, this.callbackOwner());
      this.#path = core.addTasks(kind, maxTasks);
      // Completions through the native completion ring when it has room, else JS callbacks.
      const cbs = this.#path.completionCallbacks();
      check(f.doca_dma_task_memcpy_set_conf(handle, cbs.ok, cbs.error, maxTasks), "doca_dma_task_memcpy_set_conf");
      core.start();
    } catch (e) {
      this.abandonUnstarted(core, () => f.doca_dma_destroy(handle));
      throw e;
    }
    this.core = core;
  }

  static caps(device: Device): { maxBufSize: number; maxBufListLen: number } {
    return { maxBufSize: device.info.caps.dmaMaxBufSize, maxBufListLen: device.info.caps.dmaMaxBufListLen };
  }

  /** Tasks submitted and not yet completed. */
  get inflight(): number {
    return this.#path.inflight;
  }

  /** Where task completions come from: the native completion ring, or JS callbacks (the fallback). */
  get completionSource(): "ring" | "js" {
    return this.#path.usesRing ? "ring" : "js";
  }

  /**
   * How a memcpyBatch settles: "counted" (the ring counts its successes, one read per drain settles them all) or
   * "per-task" (each completion settles its own slot: JS callbacks, or no ring counter free).
   */
  get batchCompletion(): "counted" | "per-task" {
    return this.#path.countsBatches ? "counted" : "per-task";
  }

  /**
   * Completed tasks kept for reuse (re-armed for the next copies instead of freed and allocated again): live DOCA
   * task objects while the Dma is open, freed when it closes. For leak accounting.
   */
  get keptTasks(): number {
    return this.#path.kept;
  }

  /**
   * Copies src's data into dst (dst's data section grows by the copied bytes) as one task: at most maxBufSize
   * bytes (use copy() for more). Rejects with DocaError (fn "doca_dma_task_memcpy").
   */
  memcpy(src: Buf, dst: Buf): Promise<void> {
    // Bad arguments and a closed Dma throw at once; DOCA's verdicts arrive as rejections.
    if (!Buf.isOpenBuf(src) || !Buf.isOpenBuf(dst)) {
      // The slow path says exactly what is wrong.
      assertBuf(src, "memcpy", "src");
      assertBuf(dst, "memcpy", "dst");
    }
    this.assertOpen();
    if (src.length > this.maxBufSize) {
      const length = src.dataLength;
      if (length > this.maxBufSize) return Promise.reject(this.#tooBig(length, "memcpy"));
    }
    return this.#path.submit(src, dst);
  }

  /**
   * Submits every pair, resolves once all completed (rejects with the first failure after all settled). Where
   * executable memory is allowed the pairs that fit the free tasks go out through native loops (three FFI calls
   * per batch). `resetDestinations`: empty each destination's data section first (a loop reusing its destinations).
   */
  memcpyBatch(pairs: Array<[Buf, Buf]>, opts: { resetDestinations?: boolean } = {}): Promise<void> {
    this.assertOpen();
    if (!Array.isArray(pairs)) throw new TypeError("Dma.memcpyBatch: pairs must be an array of [src, dst] Bufs");
    const last = this.#checked?.deref();
    if (last !== undefined && last.pairs === pairs && last.closes === bufClosesSoFar() && Dma.#repeats(pairs, last.srcs, last.dsts)) {
      if (opts.resetDestinations === true) this.#kind.resetAll(this.#dstN, pairs.length);
      return this.#path.submitBatch(last.srcs, last.dsts, { a: this.#srcN, b: this.#dstN });
    }
    this.#checked = undefined;
    const n = pairs.length;
    const srcs: Buf[] = new Array(n), dsts: Buf[] = new Array(n);
    // Handles as plain numbers, read once here; scratch reused by every batch (read synchronously below).
    if (this.#srcN.length < n) {
      this.#srcN = new Float64Array(n);
      this.#dstN = new Float64Array(n);
    }
    const srcN = this.#srcN, dstN = this.#dstN;
    let tooBig: DocaError | undefined;
    let sized = true; // every source's whole range fits one task (else its data length must be read every time)
    for (let i = 0; i < n; i++) {
      const pair = pairs[i];
      if (!Array.isArray(pair) || pair.length !== 2) throw new TypeError(`Dma.memcpyBatch: pairs[${i}] must be [src, dst]`);
      const s = pair[0], t = pair[1];
      if (!Buf.isOpenBuf(s) || !Buf.isOpenBuf(t)) {
        assertBuf(s, "memcpyBatch", `pairs[${i}][0]`);
        assertBuf(t, "memcpyBatch", `pairs[${i}][1]`);
      }
      if (s.length > this.maxBufSize) {
        sized = false;
        if (s.dataLength > this.maxBufSize) tooBig ??= this.#tooBig(s.dataLength, "memcpyBatch");
      }
      srcs[i] = s;
      dsts[i] = t;
      srcN[i] = s[HANDLE];
      dstN[i] = t[HANDLE];
    }
    if (tooBig) return Promise.reject(tooBig);
    if (sized) this.#checked = new WeakRef({ pairs, srcs, dsts, closes: bufClosesSoFar() });
    if (opts.resetDestinations === true) this.#kind.resetAll(dstN, n);
    return this.#path.submitBatch(srcs, dsts, { a: srcN, b: dstN });
  }

  /** Whether `pairs` still holds exactly the Bufs it held when last checked (same length, same pairs in order). */
  static #repeats(pairs: Array<[Buf, Buf]>, srcs: Buf[], dsts: Buf[]): boolean {
    const n = srcs.length;
    if (pairs.length !== n) return false;
    for (let i = 0; i < n; i++) {
      const pair = pairs[i];
      if (pair[0] !== srcs[i] || pair[1] !== dsts[i]) return false;
    }
    return true;
  }

  /** One task copies at most maxBufSize bytes (the device refuses more, or worse on hardware): say what to use. */
  #tooBig(length: number, method: string): DocaError {
    return new DocaError(
      DocaErrorCode.INVALID_VALUE,
      "doca_dma_task_memcpy",
      `Dma.${method}: ${length} bytes exceed the device's max DMA buf size of ${this.maxBufSize} bytes ` +
        "(doca_dma_cap_task_memcpy_get_max_buf_size); use Dma.copy(src, dst) for a copy of any length",
    );
  }

  /**
   * Copies src into dst, any length: split into tasks of at most maxBufSize, `inflight` of them at once, one
   * Promise. A Buf source copies its data section; a Buf destination receives into its range (from its start).
   * Resolves with the number of bytes copied; on a failure the remaining chunks are not started.
   */
  async copy(src: Buf | DmaRange, dst: Buf | DmaRange, opts: DmaRangeCopyOptions = {}): Promise<number> {
    this.assertOpen();
    integerIn("Dma.copy", "inflight", opts.inflight, 1, this.maxTasks);
    const from = this.#range(src, "src", true);
    const to = this.#range(dst, "dst", false);
    if (from.length > to.length) {
      throw new RangeError(`Dma.copy: source of ${from.length} bytes does not fit the destination of ${to.length} bytes`);
    }
    const total = from.length;
    if (total === 0) return 0;
    const chunk = this.maxBufSize;
    const chunks = Math.ceil(total / chunk);
    const window = Math.min(opts.inflight ?? 8, chunks, this.maxTasks);
    using inventory = new BufInventory(2 * window);
    let next = 0;
    let failure: unknown;
    const lane = async () => {
      while (failure === undefined && next < chunks) {
        const offset = next++ * chunk;
        const length = Math.min(chunk, total - offset);
        const s = inventory.bufByData(from.mmap, from.address + offset, length);
        const t = inventory.bufByAddr(to.mmap, to.address + offset, length);
        try {
          await this.#path.submit(s, t);
        } catch (e) {
          failure ??= e;
        } finally {
          s.closeSync();
          t.closeSync();
        }
      }
    };
    await Promise.all(Array.from({ length: window }, lane));
    if (failure !== undefined) throw failure;
    return total;
  }

  #range(value: Buf | DmaRange, name: string, isSource: boolean): DmaRange {
    if (Buf.isBuf(value)) {
      value.assertOpen();
      return isSource
        ? { mmap: value.mmap, address: value.dataAddress, length: value.dataLength }
        : { mmap: value.mmap, address: value.address, length: value.length };
    }
    if (typeof value !== "object" || value === null || !("mmap" in value)) {
      throw new TypeError(`Dma.copy: ${name} must be a Buf or { mmap, address, length }, got ${describe(value)}`);
    }
    nonNegative(`Dma.copy ${name}`, "address", value.address);
    nonNegative(`Dma.copy ${name}`, "length", value.length);
    value.mmap.assertOpen();
    return value;
  }

  protected destroyNative(handle: number): void {
    check(doca().fns.doca_dma_destroy(handle), "doca_dma_destroy");
  }
}
