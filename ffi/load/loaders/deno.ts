/**
 * Deno loader (Deno 2): Deno.dlopen. Pointers travel as "usize" (plain numbers, fast calls, no pointer objects to
 * allocate); blocking symbols get a `nonblocking: true` twin.
 */
import type { Backend, BoundLibrary, CallbackDef, NativeCallback, NativeFn, NativeType, SymbolDef, SymbolTable } from "../types.ts";
import { exportedSymbols } from "./exported.ts";

// Local structural types so this file needs no Deno type package beyond what `deno check` already knows.
type DenoNative = "void" | "u8" | "u16" | "u32" | "i32" | "u64" | "usize";

function toDeno(t: NativeType): DenoNative {
  return t === "ptr" ? "usize" : t;
}

function paramsToDeno(ts: readonly NativeType[]): Deno.NativeType[] {
  return ts.map((t) => toDeno(t) as Deno.NativeType);
}

const isWide = (t: NativeType) => t === "ptr" || t === "u64" || t === "usize";

/**
 * Deno's fast path takes 64-bit arguments as bigint (a number there costs ~100 ns; BigInt(n) + call ~28 ns) and
 * returns them as bigint. This builds a fixed-arity function (no rest arguments, no per-call arrays) that converts
 * exactly the 64-bit positions, so the wrappers above keep plain numbers.
 */
function numberFacade(raw: NativeFn, params: readonly NativeType[], result: NativeType): NativeFn {
  const names = params.map((_, i) => `a${i}`);
  const args = params.map((t, i) => (isWide(t) ? `B(a${i})` : `a${i}`)).join(", ");
  const call = isWide(result) ? `N(raw(${args}))` : `raw(${args})`;
  return new Function("raw", "B", "N", `return function (${names.join(", ")}) { return ${call}; };`)(
    raw,
    BigInt,
    Number,
  ) as NativeFn;
}

/** Deno gives back bigint for 64-bit values that do not fit a safe integer; user-space values always fit. */
function num(v: unknown): number {
  return typeof v === "bigint" ? Number(v) : (v as number);
}


type DlFns = {
  dlopen(path: Uint8Array, flags: number): Deno.PointerValue;
  dlsym(handle: Deno.PointerValue, name: Uint8Array): Deno.PointerValue;
  dlclose(handle: Deno.PointerValue): number;
  dlerror(): Deno.PointerValue;
};
let dl: DlFns | undefined;

/** libc's own dlopen/dlsym: which names a library exports, learnt without binding them (exported.ts). */
function dlfns(): DlFns {
  dl ??= Deno.dlopen("libc.so.6", {
    dlopen: { parameters: ["buffer", "i32"], result: "pointer" },
    dlsym: { parameters: ["pointer", "buffer"], result: "pointer" },
    dlclose: { parameters: ["pointer"], result: "i32" },
    dlerror: { parameters: [], result: "pointer" },
  }).symbols as unknown as DlFns;
  return dl;
}

/**
 * Binds a library's functions one by one at their first use. Deno.dlopen builds a fast-call trampoline per declared
 * symbol (about 80 µs each): declaring all ~350 DOCA functions up front was most of a cold start's loading time,
 * while a task calls a few dozen. Which names exist is learnt from dlsym at once (required ones are checked by the
 * caller); each function is an accessor that binds it (with its nonblocking twin) on first read and then turns into
 * a plain value in whichever table it was read from.
 */
function bind(path: string, table: SymbolTable, lib: SymbolDef["lib"]): BoundLibrary {
  const { dlopen, dlsym, dlclose, dlerror } = dlfns();
  const error = () => {
    const reason = dlerror();
    return reason ? Deno.UnsafePointerView.getCString(reason) : undefined;
  };
  const { handle, present, resolved, missing } = exportedSymbols<NonNullable<Deno.PointerValue>, NonNullable<Deno.PointerValue>>({ open: dlopen, sym: dlsym, error }, path, table, lib);
  const fns: Record<string, NativeFn | undefined> = {};
  const raw: Record<string, NativeFn | undefined> = {};
  const opened: Deno.DynamicLibrary<Record<string, Deno.ForeignFunction>>[] = [];
  for (const { key, def, name: found } of present) {
    let bound: { fn: NativeFn; raw: NativeFn; async?: NativeFn } | undefined;
    const bindOne = () => {
      if (bound) return bound;
      const base = { name: found, parameters: paramsToDeno(def.params), result: toDeno(def.result) } as const;
      const decl: Record<string, Deno.ForeignFunction> = { sync: base };
      if (def.blocking) decl.async = { ...base, nonblocking: true };
      const library = Deno.dlopen(path, decl);
      opened.push(library);
      const symbols = library.symbols as unknown as Record<string, NativeFn>;
      bound = { fn: numberFacade(symbols.sync, def.params, def.result), raw: symbols.sync };
      if (def.blocking) bound.async = numberFacade(symbols.async, def.params, "i32");
      return bound;
    };
    const settleOnRead = (name: string, pick: (b: NonNullable<typeof bound>) => NativeFn | undefined) => ({
      configurable: true,
      enumerable: true,
      get(this: Record<string, unknown>) {
        const value = pick(bindOne());
        Object.defineProperty(this, name, { configurable: true, enumerable: true, writable: true, value });
        return value;
      },
    });
    Object.defineProperty(fns, key, settleOnRead(key, (b) => b.fn));
    Object.defineProperty(raw, key, settleOnRead(key, (b) => b.raw));
    if (def.blocking) Object.defineProperty(fns, `${key}Async`, settleOnRead(`${key}Async`, (b) => b.async));
  }
  const close = () => {
    opened.forEach((library) => library.close());
    dlclose(handle);
  };
  return { path, fns, raw, resolved, missing, close };
}

function callback(def: CallbackDef, fn: (...args: number[]) => void): NativeCallback {
  // Fixed arity again: completions are hot. 64-bit arguments arrive as bigint (or number): owners see numbers.
  const names = def.params.map((_, i) => `a${i}`);
  const args = def.params.map((t, i) => (isWide(t) ? `N(a${i})` : `a${i}`)).join(", ");
  const bridge = new Function("fn", "N", `return function (${names.join(", ")}) { fn(${args}); };`)(fn, Number);
  const cb = new Deno.UnsafeCallback({ parameters: paramsToDeno(def.params), result: "void" }, bridge);
  return { address: num(Deno.UnsafePointer.value(cb.pointer)), close: () => cb.close() };
}

function view(address: number, length: number): ArrayBuffer {
  if (length === 0) return new ArrayBuffer(0);
  const p = Deno.UnsafePointer.create(BigInt(address));
  if (!p) throw new Error("view of a NULL pointer");
  return Deno.UnsafePointerView.getArrayBuffer(p, length);
}

function cstring(address: number): string {
  const p = Deno.UnsafePointer.create(BigInt(address));
  return p ? Deno.UnsafePointerView.getCString(p) : "";
}

const backend: Backend = { runtime: "deno", bind, callback, native: BigInt, view, cstring };

export function denoBackend(): Backend {
  return backend;
}
