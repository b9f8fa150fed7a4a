/**
 * Deno loader (Deno 2): Deno.dlopen. Pointers travel as "usize" (plain numbers, fast calls, no pointer objects to
 * allocate); blocking symbols get a `nonblocking: true` twin.
 */
import type { Backend, BoundLibrary, CallbackDef, NativeCallback, NativeFn, NativeType, SymbolDef, SymbolTable } from "../types.ts";

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


function bind(path: string, table: SymbolTable, lib: SymbolDef["lib"]): BoundLibrary {
  // Every spelling is declared optional so that one dlopen tells us which exist; required ones are checked after.
  const decl: Record<string, Deno.ForeignFunction> = {};
  const spellings: Record<string, string[]> = {};
  for (const [key, def] of Object.entries(table)) {
    if (def.lib !== lib) continue;
    spellings[key] = [key, ...(def.aliases ?? [])];
    for (const name of spellings[key]) {
      const base = { name, parameters: paramsToDeno(def.params), result: toDeno(def.result), optional: true } as const;
      decl[`${key}@${name}`] = base;
      if (def.blocking) decl[`${key}@${name}@async`] = { ...base, nonblocking: true };
    }
  }
  const handle = Deno.dlopen(path, decl);
  const symbols = handle.symbols as Record<string, NativeFn | null>;
  const fns: Record<string, NativeFn | undefined> = {};
  const raw: Record<string, NativeFn | undefined> = {};
  const resolved: Record<string, string> = {};
  const missing: string[] = [];
  for (const [key, names] of Object.entries(spellings)) {
    const found = names.find((name) => symbols[`${key}@${name}`]);
    if (!found) {
      if (!table[key].optional) missing.push(key);
      continue;
    }
    resolved[key] = found;
    const def = table[key];
    raw[key] = symbols[`${key}@${found}`]!;
    fns[key] = numberFacade(raw[key]!, def.params, def.result);
    if (def.blocking) {
      const rawAsync = symbols[`${key}@${found}@async`]!;
      fns[`${key}Async`] = numberFacade(rawAsync, def.params, "i32");
    }
  }
  return { path, fns, raw, resolved, missing, close: () => handle.close() };
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
