/// <reference lib="deno.ns" />
/**
 * One FFI call for many native calls: a loop in machine code (placed like the completion ring's stubs, see
 * exec-memory.ts) that calls fn(col0[i], col1[i], col2[i]) for i < n and stops at the first nonzero int result when
 * asked to. Submitting a batch of DOCA tasks then costs three FFI calls (set_src, set_dst, doca_task_submit over
 * columns of handles) instead of three per task. Functions of fewer arguments ignore the extra ones (both ABIs pass
 * them in registers), and a void function is run with checkResult = false.
 *
 *   uint64_t call_each(void *fn, uint64_t n, const uint64_t *col0, const uint64_t *col1, const uint64_t *col2,
 *                      uint32_t result_mask)   // returns how many calls returned (result & mask) == 0 in a row
 *
 * x86-64 (SysV; rbx, rbp, r12-r15 saved; the mask lives in the 8-byte stack slot that realigns rsp to 16):
 *   push rbx; push rbp; push r12; push r13; push r14; push r15; sub rsp, 8; mov [rsp], r9
 *   mov rbx, rdi; mov rbp, rsi; mov r12, rdx; mov r13, rcx; mov r14, r8; xor r15d, r15d
 *   loop: cmp r15, rbp; jae done
 *         mov rdi, [r12+r15*8]; mov rsi, [r13+r15*8]; mov rdx, [r14+r15*8]; call rbx
 *         test [rsp], eax; jne done; inc r15; jmp loop
 *   done: mov rax, r15; add rsp, 8; pop r15; pop r14; pop r13; pop r12; pop rbp; pop rbx; ret
 * aarch64 (AAPCS64; x19-x25 saved in an 80-byte frame with x29/x30):
 *   stp x29, x30, [sp, #-80]!; mov x29, sp; stp x19, x20, [sp, #16]; stp x21, x22, [sp, #32]; stp x23, x24, [sp, #48]
 *   str x25, [sp, #64]; mov x19..x23, x0..x4; mov x25, x5; mov x24, #0
 *   loop: cmp x24, x20; b.hs done; ldr x0/x1/x2, [x21/x22/x23, x24, lsl #3]; blr x19
 *         tst w0, w25; b.ne done; add x24, x24, #1; b loop
 *   done: mov x0, x24; ldr x25, [sp, #64]; ldp x23, x24 / x21, x22 / x19, x20; ldp x29, x30, [sp], #80; ret
 * (Bytes from GNU as / aarch64-linux-gnu-as.)
 */
import { createRequire } from "node:module";
import process from "node:process";
import { loadLibc, mapPages } from "./library.ts";
import { executableCode } from "./exec-memory.ts";
import type { SymbolTable } from "./types.ts";
import { currentRuntime } from "./runtime.ts";

const X64 = [
  0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57, 0x48, 0x83, 0xec, 0x08, 0x4c, 0x89, 0x0c, 0x24, 0x48,
  0x89, 0xfb, 0x48, 0x89, 0xf5, 0x49, 0x89, 0xd4, 0x49, 0x89, 0xcd, 0x4d, 0x89, 0xc6, 0x45, 0x31, 0xff, 0x49, 0x39,
  0xef, 0x73, 0x19, 0x4b, 0x8b, 0x3c, 0xfc, 0x4b, 0x8b, 0x74, 0xfd, 0x00, 0x4b, 0x8b, 0x14, 0xfe, 0xff, 0xd3, 0x85,
  0x04, 0x24, 0x75, 0x05, 0x49, 0xff, 0xc7, 0xeb, 0xe2, 0x4c, 0x89, 0xf8, 0x48, 0x83, 0xc4, 0x08, 0x41, 0x5f, 0x41,
  0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b, 0xc3,
  // packed (0x54): push rbx; mov rbx, rdi; mov rsi/rdx/rcx/r8/r9, [rbx+8..40]; mov rdi, [rbx]; call call_each;
  //                mov [rbx+48], rax; xor eax, eax; pop rbx; ret
  0x53, 0x48, 0x89, 0xfb, 0x48, 0x8b, 0x73, 0x08, 0x48, 0x8b, 0x53, 0x10, 0x48, 0x8b, 0x4b, 0x18, 0x4c, 0x8b, 0x43,
  0x20, 0x4c, 0x8b, 0x4b, 0x28, 0x48, 0x8b, 0x3b, 0xe8, 0x8c, 0xff, 0xff, 0xff, 0x48, 0x89, 0x43, 0x30, 0x31, 0xc0,
  0x5b, 0xc3,
];
const ARM64_WORDS = [
  0xa9bb7bfd, 0x910003fd, 0xa90153f3, 0xa9025bf5, 0xa90363f7, 0xf90023f9, 0xaa0003f3, 0xaa0103f4, 0xaa0203f5,
  0xaa0303f6, 0xaa0403f7, 0xaa0503f9, 0xd2800018, 0xeb14031f, 0x54000122, 0xf8787aa0, 0xf8787ac1, 0xf8787ae2,
  0xd63f0260, 0x6a19001f, 0x54000061, 0x91000718, 0x17fffff7, 0xaa1803e0, 0xf94023f9, 0xa94363f7, 0xa9425bf5,
  0xa94153f3, 0xa8c57bfd, 0xd65f03c0,
  // packed (0x78): stp x29, x30, [sp, #-32]!; mov x29, sp; str x19, [sp, #16]; mov x19, x0; ldp x0, x1, [x19];
  //   ldp x2, x3, [x19, #16]; ldp x4, x5, [x19, #32]; bl call_each; str x0, [x19, #48]; mov w0, #0;
  //   ldr x19, [sp, #16]; ldp x29, x30, [sp], #32; ret
  0xa9be7bfd, 0x910003fd, 0xf9000bf3, 0xaa0003f3, 0xa9400660, 0xa9410e62, 0xa9421664, 0x97ffffdb, 0xf9001a60,
  0x52800000, 0xf9400bf3, 0xa8c27bfd, 0xd65f03c0,
];

/**
 * Offset of the packed entry, `int packed(const uint64_t args[7], const void *unused)`: reads call_each's six
 * arguments from args[0..5], stores its result in args[6], returns 0. It has a comparison function's shape so that
 * Deno can reach it through libc's bsearch(args, args, 1, 1, packed), a dlopen'd symbol on Deno's fast call path:
 * Deno 2's UnsafeFnPointer.call takes ~1-2 µs per call here, more than the whole batch it submits.
 */
export const PACKED_OFFSET: Record<string, number> = { x64: 0x54, arm64: 0x78 };

/** The call_each bytes for an architecture (exported for tests), or undefined if unsupported. */
export function callEachCode(arch: string): Uint8Array | undefined {
  if (arch === "x64") return Uint8Array.from(X64);
  if (arch === "arm64") {
    const code = new Uint8Array(ARM64_WORDS.length * 4);
    const view = new DataView(code.buffer);
    ARM64_WORDS.forEach((w, i) => view.setUint32(i * 4, w, true));
    return code;
  }
  return undefined;
}

type Invoke = (fn: number | bigint, n: number, c0: number, c1: number, c2: number, mask: number) => number;

/** Makes the code at `address` callable with call_each's prototype, through the runtime's own FFI. */
function bindInvoke(address: number): Invoke {
  switch (currentRuntime()) {
    case "deno": {
      // Through bsearch and the packed entry (see PACKED_OFFSET): arguments in a native block of 7 u64.
      const lib = Deno.dlopen("libc.so.6", {
        bsearch: { parameters: ["usize", "usize", "usize", "usize", "usize"], result: "usize" },
      } as const);
      const block = mapPages(64);
      const args = new BigUint64Array(loadLibc().backend.view(block, 64));
      const blockBig = BigInt(block), packedBig = BigInt(address + PACKED_OFFSET[process.arch]);
      const bsearch = lib.symbols.bsearch as unknown as (k: bigint, b: bigint, n: bigint, s: bigint, f: bigint) => unknown;
      return (fn, n, c0, c1, c2, mask) => {
        args[0] = typeof fn === "bigint" ? fn : BigInt(fn);
        args[1] = BigInt(n);
        args[2] = BigInt(c0);
        args[3] = BigInt(c1);
        args[4] = BigInt(c2);
        args[5] = BigInt(mask);
        bsearch(blockBig, blockBig, 1n, 1n, packedBig);
        return Number(args[6]);
      };
    }
    case "bun": {
      const ffi = createRequire(import.meta.url)("bun:ffi") as {
        linkSymbols(s: Record<string, { ptr: number; args: string[]; returns: string }>): { symbols: Record<string, Invoke> };
      };
      const lib = ffi.linkSymbols({ each: { ptr: address, args: ["u64", "u64", "u64", "u64", "u64", "u32"], returns: "u64_fast" } });
      const each = lib.symbols.each;
      return (fn, n, c0, c1, c2, mask) => Number(each(fn, n, c0, c1, c2, mask));
    }
    default: {
      const koffi = createRequire(import.meta.url)("koffi") as {
        proto(def: string): unknown;
        decode(ptr: number, type: unknown): Invoke;
      };
      const proto = koffi.proto(
        "uintptr_t doca_ts_call_each(uintptr_t fn, uintptr_t n, uintptr_t c0, uintptr_t c1, uintptr_t c2, uint32_t mask)",
      );
      const each = koffi.decode(address, proto);
      return (fn, n, c0, c1, c2, mask) => Number(each(Number(fn), n, c0, c1, c2, mask));
    }
  }
}

/**
 * COLUMNS columns of u64 in native memory and the loop that calls a native function over three of them. Each
 * column remembers what it holds, so a batch that repeats the previous one's values writes nothing.
 */
export class CallEach {
  static readonly COLUMNS = 4;
  readonly capacity: number;
  readonly #invoke: Invoke;
  readonly #columns: number;
  readonly #u32: Uint32Array;
  readonly #u64: BigUint64Array;
  readonly #held: (number | bigint)[];

  constructor(invoke: Invoke, capacity: number) {
    this.#invoke = invoke;
    this.capacity = capacity;
    const bytes = CallEach.COLUMNS * capacity * 8;
    this.#columns = mapPages(bytes);
    const buffer = loadLibc().backend.view(this.#columns, bytes);
    this.#u32 = new Uint32Array(buffer);
    this.#u64 = new BigUint64Array(buffer);
    this.#held = new Array(CallEach.COLUMNS * capacity).fill(0);
  }

  /** Column `column`, row `i` := value (a pointer or integer; bigint on Deno costs no conversion). */
  set(column: number, i: number, value: number | bigint): void {
    const at = column * this.capacity + i;
    if (this.#held[at] === value) return;
    this.#held[at] = value;
    if (typeof value === "bigint") this.#u64[at] = value;
    else {
      this.#u32[2 * at] = value >>> 0;
      this.#u32[2 * at + 1] = (value / 4294967296) >>> 0;
    }
  }

  /**
   * Calls fn(colA[i], colB[i], colC[i]) for i < n in native code. With checkResult, stops at the first call whose
   * int result is nonzero and returns its index; otherwise (and when all returned 0) returns n.
   */
  run(fn: number | bigint, n: number, checkResult: boolean, a = 0, b = a, c = a): number {
    if (n > this.capacity) throw new RangeError(`CallEach.run: ${n} calls exceed the capacity ${this.capacity}`);
    const base = this.#columns, stride = this.capacity * 8;
    return this.#invoke(fn, n, base + a * stride, base + b * stride, base + c * stride, checkResult ? 0xffffffff : 0);
  }
}

const DLSYM: SymbolTable = {
  // void *dlopen(const char *filename, int flags); void *dlsym(void *handle, const char *symbol);
  dlopen: { lib: "libc", params: ["ptr", "i32"], result: "ptr" },
  dlsym: { lib: "libc", params: ["ptr", "ptr"], result: "ptr" },
};
let dl: { dlopen: (p: number, f: number) => number; dlsym: (h: number, s: number) => number } | undefined;

/** The address of `symbol` in the shared library at `path` (already loaded: dlopen only takes a reference). */
export function symbolAddress(path: string, symbol: string): number {
  const { backend } = loadLibc();
  dl ??= backend.bind("libc.so.6", DLSYM, "libc").fns as unknown as typeof dl;
  const text = new TextEncoder().encode(`${path}\0${symbol}\0`);
  const scratch = mapPages(text.length);
  try {
    new Uint8Array(backend.view(scratch, text.length)).set(text);
    const handle = dl!.dlopen(scratch, 2 /* RTLD_NOW */);
    if (!handle) throw new Error(`dlopen ${path} failed`);
    const address = dl!.dlsym(handle, scratch + path.length + 1);
    if (!address) throw new Error(`${symbol} not found in ${path}`);
    return address;
  } finally {
    loadLibc().libc.munmap(scratch, text.length);
  }
}

let made: CallEach | undefined;
let decided = false;

/** The process-wide CallEach, or undefined where executable memory is refused / unsupported / DOCA_TS_JS_CALLBACKS=1. */
export function callEach(): CallEach | undefined {
  if (!decided) {
    decided = true;
    let forced = false;
    try {
      forced = process.env.DOCA_TS_JS_CALLBACKS === "1";
    } catch { /* Deno without --allow-env */ }
    const code = forced ? undefined : callEachCode(process.arch);
    const address = code && executableCode(code);
    if (address !== undefined) made = new CallEach(bindInvoke(address), 4096);
  }
  return made;
}
