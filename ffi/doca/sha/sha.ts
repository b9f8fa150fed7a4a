/**
 * DOCA SHA: one-shot hashes on the shared task path (task-path.ts), and streamed hashes as partial sessions.
 *
 * A partial hash in DOCA is one task submitted again and again over consecutive parts, its running state inside the
 * task: so a session owns its task for its whole life (the task path hands its slots' tasks to any request, which
 * would mix sessions). Its completions come through the one bridge like every other (callbacks.ts: the JS task
 * callbacks, routed by the ctx user data to the context's partial-session target and by the task user data, target
 * index * TASK_PATH_SPAN + session slot, to the session); while a part is in flight the session holds the progress
 * engine's pump on.
 */
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { CtxCore } from "../../engine/ctx.ts";
import { createContext, missingReason, TaskContext } from "../common/task-context.ts";
import { HANDLE, NATIVE } from "../../engine/resource.ts";
import type { Native, TaskKind, TaskPath } from "../../engine/task-path.ts";
import { integerIn } from "../../engine/validate.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import { Buf } from "../common/buf.ts";
import { withStaging } from "../common/staging.ts";
import type { Handle } from "../../load/types.ts";
import { nativeCallbacks, TASK_PATH_SPAN } from "../../engine/callbacks.ts";
import { changedFieldsRearming, NativeKind, type Rearming } from "../common/alloc-kind.ts";

/** DOCA's enum doca_sha_algorithm. */
export const ShaAlgorithm = { SHA1: 0, SHA256: 1, SHA512: 2 } as const;
export type ShaAlgorithmName = "sha1" | "sha256" | "sha512";

const ALGORITHMS: Record<ShaAlgorithmName, number> = { sha1: ShaAlgorithm.SHA1, sha256: ShaAlgorithm.SHA256, sha512: ShaAlgorithm.SHA512 };

export interface ShaOptions {
  /** Hash tasks DOCA preallocates (rounded up to a power of two, DOCA takes its log2); default 16, at most 4096. */
  maxTasks?: number;
  /** Partial sessions open at once; default 4, at most 4096. */
  maxSessions?: number;
  timeoutMs?: number;
}

export interface ShaCaps {
  /** Algorithms hash tasks support, and partial hash tasks. */
  hash: ShaAlgorithmName[];
  partial: ShaAlgorithmName[];
  /** The most source bytes one task takes (0 when unsupported). */
  maxSrcBufSize: number;
  /** Digest length (the destination room a task needs) and partial block size, per algorithm. */
  digestLength: Record<ShaAlgorithmName, number>;
  blockSize: Record<ShaAlgorithmName, number>;
  /** Software device only: why algorithms are missing (the backing library and its Debian package). */
  missingReason?: string;
}

const shaFns = () =>
  requireFns(
    "doca_sha_create",
    "doca_sha_destroy",
    "doca_sha_as_ctx",
    "doca_sha_task_hash_set_conf",
    "doca_sha_task_hash_alloc_init",
    "doca_sha_task_hash_as_task",
    "doca_sha_task_partial_hash_set_conf",
    "doca_sha_task_partial_hash_alloc_init",
    "doca_sha_task_partial_hash_as_task",
    "doca_sha_task_partial_hash_set_src",
    "doca_sha_task_partial_hash_set_is_final_buf",
  );

function algorithmOf(where: string, name: unknown): ShaAlgorithmName {
  if (typeof name !== "string" || !(name in ALGORITHMS)) {
    throw new RangeError(`${where}: algorithm must be "sha1", "sha256" or "sha512", got ${String(name)}`);
  }
  return name as ShaAlgorithmName;
}

function assertBuf(value: unknown, where: string, name: string): asserts value is Buf {
  if (!Buf.isBuf(value)) throw new TypeError(`${where}: ${name} must be a Buf from BufInventory.bufByAddr/bufByData`);
  value.assertOpen();
}

interface HashJob {
  algorithm: number;
  dst: Buf;
  before: number;
  length: number;
}

/**
 * doca_sha_task_hash: (src Buf, job) → one task; the digest length is read at completion. Tasks are reused (the task
 * path keeps a completed one in its slot): a kept task gets the source, destination and algorithm set only when they
 * differ from what it holds, where this DOCA has the setters.
 */
class HashKind extends NativeKind implements TaskKind<Buf, HashJob> {
  readonly taskName = "doca_sha_task_hash";
  readonly allocName = "doca_sha_task_hash_alloc_init";
  readonly noun = "hash";
  /** Per slot, the doca_sha_task_hash alloc_init gave (what the setters take). */
  readonly #typed: Native[] = [];
  readonly #rearming: Rearming<Buf, HashJob> | undefined;
  declare rearm?: (slot: number, src: Buf, job: HashJob) => number;

  constructor() {
    super();
    const raw = this.raw;
    const setSrc = raw.doca_sha_task_hash_set_src, setDst = raw.doca_sha_task_hash_set_dst, setAlgorithm = raw.doca_sha_task_hash_set_algorithm;
    if (!setSrc || !setDst || !setAlgorithm) return; // allocated and freed per task
    const rearming = this.#rearming = changedFieldsRearming<Buf, HashJob>([
      { key: (_src, job) => job.algorithm, set: (typed, _src, job) => setAlgorithm(typed, job.algorithm) },
      { key: (src) => src[HANDLE], set: (typed, src) => setSrc(typed, src[NATIVE]) },
      { key: (_src, job) => job.dst[HANDLE], set: (typed, _src, job) => setDst(typed, job.dst[NATIVE]) },
    ]);
    this.rearm = (slot, src, job) => rearming.rearm(this.#typed[slot], slot, src, job);
  }

  allocInit(slot: number, src: Buf, job: HashJob): number {
    const raw = this.raw;
    const rc = raw.doca_sha_task_hash_alloc_init!(this.ctx, job.algorithm, src[NATIVE], job.dst[NATIVE], this.noUserData, this.out);
    if (rc === 0) {
      const typed = this.scratch.u64Native(0);
      this.task = raw.doca_sha_task_hash_as_task!(typed);
      if (this.#rearming) {
        this.#typed[slot] = typed;
        this.#rearming.allocated(slot, src, job);
      }
    }
    return rc;
  }

  complete(_slot: number, _typed: number, ok: boolean, _src: Buf, job: HashJob): void {
    if (ok) job.length = job.dst.dataLength - job.before;
  }
}

/** What a session's completion reaches: the session's own handler, kept outside its public type. */
const sessionDone = new WeakMap<ShaPartial, (ok: boolean) => void>();

/**
 * A streamed hash: update() with parts that are whole blocks (caps.blockSize), then final() with the last part
 * (any length, may be empty-free: at least one byte or a prior update); the digest is appended to the session's
 * destination. One part in flight at a time: calls wait for the one before.
 */
export class ShaPartial {
  readonly algorithm: ShaAlgorithmName;
  readonly dst: Buf;
  readonly #sha: Sha;
  /** The task user data of this session's task: its Sha's partial-session target and its slot there. */
  readonly #userData: number;
  #task = 0; // the doca_sha_task_partial_hash, allocated at the first part
  #busy: { resolve: () => void; reject: (e: Error) => void } | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #finished = false;
  #closed = false;
  #src: Buf | undefined;

  /** Made by Sha.partial(), which names the task user data (its partial-session target's index and a free slot). */
  constructor(sha: Sha, algorithm: ShaAlgorithmName, dst: Buf, userData: number) {
    this.#sha = sha;
    this.algorithm = algorithm;
    this.dst = dst;
    this.#userData = userData;
    sessionDone.set(this, (ok) => this.#onDone(ok));
  }

  /** Whether the final part completed (the destination holds the digest). */
  get finished(): boolean {
    return this.#finished;
  }

  /** Hashes one more part (its data length a multiple of the algorithm's block size). */
  update(src: Buf): Promise<void> {
    return this.#enqueue(src, false).then(() => {});
  }

  /** Hashes the last part and resolves with the digest's length (appended to dst's data). */
  final(src: Buf): Promise<number> {
    const before = this.dst.dataLength;
    return this.#enqueue(src, true).then(() => this.dst.dataLength - before);
  }

  #enqueue(src: Buf, last: boolean): Promise<void> {
    assertBuf(src, last ? "ShaPartial.final" : "ShaPartial.update", "src");
    if (this.#closed) return Promise.reject(new Error("ShaPartial is closed"));
    if (this.#finished) return Promise.reject(new Error("ShaPartial: the final part was hashed already"));
    const run = this.#chain.catch(() => {}).then(() => this.#submit(src, last));
    this.#chain = run;
    return run;
  }

  #submit(src: Buf, last: boolean): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("ShaPartial is closed"));
    this.#sha.assertOpen();
    src.assertOpen();
    const f = doca().fns;
    const d = doca();
    if (this.#task === 0) {
      d.scratch.clear(0);
      check(
        f.doca_sha_task_partial_hash_alloc_init!(this.#sha[HANDLE], ALGORITHMS[this.algorithm], src[HANDLE], this.dst[HANDLE], this.#userData, d.scratch.slot(0)),
        "doca_sha_task_partial_hash_alloc_init",
      );
      this.#task = d.scratch.u64(0);
    } else {
      check(f.doca_sha_task_partial_hash_set_src!(this.#task, src[HANDLE]), "doca_sha_task_partial_hash_set_src");
    }
    if (last) check(f.doca_sha_task_partial_hash_set_is_final_buf!(this.#task), "doca_sha_task_partial_hash_set_is_final_buf");
    this.#src = src; // held until the part completes
    const task = f.doca_sha_task_partial_hash_as_task!(this.#task);
    return new Promise<void>((resolve, reject) => {
      const rc = f.doca_task_submit(task);
      if (rc !== 0) {
        this.#src = undefined;
        reject(new DocaError(rc, "doca_sha_task_partial_hash"));
        return;
      }
      this.#busy = { resolve: () => {
        if (last) this.#finished = true;
        resolve();
      }, reject };
      this.#sha.pe.demand();
    });
  }

  /** A completion of this session's task (inside doca_pe_progress, through the bridge). */
  #onDone(ok: boolean): void {
    const busy = this.#busy;
    this.#busy = undefined;
    this.#src = undefined;
    this.#sha.pe.release();
    if (!busy) return;
    if (ok) busy.resolve();
    else busy.reject(new DocaError(doca().fns.doca_task_get_status(doca().fns.doca_sha_task_partial_hash_as_task!(this.#task)), "doca_sha_task_partial_hash"));
    if (this.#closed) this.#free();
  }

  /** Whether a part is in flight. */
  get inflight(): boolean {
    return this.#busy !== undefined;
  }

  /** Frees the session's task (at once, or when its part in flight completes). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#busy) this.#free();
  }

  #free(): void {
    if (this.#task !== 0) doca().fns.doca_task_free(doca().fns.doca_sha_task_partial_hash_as_task!(this.#task));
    this.#task = 0;
    this.#sha.forget(this);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

export class Sha extends TaskContext<Handle<"doca_sha">> {
  protected readonly kind = "Sha";
  readonly maxSessions: number;
  readonly caps: ShaCaps;
  protected readonly core: CtxCore;
  #path: TaskPath<Buf, HashJob> | undefined;
  /** Open partial sessions by slot (the low part of their task user data). */
  readonly #sessions: (ShaPartial | undefined)[] = [];
  /** The index of the partial sessions' completion target in this context's routes (CtxCore.addTarget). */
  #partialTarget = -1;

  private constructor(handle: number, device: Device, pe: ProgressEngine, maxTasks: number, maxSessions: number, caps: ShaCaps) {
    super(handle, device, pe, maxTasks);
    this.maxSessions = maxSessions;
    this.caps = caps;
    this.core = new CtxCore(shaFns().doca_sha_as_ctx(handle), pe, this.callbackOwner());
  }

  /** What `device` supports (nothing on a DOCA without libdoca_sha). */
  static caps(device: Device): ShaCaps {
    device.assertOpen();
    const d = doca();
    const f = d.fns;
    const devinfo = device[DEVINFO];
    const caps: ShaCaps = {
      hash: [],
      partial: [],
      maxSrcBufSize: 0,
      digestLength: { sha1: 20, sha256: 32, sha512: 64 },
      blockSize: { sha1: 64, sha256: 64, sha512: 128 },
    };
    for (const [name, value] of Object.entries(ALGORITHMS) as [ShaAlgorithmName, number][]) {
      if (f.doca_sha_cap_task_hash_get_supported?.(devinfo, value) === 0) caps.hash.push(name);
      if (f.doca_sha_cap_task_partial_hash_get_supported?.(devinfo, value) === 0) caps.partial.push(name);
      d.scratch.clear(0);
      if (f.doca_sha_cap_get_min_dst_buf_size?.(devinfo, value, d.scratch.slot(0)) === 0) caps.digestLength[name] = d.scratch.u32At(0);
      d.scratch.clear(0);
      if (f.doca_sha_cap_get_partial_hash_block_size?.(devinfo, value, d.scratch.slot(0)) === 0) caps.blockSize[name] = d.scratch.u32At(0);
    }
    d.scratch.clear(0);
    if (f.doca_sha_cap_get_max_src_buf_size?.(devinfo, d.scratch.slot(0)) === 0) caps.maxSrcBufSize = d.scratch.u64(0);
    const missing = missingReason(f.doca_sim_sha_backend_missing, f.doca_sha_create, "sha");
    if (missing) caps.missingReason = missing;
    return caps;
  }

  /** Creates, configures and starts a SHA context; NOT_SUPPORTED when the device hashes with no algorithm. */
  static async open(device: Device, pe: ProgressEngine, opts: ShaOptions = {}): Promise<Sha> {
    integerIn("Sha.open", "maxTasks", opts.maxTasks, 1, 4096);
    integerIn("Sha.open", "maxSessions", opts.maxSessions, 1, 4096);
    integerIn("Sha.open", "timeoutMs", opts.timeoutMs, 1, 2 ** 31 - 1);
    device.assertOpen();
    pe.assertOpen();
    const caps = Sha.caps(device);
    if (caps.hash.length === 0) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_sha_cap_task_hash_get_supported", caps.missingReason ?? device.info.pciAddr);
    }
    const f = shaFns();
    const handle = createContext(device, f.doca_sha_create, "doca_sha_create", device.info.pciAddr);
    const log2 = (n: number) => Math.ceil(Math.log2(n));
    let sha: Sha;
    try {
      sha = new Sha(handle, device, pe, 2 ** log2(opts.maxTasks ?? 16), opts.maxSessions ?? 4, caps);
    } catch (e) {
      f.doca_sha_destroy(handle);
      throw e;
    }
    try {
      const kind = new HashKind();
      kind.bind(sha[NATIVE]);
      sha.#path = sha.core.addTasks(kind, sha.maxTasks);
      const cbs = sha.#path.completionCallbacks();
      check(f.doca_sha_task_hash_set_conf(handle, cbs.ok, cbs.error, log2(sha.maxTasks)), "doca_sha_task_hash_set_conf");
      if (caps.partial.length > 0) {
        // A session keeps its task, so its completions take the bridge's JS task callbacks (routed to this target by
        // the ctx user data and the task user data), not a task path's ring entries.
        sha.#partialTarget = sha.core.addTarget({
          onTaskDone: (_task, slot, ok) => {
            const session = sha.#sessions[slot];
            if (session) sessionDone.get(session)!(ok);
          },
        });
        const js = nativeCallbacks();
        check(f.doca_sha_task_partial_hash_set_conf(handle, js.taskOk.address, js.taskError.address, log2(sha.maxSessions)), "doca_sha_task_partial_hash_set_conf");
      }
      if (!sha.core.start()) await sha.core.untilRunning("Sha", opts.timeoutMs ?? 10_000);
      return sha;
    } catch (e) {
      await sha.close().catch(() => {});
      throw e;
    }
  }

  /** Hash tasks in flight and partial sessions with a part in flight. */
  get inflight(): number {
    let n = this.#path?.inflight ?? 0;
    for (const s of this.#sessions) if (s?.inflight) n++;
    return n;
  }

  /** Appends the digest of src's data to dst's data; resolves with the digest's length. Rejects with DocaError. */
  hash(algorithm: ShaAlgorithmName, src: Buf, dst: Buf): Promise<number> {
    const name = algorithmOf("Sha.hash", algorithm);
    assertBuf(src, "Sha.hash", "src");
    assertBuf(dst, "Sha.hash", "dst");
    this.assertOpen();
    if (!this.caps.hash.includes(name)) {
      return Promise.reject(new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_sha_cap_task_hash_get_supported", `${name}: ${this.caps.missingReason ?? "not supported by the device"}`));
    }
    const job: HashJob = { algorithm: ALGORITHMS[name], dst, before: dst.dataLength, length: 0 };
    return this.#path!.submit(src, job).then(() => job.length);
  }

  /**
   * Many hash tasks with one Promise: resolves with each digest's length in order once all completed; rejects with
   * the first failure after all settled. The per-task Promise is the largest cost of a 4 KiB task.
   */
  hashBatch(algorithm: ShaAlgorithmName, pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<number[]> {
    const name = algorithmOf("Sha.hashBatch", algorithm);
    if (!Array.isArray(pairs)) throw new TypeError("Sha.hashBatch: pairs must be an array of [src, dst] Bufs");
    for (let i = 0; i < pairs.length; i++) {
      if (!Array.isArray(pairs[i]) || pairs[i].length !== 2) throw new TypeError(`Sha.hashBatch: pairs[${i}] must be [src, dst]`);
      assertBuf(pairs[i][0], "Sha.hashBatch", `pairs[${i}][0]`);
      assertBuf(pairs[i][1], "Sha.hashBatch", `pairs[${i}][1]`);
    }
    this.assertOpen();
    if (!this.caps.hash.includes(name)) {
      return Promise.reject(new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_sha_cap_task_hash_get_supported", `${name}: ${this.caps.missingReason ?? "not supported by the device"}`));
    }
    const jobs = pairs.map(([, dst]): HashJob => ({ algorithm: ALGORITHMS[name], dst, before: dst.dataLength, length: 0 }));
    return this.#path!.submitBatch(pairs.map(([src]) => src), jobs).then(() => jobs.map((j) => j.length));
  }

  /** The digest of `data` (copied into native memory of its own), as bytes. */
  digest(algorithm: ShaAlgorithmName, data: Uint8Array): Promise<Uint8Array> {
    const name = algorithmOf("Sha.digest", algorithm);
    if (!(data instanceof Uint8Array)) throw new TypeError("Sha.digest: data must be a Uint8Array");
    this.assertOpen();
    return withStaging(this.device, data, this.caps.digestLength[name], async (src, dst, output) => {
      await this.hash(name, src, dst);
      return output();
    });
  }

  /** A streamed hash session whose digest goes to dst (see ShaPartial); close it when done. */
  partial(algorithm: ShaAlgorithmName, dst: Buf): ShaPartial {
    const name = algorithmOf("Sha.partial", algorithm);
    assertBuf(dst, "Sha.partial", "dst");
    this.assertOpen();
    if (!this.caps.partial.includes(name)) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_sha_cap_task_partial_hash_get_supported", `${name}: ${this.caps.missingReason ?? "not supported by the device"}`);
    }
    let slot = this.#sessions.indexOf(undefined);
    if (slot < 0) slot = this.#sessions.length;
    if (slot >= this.maxSessions) {
      throw new RangeError(`Sha.partial: ${this.maxSessions} sessions are open (maxSessions); close one first`);
    }
    const session = new ShaPartial(this, name, dst, this.#partialTarget * TASK_PATH_SPAN + slot);
    this.#sessions[slot] = session;
    return session;
  }

  /** A session freed its task: its slot is free again. */
  forget(session: ShaPartial): void {
    const slot = this.#sessions.indexOf(session);
    if (slot >= 0) this.#sessions[slot] = undefined;
  }

  /** Idle sessions free their tasks before the stop; those in flight when their flushed part completes. */
  protected override beforeStop(): void {
    for (const s of [...this.#sessions]) s?.close();
  }

  protected destroyNative(handle: number): void {
    check(shaFns().doca_sha_destroy(handle), "doca_sha_destroy");
  }
}
