/**
 * DOCA Compress on the shared task path (task-path.ts): deflate compress and decompress, LZ4 stream and block
 * decompress. Each task kind says only how to allocate its task and what its completion yields (the output length and
 * DOCA's checksums of the uncompressed bytes); the path does slots, queueing, errors as DocaError, flush on stop and
 * the completion ring. Deflate is raw deflate (no zlib or gzip framing), as DOCA produces and expects it.
 */
import { doca, requireFns } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { CtxCore } from "../../engine/ctx.ts";
import { createContext, missingReason, TaskContext } from "../common/task-context.ts";
import { NATIVE } from "../../engine/resource.ts";
import type { Native, TaskKind, TaskPath } from "../../engine/task-path.ts";
import { integerIn } from "../../engine/validate.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import { Buf } from "../common/buf.ts";
import { withStaging } from "../common/staging.ts";
import type { Handle } from "../../load/types.ts";
import { NativeKind } from "../common/alloc-kind.ts";

export interface CompressOptions {
  /** Tasks DOCA preallocates per task kind (and the most in flight per kind); default 16, at most 4096. */
  maxTasks?: number;
  /** How long open() waits for the context to start; default 10 s. */
  timeoutMs?: number;
}

/** A deflate task's result: bytes appended to the destination, and DOCA's checksums of the uncompressed bytes. */
export interface DeflateResult {
  length: number;
  crc32: number;
  adler32: number;
}

/**
 * An LZ4 task's result: bytes appended to the destination, CRC-32 and xxHash-32 of the decompressed bytes (the plain
 * hash value, as an LZ4 frame stores it little-endian: DOCA's own xxh_cs getter gives it byte-swapped).
 */
export interface Lz4Result {
  length: number;
  crc32: number;
  xxhash32: number;
}

export interface Lz4StreamOptions {
  /** Every block is followed by its xxHash-32 (the frame's block checksum flag); default false. */
  blockChecksum?: boolean;
  /** Blocks do not refer to earlier blocks (the frame's block independence flag); default true. */
  independentBlocks?: boolean;
}

/** What the device can do, by task kind (doca_compress_cap_task_*). */
export interface CompressCaps {
  compressDeflate: boolean;
  decompressDeflate: boolean;
  decompressLz4Stream: boolean;
  decompressLz4Block: boolean;
  /** The largest source one task takes (the smallest over the supported kinds; 0 when none). */
  maxBufSize: number;
  /** Software device only: why kinds are missing (the backing library and its Debian package), if they are. */
  missingReason?: string;
}

/** One request as it travels the path: the destination, the LZ4 flags, and what the completion found. */
interface Job {
  dst: Buf;
  before: number;
  blockChecksum: number;
  independent: number;
  length: number;
  crc32: number;
  other: number;
}

type Raw = ReturnType<typeof doca>["raw"];
type Fns = ReturnType<typeof doca>["fns"];
type Name = "compress_deflate" | "decompress_deflate" | "decompress_lz4_stream" | "decompress_lz4_block";

const KINDS: readonly Name[] = ["compress_deflate", "decompress_deflate", "decompress_lz4_stream", "decompress_lz4_block"];

/** Every function a Compress needs (optional in the table: a DOCA without libdoca_compress lacks them). */
const compressFns = () =>
  requireFns(
    "doca_compress_create",
    "doca_compress_destroy",
    "doca_compress_as_ctx",
    "doca_compress_task_compress_deflate_alloc_init",
    "doca_compress_task_decompress_deflate_alloc_init",
    "doca_compress_task_decompress_lz4_stream_alloc_init",
    "doca_compress_task_decompress_lz4_block_alloc_init",
  );

type AnyFn = (...args: (number | bigint)[]) => number & bigint;
/** The four kinds share their shapes (lz4 stream's alloc_init takes two flags more): one call type for the table. */
const loose = (f: unknown) => f as AnyFn | undefined;

/** The DOCA functions of one task kind, each named in full (picked from the table by name, none assembled). */
interface KindFunctions {
  isSupported: AnyFn | undefined;
  maxBufSize: AnyFn | undefined;
  setConf: AnyFn | undefined;
  alloc: AnyFn | undefined;
  asTask: AnyFn | undefined;
  crc: AnyFn | undefined;
  /** Adler-32 for the deflate kinds, DOCA's byte-swapped xxHash-32 for LZ4. */
  other: AnyFn | undefined;
}

function kindFunctions(name: Name, f: Fns, raw: Raw): KindFunctions {
  switch (name) {
    case "compress_deflate":
      return {
        isSupported: loose(f.doca_compress_cap_task_compress_deflate_is_supported),
        maxBufSize: loose(f.doca_compress_cap_task_compress_deflate_get_max_buf_size),
        setConf: loose(f.doca_compress_task_compress_deflate_set_conf),
        alloc: loose(raw.doca_compress_task_compress_deflate_alloc_init),
        asTask: loose(raw.doca_compress_task_compress_deflate_as_task),
        crc: loose(f.doca_compress_task_compress_deflate_get_crc_cs),
        other: loose(f.doca_compress_task_compress_deflate_get_adler_cs),
      };
    case "decompress_deflate":
      return {
        isSupported: loose(f.doca_compress_cap_task_decompress_deflate_is_supported),
        maxBufSize: loose(f.doca_compress_cap_task_decompress_deflate_get_max_buf_size),
        setConf: loose(f.doca_compress_task_decompress_deflate_set_conf),
        alloc: loose(raw.doca_compress_task_decompress_deflate_alloc_init),
        asTask: loose(raw.doca_compress_task_decompress_deflate_as_task),
        crc: loose(f.doca_compress_task_decompress_deflate_get_crc_cs),
        other: loose(f.doca_compress_task_decompress_deflate_get_adler_cs),
      };
    case "decompress_lz4_stream":
      return {
        isSupported: loose(f.doca_compress_cap_task_decompress_lz4_stream_is_supported),
        maxBufSize: loose(f.doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size),
        setConf: loose(f.doca_compress_task_decompress_lz4_stream_set_conf),
        alloc: loose(raw.doca_compress_task_decompress_lz4_stream_alloc_init),
        asTask: loose(raw.doca_compress_task_decompress_lz4_stream_as_task),
        crc: loose(f.doca_compress_task_decompress_lz4_stream_get_crc_cs),
        other: loose(f.doca_compress_task_decompress_lz4_stream_get_xxh_cs),
      };
    case "decompress_lz4_block":
      return {
        isSupported: loose(f.doca_compress_cap_task_decompress_lz4_block_is_supported),
        maxBufSize: loose(f.doca_compress_cap_task_decompress_lz4_block_get_max_buf_size),
        setConf: loose(f.doca_compress_task_decompress_lz4_block_set_conf),
        alloc: loose(raw.doca_compress_task_decompress_lz4_block_alloc_init),
        asTask: loose(raw.doca_compress_task_decompress_lz4_block_as_task),
        crc: loose(f.doca_compress_task_decompress_lz4_block_get_crc_cs),
        other: loose(f.doca_compress_task_decompress_lz4_block_get_xxh_cs),
      };
  }
}

/** A function of a kind's table, or NOT_SUPPORTED naming it when this DOCA lacks it. */
function need(found: AnyFn | undefined, name: string): AnyFn {
  if (!found) throw new DocaError(DocaErrorCode.NOT_SUPPORTED, name, "this DOCA does not export it");
  return found;
}

function bswap32(x: number): number {
  return (((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

/** One compress task kind: (src Buf, Job) → one doca_compress_task_<name>, its results read at completion. */
class CompressKind extends NativeKind implements TaskKind<Buf, Job> {
  readonly taskName: string;
  readonly allocName: string;
  readonly noun: string;
  readonly #alloc: AnyFn;
  readonly #asTask: (typed: Native) => Native;
  readonly fns: KindFunctions;
  readonly #crc: (typed: number) => number;
  readonly #other: (typed: number) => number;

  constructor(readonly name: Name) {
    super();
    this.taskName = `doca_compress_task_${name}`;
    this.allocName = `${this.taskName}_alloc_init`;
    this.noun = name.replaceAll("_", " ");
    this.fns = kindFunctions(name, doca().fns, this.raw);
    this.#alloc = need(this.fns.alloc, this.allocName);
    const asTask = need(this.fns.asTask, `${this.taskName}_as_task`);
    this.#asTask = (typed) => asTask(typed);
    const crc = need(this.fns.crc, `${this.taskName}_get_crc_cs`);
    this.#crc = (typed) => crc(typed) >>> 0;
    const other = need(this.fns.other, `${this.taskName}_get_${name.endsWith("deflate") ? "adler" : "xxh"}_cs`);
    // DOCA's xxh_cs is the hash byte-swapped (see doca_compress.h): handed out as the plain xxHash-32 value
    this.#other = name.endsWith("deflate") ? (typed) => other(typed) >>> 0 : (typed) => bswap32(other(typed));
  }

  allocInit(_slot: number, src: Buf, job: Job): number {
    const rc = this.name === "decompress_lz4_stream"
      ? this.#alloc(this.ctx, job.blockChecksum, job.independent, src[NATIVE], job.dst[NATIVE], this.noUserData, this.out)
      : this.#alloc(this.ctx, src[NATIVE], job.dst[NATIVE], this.noUserData, this.out);
    if (rc === 0) this.task = this.#asTask(this.scratch.u64Native(0));
    return rc;
  }

  complete(_slot: number, typedTask: number, ok: boolean, _src: Buf, job: Job): void {
    if (!ok) return;
    job.crc32 = this.#crc(typedTask);
    job.other = this.#other(typedTask);
    job.length = job.dst.dataLength - job.before;
  }
}

function assertBuf(value: unknown, method: string, name: string): asserts value is Buf {
  if (!Buf.isBuf(value)) {
    throw new TypeError(`Compress.${method}: ${name} must be a Buf from BufInventory.bufByAddr/bufByData`);
  }
  value.assertOpen();
}

export class Compress extends TaskContext<Handle<"doca_compress">> {
  protected readonly kind = "Compress";
  /** The capabilities found at open. */
  readonly caps: CompressCaps;
  protected readonly core: CtxCore;
  readonly #paths = new Map<Name, TaskPath<Buf, Job>>();

  private constructor(handle: number, device: Device, pe: ProgressEngine, maxTasks: number, caps: CompressCaps) {
    super(handle, device, pe, maxTasks);
    this.caps = caps;
    this.core = new CtxCore(compressFns().doca_compress_as_ctx(handle), pe, this.callbackOwner());
  }

  /** What `device` supports (every kind false on a DOCA without libdoca_compress). */
  static caps(device: Device): CompressCaps {
    device.assertOpen();
    const d = doca();
    const f = d.fns;
    const devinfo = device[DEVINFO];
    const supported = (name: Name) => {
      const cap = kindFunctions(name, f, d.raw).isSupported;
      return cap !== undefined && cap(devinfo) === 0;
    };
    const caps: CompressCaps = {
      compressDeflate: supported("compress_deflate"),
      decompressDeflate: supported("decompress_deflate"),
      decompressLz4Stream: supported("decompress_lz4_stream"),
      decompressLz4Block: supported("decompress_lz4_block"),
      maxBufSize: 0,
    };
    let max = Number.MAX_SAFE_INTEGER;
    for (const name of KINDS) {
      const get = kindFunctions(name, f, d.raw).maxBufSize;
      d.scratch.clear(0);
      if (get && get(devinfo, d.scratch.slot(0)) === 0) max = Math.min(max, d.scratch.u64(0));
    }
    caps.maxBufSize = max === Number.MAX_SAFE_INTEGER ? 0 : max;
    const missing = missingReason(f.doca_sim_compress_backend_missing, f.doca_compress_create, "compress");
    if (missing) caps.missingReason = missing;
    return caps;
  }

  /**
   * Creates, configures (every kind the device supports) and starts a compress context. A device that supports no
   * kind (or a DOCA without libdoca_compress) is DocaError NOT_SUPPORTED.
   */
  static async open(device: Device, pe: ProgressEngine, opts: CompressOptions = {}): Promise<Compress> {
    integerIn("Compress.open", "maxTasks", opts.maxTasks, 1, 4096);
    integerIn("Compress.open", "timeoutMs", opts.timeoutMs, 1, 2 ** 31 - 1);
    device.assertOpen();
    pe.assertOpen();
    const caps = Compress.caps(device);
    if (!caps.compressDeflate && !caps.decompressDeflate && !caps.decompressLz4Stream && !caps.decompressLz4Block) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_compress_cap_task_compress_deflate_is_supported", caps.missingReason ?? device.info.pciAddr);
    }
    const f = compressFns();
    const handle = createContext(device, f.doca_compress_create, "doca_compress_create", device.info.pciAddr);
    let c: Compress;
    try {
      c = new Compress(handle, device, pe, opts.maxTasks ?? 16, caps);
    } catch (e) {
      f.doca_compress_destroy(handle);
      throw e;
    }
    try {
      c.#configure(handle);
      if (!c.core.start()) await c.core.untilRunning("Compress", opts.timeoutMs ?? 10_000);
      return c;
    } catch (e) {
      await c.close().catch(() => {});
      throw e;
    }
  }

  #configure(handle: number): void {
    const wanted: Record<Name, boolean> = {
      compress_deflate: this.caps.compressDeflate,
      decompress_deflate: this.caps.decompressDeflate,
      decompress_lz4_stream: this.caps.decompressLz4Stream,
      decompress_lz4_block: this.caps.decompressLz4Block,
    };
    for (const name of KINDS) {
      if (!wanted[name]) continue;
      const kind = new CompressKind(name);
      kind.bind(this[NATIVE]);
      const path = this.core.addTasks(kind, this.maxTasks);
      const cbs = path.completionCallbacks();
      check(need(kind.fns.setConf, `${kind.taskName}_set_conf`)(handle, cbs.ok, cbs.error, this.maxTasks), `${kind.taskName}_set_conf`);
      this.#paths.set(name, path);
    }
  }

  /** Tasks of every kind submitted and not completed. */
  get inflight(): number {
    let n = 0;
    for (const p of this.#paths.values()) n += p.inflight;
    return n;
  }

  /** Deflates src's data (raw deflate) onto the end of dst's data. Rejects with DocaError (TOO_BIG: dst too small). */
  compressDeflate(src: Buf, dst: Buf): Promise<DeflateResult> {
    return this.#run("compress_deflate", "compressDeflate", src, dst, 0, 1).then((j) => ({ length: j.length, crc32: j.crc32, adler32: j.other }));
  }

  /**
   * Many deflate tasks with one Promise: resolves with each pair's result in order once all completed; rejects with
   * the first failure after all settled. The per-task Promise is the largest cost of a 4 KiB task.
   */
  compressDeflateBatch(pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<DeflateResult[]> {
    return this.#runBatch("compress_deflate", "compressDeflateBatch", pairs).then((jobs) => jobs.map((j) => ({ length: j.length, crc32: j.crc32, adler32: j.other })));
  }

  /** Inflates src's data (raw deflate) onto the end of dst's data. Corrupt input rejects with DocaError INVALID_VALUE. */
  decompressDeflate(src: Buf, dst: Buf): Promise<DeflateResult> {
    return this.#run("decompress_deflate", "decompressDeflate", src, dst, 0, 1).then((j) => ({ length: j.length, crc32: j.crc32, adler32: j.other }));
  }

  /** Decompresses the blocks of an LZ4 frame (without the frame's header, end mark and content checksum). */
  decompressLz4Stream(src: Buf, dst: Buf, opts: Lz4StreamOptions = {}): Promise<Lz4Result> {
    const checksum = opts.blockChecksum === true ? 1 : 0;
    const independent = opts.independentBlocks === false ? 0 : 1;
    return this.#run("decompress_lz4_stream", "decompressLz4Stream", src, dst, checksum, independent)
      .then((j) => ({ length: j.length, crc32: j.crc32, xxhash32: j.other }));
  }

  /** Decompresses one bare LZ4 block (no size word, no checksum). */
  decompressLz4Block(src: Buf, dst: Buf): Promise<Lz4Result> {
    return this.#run("decompress_lz4_block", "decompressLz4Block", src, dst, 0, 1).then((j) => ({ length: j.length, crc32: j.crc32, xxhash32: j.other }));
  }

  /**
   * Raw deflate of `data` (copied into native memory of its own): the compressed bytes and DOCA's checksums of `data`.
   * `maxOutput` bounds the output (default: what deflate needs at worst for incompressible input).
   */
  compressBytes(data: Uint8Array, opts: { maxOutput?: number } = {}): Promise<DeflateResult & { bytes: Uint8Array }> {
    if (!(data instanceof Uint8Array)) throw new TypeError("Compress.compressBytes: data must be a Uint8Array");
    integerIn("Compress.compressBytes", "maxOutput", opts.maxOutput, 1, 2 ** 31);
    this.assertOpen();
    const room = opts.maxOutput ?? data.length + (data.length >> 10) + 1024;
    return withStaging(this.device, data, room, async (src, dst, output) => ({ ...(await this.compressDeflate(src, dst)), bytes: output() }));
  }

  /** Inflates raw deflate `data` into at most `maxOutput` bytes (DocaError TOO_BIG beyond): the bytes and checksums. */
  decompressBytes(data: Uint8Array, opts: { maxOutput: number }): Promise<DeflateResult & { bytes: Uint8Array }> {
    if (!(data instanceof Uint8Array)) throw new TypeError("Compress.decompressBytes: data must be a Uint8Array");
    integerIn("Compress.decompressBytes", "maxOutput", opts?.maxOutput, 1, 2 ** 31);
    if (opts?.maxOutput === undefined) throw new RangeError("Compress.decompressBytes: maxOutput is required");
    this.assertOpen();
    return withStaging(this.device, data, opts.maxOutput, async (src, dst, output) => ({ ...(await this.decompressDeflate(src, dst)), bytes: output() }));
  }

  #run(name: Name, method: string, src: Buf, dst: Buf, blockChecksum: number, independent: number): Promise<Job> {
    assertBuf(src, method, "src");
    assertBuf(dst, method, "dst");
    this.assertOpen();
    const path = this.#paths.get(name);
    const refused = this.#refusal(name, method, path, src);
    if (refused) return Promise.reject(refused);
    const job: Job = { dst, before: dst.dataLength, blockChecksum, independent, length: 0, crc32: 0, other: 0 };
    return path!.submit(src, job).then(() => job);
  }

  #runBatch(name: Name, method: string, pairs: ReadonlyArray<readonly [Buf, Buf]>): Promise<Job[]> {
    if (!Array.isArray(pairs)) throw new TypeError(`Compress.${method}: pairs must be an array of [src, dst] Bufs`);
    for (let i = 0; i < pairs.length; i++) {
      if (!Array.isArray(pairs[i]) || pairs[i].length !== 2) throw new TypeError(`Compress.${method}: pairs[${i}] must be [src, dst]`);
      assertBuf(pairs[i][0], method, `pairs[${i}][0]`);
      assertBuf(pairs[i][1], method, `pairs[${i}][1]`);
    }
    this.assertOpen();
    const path = this.#paths.get(name);
    for (const [src] of pairs) {
      const refused = this.#refusal(name, method, path, src);
      if (refused) return Promise.reject(refused);
    }
    const jobs = pairs.map(([, dst]): Job => ({ dst, before: dst.dataLength, blockChecksum: 0, independent: 1, length: 0, crc32: 0, other: 0 }));
    return path!.submitBatch(pairs.map(([src]) => src), jobs).then(() => jobs);
  }

  /** Why a task of this kind on `src` is refused before it reaches DOCA (the kind unsupported, src too large). */
  #refusal(name: Name, method: string, path: unknown, src: Buf): DocaError | undefined {
    if (!path) return new DocaError(DocaErrorCode.NOT_SUPPORTED, `doca_compress_cap_task_${name}_is_supported`, this.caps.missingReason ?? this.device.info.pciAddr);
    if (this.caps.maxBufSize > 0 && src.dataLength > this.caps.maxBufSize) {
      return new DocaError(DocaErrorCode.INVALID_VALUE, `doca_compress_task_${name}`, `Compress.${method}: ${src.dataLength} bytes exceed the device's max buf size of ${this.caps.maxBufSize}`);
    }
    return undefined;
  }

  protected destroyNative(handle: number): void {
    check(compressFns().doca_compress_destroy(handle), "doca_compress_destroy");
  }
}
