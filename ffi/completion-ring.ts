/**
 * Task completions without entering JavaScript once per task.
 *
 * DOCA calls a task's completion callback from inside doca_pe_progress. With a JS callback that is one native→JS
 * transition per task (Deno ~170 ns, Bun ~60 ns, koffi more), more than the software device's whole memcpy task.
 * Here the callback is a few bytes of native code (x86-64 SysV, aarch64 AAPCS64; exec-memory.ts places them) that
 * appends the task to a ring in native memory; the progress engine drains the ring after each doca_pe_progress,
 * reading it through a typed-array view: no native→JS transition per task.
 *
 * Every DOCA task completion callback has the shape
 *   void cb(struct doca_<kind>_task_<x> *task, union doca_data task_user_data, union doca_data ctx_user_data)
 * (three 64-bit integer-class arguments: rdi/rsi/rdx, x0/x1/x2). Both stubs record (task, task_user_data,
 * ctx_user_data, ok) and return; the error stub records ok = 0 and the consumer reads doca_task_get_status().
 *
 * Ring layout (little-endian, 64-byte header then 32-byte entries):
 *   [0]  u64 count     completions recorded since the last drain (the stub increments it even when full)
 *   [8]  u64 capacity  entries; a completion beyond it is counted but not stored
 *   [64 + 32*i] u64 task, u64 task_user_data, u64 ctx_user_data, u64 ok (1 success, 0 error)
 * The drain (callbacks.ts drainCompletions, the one bridge) delivers entries 0..count-1 in order and resets count to
 * 0, so the entries in use stay in a few hot cache lines. No completion can be lost silently: completions only run inside doca_pe_progress, every progress is
 * followed by a drain, and at most the tasks in flight can complete before it. Contexts reserve their task count
 * (reserveCompletions) before pointing DOCA at the stubs; the reservations never exceed the capacity, so count never
 * does either, and should it ever (a progress without a drain), drain throws instead of dropping completions quietly.
 *
 * Single-threaded by construction: DOCA runs callbacks on the thread that calls doca_pe_progress, which is the JS
 * thread. Set DOCA_TS_JS_CALLBACKS=1 to use JS callbacks instead (also the automatic fallback).
 */
import process from "node:process";
import { loadLibc, mapPages } from "./library.ts";
import { executableCode } from "./exec-memory.ts";

export interface CompletionRing {
  readonly okCallback: number; // address for *_task_*_set_conf success cb
  readonly errorCallback: number; // address for the error cb
  readonly capacity: number;
  /** The ring's memory as u32 halves (header then entries; plain numbers on every runtime, no BigInt on Deno). */
  readonly view: Uint32Array;
  /** Completions recorded and not yet drained. */
  readonly pending: number;
}

/** Entries in the process-wide ring: the most tasks all ring-using contexts together may have allocated. */
export const RING_CAPACITY = 8192;
export const RING_HEADER_BYTES = 64;
export const RING_ENTRY_BYTES = 32;

export interface StubCode {
  arch: "x64" | "arm64";
  /** The code, with zeros where the ring's address goes. */
  code: Uint8Array;
  okOffset: number;
  errorOffset: number;
  /** Byte offsets of the 8-byte little-endian slots that receive the ring's address. */
  ringAddressAt: number[];
}

/*
 * x86-64 (System V: task in rdi, task_user_data in rsi, ctx_user_data in rdx; rax, rcx, r8, r9 are scratch).
 *   ok:   48 b8 <imm64>     movabs rax, RING
 *         b9 01 00 00 00    mov    ecx, 1
 *         eb 1b             jmp    record
 *         (nop padding to 0x20)
 *   err:  48 b8 <imm64>     movabs rax, RING
 *         31 c9             xor    ecx, ecx
 *   record:
 *         4c 8b 00          mov    r8, [rax]          ; count
 *         4d 8d 48 01       lea    r9, [r8 + 1]
 *         4c 89 08          mov    [rax], r9          ; count + 1, stored even when full (drain detects it)
 *         4c 3b 40 08       cmp    r8, [rax + 8]      ; capacity
 *         73 17             jae    full
 *         49 c1 e0 05       shl    r8, 5              ; * 32
 *         49 01 c0          add    r8, rax
 *         49 89 78 40       mov    [r8 + 64], rdi
 *         49 89 70 48       mov    [r8 + 72], rsi
 *         49 89 50 50       mov    [r8 + 80], rdx
 *         49 89 48 58       mov    [r8 + 88], rcx
 *   full: c3                ret
 */
const X64 = [
  0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xb9, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x1b,
  0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x1f, 0x40, 0x00,
  0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x31, 0xc9,
  0x4c, 0x8b, 0x00, 0x4d, 0x8d, 0x48, 0x01, 0x4c, 0x89, 0x08, 0x4c, 0x3b, 0x40, 0x08, 0x73, 0x17,
  0x49, 0xc1, 0xe0, 0x05, 0x49, 0x01, 0xc0, 0x49, 0x89, 0x78, 0x40, 0x49, 0x89, 0x70, 0x48,
  0x49, 0x89, 0x50, 0x50, 0x49, 0x89, 0x48, 0x58, 0xc3,
];

/*
 * aarch64 (AAPCS64: task in x0, task_user_data in x1, ctx_user_data in x2; x3, x9-x12 are scratch).
 *   ok:     d2800023  mov  x3, #1
 *           14000002  b    record
 *   err:    d2800003  mov  x3, #0
 *   record: 58000169  ldr  x9, ring            ; PC-relative literal at 0x38
 *           f940012a  ldr  x10, [x9]           ; count
 *           9100054b  add  x11, x10, #1
 *           f900012b  str  x11, [x9]           ; count + 1, stored even when full
 *           f940052c  ldr  x12, [x9, #8]       ; capacity
 *           eb0c015f  cmp  x10, x12
 *           54000082  b.hs full
 *           8b0a152a  add  x10, x9, x10, lsl #5
 *           a9040540  stp  x0, x1, [x10, #64]
 *           a9050d42  stp  x2, x3, [x10, #80]
 *   full:   d65f03c0  ret
 *   ring:   <u64>                          ; at 0x38, 8-byte aligned
 * (Bytes from GNU as: aarch64-linux-gnu-as; the x86-64 ones likewise from as.)
 */
const ARM64_WORDS = [
  0xd2800023, 0x14000002, 0xd2800003, 0x58000169, 0xf940012a, 0x9100054b, 0xf900012b, 0xf940052c,
  0xeb0c015f, 0x54000082, 0x8b0a152a, 0xa9040540, 0xa9050d42, 0xd65f03c0, 0, 0,
];

/** The stub bytes for an architecture (exported for the C and qemu tests), or undefined if unsupported. */
export function stubCode(arch: string): StubCode | undefined {
  if (arch === "x64") return { arch, code: Uint8Array.from(X64), okOffset: 0, errorOffset: 0x20, ringAddressAt: [2, 0x22] };
  if (arch === "arm64") {
    const code = new Uint8Array(ARM64_WORDS.length * 4);
    const view = new DataView(code.buffer);
    ARM64_WORDS.forEach((w, i) => view.setUint32(i * 4, w, true));
    return { arch, code, okOffset: 0, errorOffset: 8, ringAddressAt: [14 * 4] };
  }
  return undefined;
}

/** Writes `address` into every ring-address slot of a copy of `stub.code`. */
export function patchStub(stub: StubCode, address: number): Uint8Array {
  const code = stub.code.slice();
  const view = new DataView(code.buffer);
  for (const at of stub.ringAddressAt) {
    view.setUint32(at, address % 4294967296, true);
    view.setUint32(at + 4, Math.floor(address / 4294967296), true);
  }
  return code;
}

const TWO32 = 4294967296;

class NativeCompletionRing implements CompletionRing {
  constructor(readonly okCallback: number, readonly errorCallback: number, readonly capacity: number, readonly view: Uint32Array) {}

  get pending(): number {
    return this.view[0] + this.view[1] * TWO32;
  }
}

let ring: NativeCompletionRing | undefined;
let decided = false;
let reserved = 0;

function jsCallbacksForced(): boolean {
  try {
    return process.env.DOCA_TS_JS_CALLBACKS === "1";
  } catch {
    return false; // Deno without --allow-env: the default path
  }
}

function create(): NativeCompletionRing | undefined {
  const stub = stubCode(process.arch);
  if (!stub) return undefined;
  const bytes = RING_HEADER_BYTES + RING_CAPACITY * RING_ENTRY_BYTES;
  const address = mapPages(bytes);
  const { libc, backend } = loadLibc();
  const u32 = new Uint32Array(backend.view(address, bytes));
  u32[2] = RING_CAPACITY; // capacity, u64 at [8]
  const code = executableCode(patchStub(stub, address));
  if (code === undefined) {
    libc.munmap(address, bytes);
    return undefined;
  }
  return new NativeCompletionRing(code + stub.okOffset, code + stub.errorOffset, RING_CAPACITY, u32);
}

/** The process-wide ring, or undefined when executable memory is refused / arch unsupported / DOCA_TS_JS_CALLBACKS=1 (then callers use JS callbacks). */
export function completionRing(): CompletionRing | undefined {
  if (!decided) {
    decided = true;
    ring = jsCallbacksForced() ? undefined : create();
  }
  return ring;
}

/**
 * Reserves ring entries for a context's task pool (its set_conf task count) before it hands DOCA the ring's
 * callbacks. False when the ring is absent or the reservations would exceed its capacity: that context then uses
 * JS callbacks. Call releaseCompletions with the same count once the context is destroyed.
 */
export function reserveCompletions(tasks: number): boolean {
  if (!completionRing() || !(tasks > 0) || reserved + tasks > RING_CAPACITY) return false;
  reserved += tasks;
  return true;
}

export function releaseCompletions(tasks: number): void {
  reserved = Math.max(0, reserved - tasks);
}
