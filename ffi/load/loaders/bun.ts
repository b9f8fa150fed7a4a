/**
 * Bun loader: bun:ffi. Pointers are "ptr" (numbers), 64-bit results use the "*_fast" kinds so small values come back
 * as numbers. bun:ffi's dlopen fails on the first absent symbol, so presence is probed with libc dlsym first and
 * only present symbols are linked (linkSymbols). Bun has no off-thread FFI calls: blocking symbols run in a Worker
 * (bun-blocking-worker.ts) that shares our address space and posts the result back.
 *
 * Types for bun:ffi are declared locally (minimal) so `deno check` never needs bun-types.
 */
import { createRequire } from "node:module";
import type { Backend, BoundLibrary, CallbackDef, NativeCallback, NativeFn, NativeType, SymbolDef, SymbolTable } from "../types.ts";
import { exportedSymbols } from "./exported.ts";

interface BunFfiSym {
  args: string[];
  returns: string;
  ptr?: number;
}
interface BunFfi {
  dlopen(path: string, syms: Record<string, BunFfiSym>): { symbols: Record<string, NativeFn>; close(): void };
  linkSymbols(syms: Record<string, BunFfiSym>): { symbols: Record<string, NativeFn>; close(): void };
  JSCallback: new (fn: (...a: unknown[]) => void, def: { args: string[]; returns: string }) => {
    ptr: number;
    close(): void;
  };
  toArrayBuffer(ptr: number, offset: number, length: number): ArrayBuffer;
  CString: new (ptr: number) => string;
}

// Loaded on first use (see bunBackend) so that importing this module elsewhere is harmless.
let ffi: BunFfi;

function argType(t: NativeType): string {
  switch (t) {
    case "ptr":
      return "ptr";
    case "usize":
    case "u64":
      return "u64";
    default:
      return t;
  }
}

function resultType(t: NativeType): string {
  return t === "u64" || t === "usize" ? "u64_fast" : t;
}

interface DlFns {
  dlopen: NativeFn;
  dlsym: NativeFn;
  dlclose: NativeFn;
  dlerror: NativeFn;
}
let dl: DlFns | undefined;

/** libc's own dlopen/dlsym, used only to learn which names a library exports (exported.ts). */
function dlfns() {
  if (!dl) {
    const lib = ffi.dlopen("libc.so.6", {
      dlopen: { args: ["ptr", "i32"], returns: "ptr" },
      dlsym: { args: ["ptr", "ptr"], returns: "ptr" },
      dlclose: { args: ["ptr"], returns: "i32" },
      dlerror: { args: [], returns: "ptr" },
    });
    dl = lib.symbols as unknown as DlFns;
  }
  return dl;
}

function bind(path: string, table: SymbolTable, lib: SymbolDef["lib"]): BoundLibrary {
  const { dlopen, dlsym, dlclose, dlerror } = dlfns();
  const error = () => {
    const reason = dlerror() as number | null;
    return reason ? String(new ffi.CString(reason)) : undefined;
  };
  const { handle, present, resolved, missing } = exportedSymbols<number, number>({ open: dlopen, sym: dlsym, error }, path, table, lib);
  const link: Record<string, BunFfiSym> = {};
  for (const { key, def, address } of present) link[key] = { args: def.params.map(argType), returns: resultType(def.result), ptr: address };
  const linked = ffi.linkSymbols(link);
  const fns: Record<string, NativeFn | undefined> = {};
  for (const key of Object.keys(link)) {
    const raw = linked.symbols[key];
    const def = table[key];
    // A NULL "ptr" result comes back as null: keep 0 = NULL above the loader.
    fns[key] = def.result === "ptr" ? (...args: number[]) => raw(...args) ?? 0 : raw;
    if (def.blocking) {
      const request = { path, name: resolved[key], args: def.params.map(argType), returns: resultType(def.result) };
      fns[`${key}Async`] = (...values: number[]) => runInWorker({ ...request, values });
    }
  }
  return {
    path,
    fns,
    raw: fns,
    resolved,
    missing,
    close() {
      linked.close();
      dlclose(handle);
    },
  };
}

// ------------------------------------------------------------------ blocking calls in Workers
interface PooledWorker {
  postMessage(m: unknown): void;
  onmessage: ((e: { data: { rc: number; error?: string } }) => void) | null;
  ref?: () => void;
  unref?: () => void;
}
const idleWorkers: PooledWorker[] = [];

interface BlockingCall {
  path: string;
  name: string;
  args: string[];
  returns: string;
  values: number[];
}

/** Runs one blocking native call on a pooled Worker; one call per Worker at a time. */
function runInWorker(call: BlockingCall): Promise<number> {
  const WorkerCtor = (globalThis as unknown as { Worker: new (url: URL) => PooledWorker }).Worker;
  const worker = idleWorkers.pop() ?? new WorkerCtor(new URL("./bun-blocking-worker.ts", import.meta.url));
  // Referenced only while a call runs: Bun 1.4 busy-waits on an unref'd Worker that has a call in flight, and an
  // idle Worker must not keep the process alive.
  worker.ref?.();
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => {
      worker.onmessage = null;
      worker.unref?.();
      idleWorkers.push(worker);
      if (e.data.error) reject(new Error(`${call.name} in the blocking-call worker: ${e.data.error}`));
      else resolve(e.data.rc);
    };
    worker.postMessage(call);
  });
}

// ------------------------------------------------------------------ callbacks, memory
function callback(def: CallbackDef, fn: (...args: number[]) => void): NativeCallback {
  const cb = new ffi.JSCallback(
    (...args: unknown[]) => fn(...args.map((a) => (typeof a === "bigint" ? Number(a) : ((a as number | null) ?? 0)))),
    { args: def.params.map(argType), returns: "void" },
  );
  return { address: cb.ptr, close: () => cb.close() };
}

function view(address: number, length: number): ArrayBuffer {
  if (length === 0) return new ArrayBuffer(0);
  return ffi.toArrayBuffer(address, 0, length);
}

function cstring(address: number): string {
  return address ? String(new ffi.CString(address)) : "";
}

const backend: Backend = { runtime: "bun", bind, callback, native: (n) => n, view, cstring };

export function bunBackend(): Backend {
  ffi ??= createRequire(import.meta.url)("bun:ffi") as BunFfi;
  return backend;
}
