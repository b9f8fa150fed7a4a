/**
 * Node loader: koffi. Pointers are declared `uintptr_t` (koffi gives numbers for values that fit 53 bits, which
 * user-space addresses do), so no pointer objects are created. Callbacks are koffi registered callbacks (kept
 * until closed, as DOCA may call them any time its context lives). Blocking symbols use koffi's `.async`, which
 * runs the call on a koffi worker thread.
 */
import { createRequire } from "node:module";
import type { Backend, BoundLibrary, CallbackDef, NativeCallback, NativeFn, NativeType, SymbolDef, SymbolTable } from "../types.ts";

interface KoffiFn extends NativeFn {
  async: (...args: unknown[]) => void;
}
interface Koffi {
  load(path: string): { func(name: string, result: string, params: string[]): KoffiFn; unload(): void };
  proto(def: string): unknown;
  pointer(t: unknown): unknown;
  register(fn: (...a: unknown[]) => void, type: unknown): bigint;
  unregister(cb: bigint): void;
  view(ptr: bigint, len: number): ArrayBuffer;
  decode(ptr: bigint, type: string, len?: number): unknown;
}

// Loaded on first use (see nodeBackend) so that importing this module under Deno or Bun is harmless.
let koffi: Koffi;

const C_TYPES: Record<NativeType, string> = {
  void: "void",
  u8: "uint8_t",
  u16: "uint16_t",
  u32: "uint32_t",
  i32: "int32_t",
  u64: "uint64_t",
  usize: "size_t",
  ptr: "uintptr_t",
};

const toNumber = (v: unknown) => (typeof v === "bigint" ? Number(v) : (v as number));

function bind(path: string, table: SymbolTable, lib: SymbolDef["lib"]): BoundLibrary {
  const handle = koffi.load(path);
  const fns: Record<string, NativeFn | undefined> = {};
  const resolved: Record<string, string> = {};
  const missing: string[] = [];
  for (const [key, def] of Object.entries(table)) {
    if (def.lib !== lib) continue;
    for (const name of [key, ...(def.aliases ?? [])]) {
      let fn: KoffiFn;
      try {
        fn = handle.func(name, C_TYPES[def.result], def.params.map((t) => C_TYPES[t]));
      } catch {
        continue; // absent under this spelling
      }
      resolved[key] = name;
      // koffi returns 64-bit values as numbers when they fit 53 bits (user-space pointers, sizes, our ids do).
      fns[key] = fn;
      if (def.blocking) {
        fns[`${key}Async`] = (...args: number[]) =>
          new Promise((resolve, reject) =>
            fn.async(...args, (err: unknown, res: unknown) => (err ? reject(err) : resolve(toNumber(res))))
          );
      }
      break;
    }
    if (!resolved[key] && !def.optional) missing.push(key);
  }
  return { path, fns, raw: fns, resolved, missing, close: () => handle.unload() };
}

let protoCount = 0;
const protos = new Map<string, unknown>();

function callback(def: CallbackDef, fn: (...args: number[]) => void): NativeCallback {
  const sig = def.params.map((t) => C_TYPES[t]).join(", ");
  let proto = protos.get(sig);
  if (!proto) {
    proto = koffi.pointer(koffi.proto(`void doca_ts_cb${protoCount++}(${sig})`));
    protos.set(sig, proto);
  }
  const registered = koffi.register((...args: unknown[]) => fn(...args.map(toNumber)), proto);
  return { address: Number(registered), close: () => koffi.unregister(registered) };
}

function view(address: number, length: number): ArrayBuffer {
  if (length === 0) return new ArrayBuffer(0);
  return koffi.view(BigInt(address), length);
}

function cstring(address: number): string {
  return address ? String(koffi.decode(BigInt(address), "char", -1)) : "";
}

const backend: Backend = { runtime: "node", bind, callback, native: (n) => n, view, cstring };

export function nodeBackend(): Backend {
  koffi ??= createRequire(import.meta.url)("koffi") as Koffi;
  return backend;
}
