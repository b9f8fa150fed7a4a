/**
 * DOCA AES-GCM (libdoca_aes_gcm) on the one task path: an AesGcm context with DOCA's encrypt and decrypt tasks, and
 * AesGcmKey resources in the ownership tree under it (closing the context destroys its keys first). Tasks take Bufs
 * laid out as the software device documents (sim/README.md, "AES-GCM"): encrypt reads AAD then plaintext and
 * appends AAD, ciphertext, tag; decrypt reads AAD, ciphertext, tag and appends AAD, plaintext, only when the tag
 * verifies (else DocaError AUTHENTICATION, the destination untouched). seal()/open() do the same over bytes in JS.
 *
 * libdoca_aes_gcm is optional, and needs OpenSSL's libcrypto.so.3 on the software device: without either the
 * constructor throws DocaError NOT_SUPPORTED saying why (AesGcm.unavailableReason()).
 */
import { doca, missingLibraryReason, requireFns } from "../../native/library.ts";
import { check, DocaError } from "../../native/errors.ts";
import { DocaErrorCode } from "../../native/constants.ts";
import { CtxCore } from "../../engine/ctx.ts";
import { TaskContext } from "../common/task-context.ts";
import { hex, HANDLE, NATIVE } from "../../engine/resource.ts";
import type { Native, TaskPath } from "../../engine/task-path.ts";
import { integerIn, MAX_TASKS } from "../../engine/validate.ts";
import type { Handle } from "../../load/types.ts";
import type { Device } from "../common/device.ts";
import { DEVINFO } from "../common/device.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import { Buf } from "../common/buf.ts";
import { NativeMemory } from "../common/memory.ts";
import { AllocKind, changedFieldsRearming, type Rearming } from "../common/alloc-kind.ts";
import { stagedTask } from "../common/staging.ts";
import { HeldHandle, HeldHandles } from "../common/held-handle.ts";

/** DOCA's key types (enum doca_aes_gcm_key_type): KEY_128 = 1, KEY_256 = 2. */
const KEY_TYPE = { 16: 1, 32: 2 } as const;
/** DOCA's tag sizes: 96 or 128 bits. */
export type AesGcmTagSize = 12 | 16;
const MAX_IV = 12;

export interface AesGcmOptions {
  /** Tasks DOCA preallocates per direction (and the most in flight at once); default 64. */
  maxTasks?: number;
}

export interface AesGcmCaps {
  encrypt: boolean;
  decrypt: boolean;
  /** Largest source of one task, bytes (AAD, data and tag together). */
  maxBufSize: number;
  maxBufListLen: number;
}

/** One task's parameters besides its buffers. */
export interface AesGcmParams {
  key: AesGcmKey;
  /** 0 to 12 bytes (12 is the portable choice). */
  iv: Uint8Array;
  /** 12 or 16; default 16. */
  tagSize?: AesGcmTagSize;
  /** Bytes of AAD at the start of the source; default 0. */
  aadSize?: number;
}

/** One task of a batch: its buffers and its own IV (GCM must never reuse an IV under one key). */
export interface AesGcmBatchItem {
  src: Buf;
  dst: Buf;
  iv: Uint8Array;
}

/**
 * One task's request, flat (one object per task): the key's native handle taken at submit (valid until the task
 * settles, even if the key is closed), the source and the parameters besides the destination.
 */
type Request = { key: Native; src: Buf; iv: Uint8Array; tagSize: number; aadSize: number };

type Raw = ReturnType<typeof doca>["raw"];

/**
 * Task reuse for one direction: a kept task gets the request's IV every time (GCM never reuses one under a key) and
 * the key, Bufs, tag and AAD sizes only when they differ from what it holds. `stageIv` writes the IV into the slot's
 * native IV area and gives its address. Undefined when this DOCA lacks a setter (tasks are then allocated one by one).
 */
function aesRearming(raw: Raw, direction: "encrypt" | "decrypt", stageIv: (slot: number, iv: Uint8Array) => Native): Rearming<Request, Buf> | undefined {
  const t = `doca_aes_gcm_task_${direction}` as const;
  const setSrc = raw[`${t}_set_src`], setDst = raw[`${t}_set_dst`], setKey = raw[`${t}_set_key`], setIv = raw[`${t}_set_iv`];
  const setTag = raw[`${t}_set_tag_size`], setAad = raw[`${t}_set_aad_size`];
  if (!setSrc || !setDst || !setKey || !setIv || !setTag || !setAad) return undefined;
  return changedFieldsRearming<Request, Buf>(
    [
      { key: (req) => req.key, set: (typed, req) => setKey(typed, req.key) },
      { key: (req) => req.src[HANDLE], set: (typed, req) => setSrc(typed, req.src[NATIVE]) },
      { key: (_req, d) => d[HANDLE], set: (typed, _req, d) => setDst(typed, d[NATIVE]) },
      { key: (req) => req.tagSize, set: (typed, req) => setTag(typed, req.tagSize) },
      { key: (req) => req.aadSize, set: (typed, req) => setAad(typed, req.aadSize) },
    ],
    (typed, slot, req) => {
      setIv(typed, stageIv(slot, req.iv), req.iv.length);
      return 0;
    },
  );
}

function assertBuf(method: string, buf: Buf, where: string, name: string): void {
  if (!Buf.isBuf(buf)) throw new TypeError(`AesGcm.${method}: ${where}${name} must be a Buf from a BufInventory`);
  buf.assertOpen();
}

function assertBufs(method: string, src: Buf, dst: Buf, where: string): void {
  assertBuf(method, src, where, "src");
  assertBuf(method, dst, where, "dst");
}

export class AesGcm extends TaskContext<Handle<"doca_aes_gcm">> {
  protected readonly kind = "AesGcm";
  readonly caps: AesGcmCaps;
  protected readonly core: CtxCore;
  readonly #encrypt: TaskPath<Request, Buf>;
  readonly #decrypt: TaskPath<Request, Buf>;
  /** Per direction and slot, 16 bytes holding the IV of the task in that slot (DOCA reads it through a pointer). */
  readonly #ivs: NativeMemory;
  /** @internal closed keys that tasks still read (held-handle.ts) */
  readonly heldHandles: HeldHandles = new HeldHandles();

  constructor(device: Device, pe: ProgressEngine, opts: AesGcmOptions = {}) {
    integerIn("AesGcm", "maxTasks", opts.maxTasks, 1, MAX_TASKS / 2);
    const maxTasks = opts.maxTasks ?? 64;
    device.assertOpen();
    pe.assertOpen();
    const f = requireFns("doca_aes_gcm_create", "doca_aes_gcm_destroy", "doca_aes_gcm_as_ctx", "doca_aes_gcm_task_encrypt_set_conf", "doca_aes_gcm_task_decrypt_set_conf");
    const caps = AesGcm.caps(device);
    if (!caps.encrypt || !caps.decrypt) {
      throw new DocaError(DocaErrorCode.NOT_SUPPORTED, "doca_aes_gcm_cap_task_encrypt_is_supported", AesGcm.unavailableReason() ?? device.info.pciAddr);
    }
    const d = doca();
    d.scratch.clear(0);
    check(f.doca_aes_gcm_create(device[HANDLE], d.scratch.slot(0)), "doca_aes_gcm_create", AesGcm.unavailableReason());
    const handle = d.scratch.u64(0) as Handle<"doca_aes_gcm">;
    super(handle, device, pe, maxTasks);
    this.caps = caps;
    this.#ivs = NativeMemory.alloc(2 * maxTasks * 16);
    // Hot path: the IV area's view and each slot's IV address in native form (a plain number where Deno's raw
    // functions take bigint costs a conversion per call), and each direction's functions, all taken once.
    const ivBytes = this.#ivs.bytes;
    const native = d.backend.native;
    const ivAt: Native[] = Array.from({ length: 2 * maxTasks }, (_, i) => native(this.#ivs.address + i * 16));
    const raw = d.raw;
    const kind = (direction: "encrypt" | "decrypt", base: number) => {
      const t = `doca_aes_gcm_task_${direction}` as const;
      const allocInit = raw[`${t}_alloc_init`]!, asTask = raw[`${t}_as_task`]!;
      return new AllocKind<Request, Buf>(
        t,
        `${t}_alloc_init`,
        direction === "encrypt" ? "encryption" : "decryption",
        (_raw, aes, slot, req, dst, ud, out) => {
          ivBytes.set(req.iv, (base + slot) * 16);
          return allocInit(aes, req.src[NATIVE], dst[NATIVE], req.key, ivAt[base + slot], req.iv.length, req.tagSize, req.aadSize, ud, out);
        },
        (_raw, typed) => asTask(typed),
        // a queued request keeps its own copy of the IV: the caller may reuse its array at once
        (req, dst) => [{ ...req, iv: req.iv.slice() }, dst],
        aesRearming(raw, direction, (slot, iv) => {
          ivBytes.set(iv, (base + slot) * 16);
          return ivAt[base + slot];
        }),
      );
    };
    let core: CtxCore | undefined;
    try {
      core = new CtxCore(f.doca_aes_gcm_as_ctx(handle), pe, this.callbackOwner());
      const enc = kind("encrypt", 0), dec = kind("decrypt", maxTasks);
      enc.bind(this[NATIVE]);
      dec.bind(this[NATIVE]);
      this.#encrypt = core.addTasks(enc, maxTasks);
      this.#decrypt = core.addTasks(dec, maxTasks);
      const e = this.#encrypt.completionCallbacks(), x = this.#decrypt.completionCallbacks();
      check(f.doca_aes_gcm_task_encrypt_set_conf(handle, e.ok, e.error, maxTasks), "doca_aes_gcm_task_encrypt_set_conf");
      check(f.doca_aes_gcm_task_decrypt_set_conf(handle, x.ok, x.error, maxTasks), "doca_aes_gcm_task_decrypt_set_conf");
      core.start();
    } catch (e) {
      this.abandonUnstarted(core, () => {
        f.doca_aes_gcm_destroy(handle);
        this.#ivs.close();
      });
      throw e;
    }
    this.core = core;
  }

  /** Why AES-GCM cannot run on the software device (libcrypto.so.3 missing), or undefined. */
  static unavailableReason(): string | undefined {
    const d = doca();
    if (!d.fns.doca_aes_gcm_create) return missingLibraryReason("aes_gcm");
    const status = d.fns.doca_sim_aes_gcm_status?.();
    return status ? d.backend.cstring(status) : undefined;
  }

  static caps(device: Device): AesGcmCaps {
    device.assertOpen();
    const d = doca();
    const f = d.fns;
    if (!f.doca_aes_gcm_cap_task_encrypt_is_supported || !f.doca_aes_gcm_cap_task_decrypt_is_supported) {
      return { encrypt: false, decrypt: false, maxBufSize: 0, maxBufListLen: 0 };
    }
    const devinfo = device[DEVINFO];
    d.scratch.clear(0);
    const size = f.doca_aes_gcm_cap_task_encrypt_get_max_buf_size?.(devinfo, d.scratch.slot(0)) === 0 ? d.scratch.u64(0) : 0;
    d.scratch.clear(1);
    const list = f.doca_aes_gcm_cap_task_encrypt_get_max_list_buf_num_elem?.(devinfo, d.scratch.slot(1)) === 0 ? d.scratch.u32At(1) : 0;
    return {
      encrypt: f.doca_aes_gcm_cap_task_encrypt_is_supported(devinfo) === 0,
      decrypt: f.doca_aes_gcm_cap_task_decrypt_is_supported(devinfo) === 0,
      maxBufSize: size,
      maxBufListLen: list,
    };
  }

  /** A key of 16 (AES-128) or 32 (AES-256) bytes; the bytes are copied into DOCA. */
  key(raw: Uint8Array): AesGcmKey {
    this.assertOpen();
    if (!(raw instanceof Uint8Array) || (raw.length !== 16 && raw.length !== 32)) {
      throw new RangeError("AesGcm.key: raw must be a Uint8Array of 16 or 32 bytes");
    }
    const d = doca();
    const staged = d.scratch.bytes(raw);
    try {
      d.scratch.clear(0);
      check(
        requireFns("doca_aes_gcm_key_create").doca_aes_gcm_key_create(this[HANDLE], staged.address, KEY_TYPE[raw.length as 16 | 32], d.scratch.slot(0)),
        "doca_aes_gcm_key_create",
      );
    } finally {
      d.scratch.bytes(new Uint8Array(raw.length)).done(); // the key bytes do not stay in the scratch area
      staged.done();
    }
    return new AesGcmKey(this, d.scratch.u64(0), raw.length * 8);
  }

  /** Tasks submitted and not yet completed. */
  get inflight(): number {
    return this.#encrypt.inflight + this.#decrypt.inflight;
  }

  /** Encrypts src (AAD, then plaintext) into dst (AAD, ciphertext, tag appended). Rejects with DocaError. */
  encrypt(src: Buf, dst: Buf, params: AesGcmParams): Promise<void> {
    return this.#submit(this.#encrypt, "encrypt", src, dst, params);
  }

  /** Decrypts src (AAD, ciphertext, tag) into dst (AAD, plaintext); a bad tag rejects with DocaError AUTHENTICATION. */
  decrypt(src: Buf, dst: Buf, params: AesGcmParams): Promise<void> {
    return this.#submit(this.#decrypt, "decrypt", src, dst, params);
  }

  /**
   * Many encrypt tasks with one Promise (resolves once all completed; rejects with the first failure after all
   * settled), all under one key, tag size and AAD size, each with its own IV. The per-task Promise is the largest
   * cost of a 4 KiB task: a throughput-minded program submits batches.
   */
  encryptBatch(items: readonly AesGcmBatchItem[], params: Omit<AesGcmParams, "iv">): Promise<void> {
    return this.#submitBatch(this.#encrypt, "encryptBatch", items, params);
  }

  /** Many decrypt tasks with one Promise (see encryptBatch); a bad tag rejects with DocaError AUTHENTICATION. */
  decryptBatch(items: readonly AesGcmBatchItem[], params: Omit<AesGcmParams, "iv">): Promise<void> {
    return this.#submitBatch(this.#decrypt, "decryptBatch", items, params);
  }

  /** Bytes in, bytes out: resolves with ciphertext ‖ tag (the AAD is authenticated, not returned). */
  async seal(plaintext: Uint8Array, params: AesGcmParams & { aad?: Uint8Array }): Promise<Uint8Array> {
    const aad = params.aad ?? new Uint8Array(0);
    const p = this.#params("seal", { ...params, aadSize: aad.length });
    const out = await stagedTask(this.device, [aad, plaintext], aad.length + plaintext.length + p.tagSize, (src, dst) =>
      p.key.using((key) => this.#encrypt.submit({ key, src, iv: p.iv, tagSize: p.tagSize, aadSize: p.aadSize }, dst)));
    return out.subarray(aad.length);
  }

  /** ciphertext ‖ tag in, plaintext out; rejects with DocaError AUTHENTICATION when anything was changed. */
  async open(sealed: Uint8Array, params: AesGcmParams & { aad?: Uint8Array }): Promise<Uint8Array> {
    const aad = params.aad ?? new Uint8Array(0);
    const p = this.#params("open", { ...params, aadSize: aad.length });
    if (sealed.length < p.tagSize) throw new RangeError(`AesGcm.open: ${sealed.length} bytes cannot hold a ${p.tagSize}-byte tag`);
    const out = await stagedTask(this.device, [aad, sealed], aad.length + sealed.length - p.tagSize, (src, dst) =>
      p.key.using((key) => this.#decrypt.submit({ key, src, iv: p.iv, tagSize: p.tagSize, aadSize: p.aadSize }, dst)));
    return out.subarray(aad.length);
  }

  #params(method: string, params: AesGcmParams): Required<AesGcmParams> {
    this.assertOpen();
    if (typeof params !== "object" || params === null) throw new TypeError(`AesGcm.${method}: params must be an object`);
    const { key, iv } = params;
    if (!(key instanceof AesGcmKey) || key.owner !== this) throw new TypeError(`AesGcm.${method}: key must be an AesGcmKey of this context`);
    key.assertOpen();
    if (!(iv instanceof Uint8Array) || iv.length > MAX_IV) throw new RangeError(`AesGcm.${method}: iv must be a Uint8Array of 0 to 12 bytes`);
    const tagSize = params.tagSize ?? 16;
    if (tagSize !== 12 && tagSize !== 16) throw new RangeError(`AesGcm.${method}: tagSize must be 12 or 16, got ${String(tagSize)}`);
    const aadSize = params.aadSize ?? 0;
    if (aadSize !== 0) integerIn(`AesGcm.${method}`, "aadSize", aadSize, 0, 0xffff_ffff); // no string per task
    return { key, iv, tagSize, aadSize };
  }

  #submit(path: TaskPath<Request, Buf>, method: string, src: Buf, dst: Buf, params: AesGcmParams): Promise<void> {
    const p = this.#params(method, params);
    assertBufs(method, src, dst, "");
    return p.key.using((key) => path.submit({ key, src, iv: p.iv, tagSize: p.tagSize, aadSize: p.aadSize }, dst));
  }

  #submitBatch(path: TaskPath<Request, Buf>, method: string, items: readonly AesGcmBatchItem[], params: Omit<AesGcmParams, "iv">): Promise<void> {
    if (!Array.isArray(items)) throw new TypeError(`AesGcm.${method}: items must be an array of { src, dst, iv }`);
    const shared = this.#params(method, { ...params, iv: new Uint8Array(0) });
    const dsts: Buf[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (typeof item !== "object" || item === null) throw new TypeError(`AesGcm.${method}: items[${i}] must be { src, dst, iv }`);
      assertBufs(method, item.src, item.dst, `items[${i}].`);
      if (!(item.iv instanceof Uint8Array) || item.iv.length > MAX_IV) throw new RangeError(`AesGcm.${method}: items[${i}].iv must be a Uint8Array of 0 to 12 bytes`);
      dsts[i] = item.dst;
    }
    const { tagSize, aadSize } = shared;
    return shared.key.using((key) => path.submitBatch(items.map((item) => ({ key, src: item.src, iv: item.iv, tagSize, aadSize })), dsts));
  }

  protected override afterStop(): void {
    // IDLE: DOCA flushed every task, so nothing native reads these keys any more (DOCA refuses to destroy the
    // context while a key lives)
    this.heldHandles.destroyAll();
    this.#ivs.close();
  }

  protected destroyNative(handle: number): void {
    check(doca().fns.doca_aes_gcm_destroy!(handle), "doca_aes_gcm_destroy");
  }
}

/** A doca_aes_gcm_key of one AesGcm context: destroyed with it, or by close(). */
export class AesGcmKey extends HeldHandle<Handle<"doca_aes_gcm_key">> {
  protected readonly kind = "AesGcmKey";

  /** @internal made by AesGcm.key(). */
  constructor(readonly owner: AesGcm, handle: number, readonly bits: number) {
    super(handle, [owner], (h) => doca().fns.doca_aes_gcm_key_destroy!(h));
  }

  protected get waiting(): HeldHandles {
    return this.owner.heldHandles;
  }

  protected destroyHandle(handle: number): void {
    check(doca().fns.doca_aes_gcm_key_destroy!(handle), "doca_aes_gcm_key_destroy");
  }

  protected summary(): string {
    return `AES-${this.bits} ${hex(this[HANDLE])}`;
  }
}
