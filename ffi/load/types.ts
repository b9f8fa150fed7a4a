/**
 * The runtime-neutral vocabulary shared by the symbol tables and the three loaders.
 *
 * Above the loaders every native pointer is a JS number (0 = NULL) and every `union doca_data` is a u64 number
 * holding a small integer id. The loaders translate these names into Deno / bun:ffi / koffi types.
 */

/** C argument / result kinds. "ptr" is any pointer; "u64" also carries `union doca_data` by value. */
export type NativeType = "void" | "u8" | "u16" | "u32" | "i32" | "u64" | "usize" | "ptr";

/**
 * A symbol table's kinds: a NativeType, or "ptr<doca_X>", a pointer to one DOCA object type (`struct doca_X *`;
 * "ptr<void>" for a memory address). The loaders see plain "ptr" (eraseTypedPointers); only the type checker sees
 * the name, so a handle of one kind passed where another goes fails `deno check` at zero runtime cost. Plain "ptr"
 * stays an untyped pointer.
 */
export type TableType = NativeType | `ptr<${string}>`;

declare const brand: unique symbol;
/** A pointer the checker knows to be a `struct <T> *` (a number at runtime: the brand exists only for the checker). */
export type Handle<T extends string> = number & { readonly [brand]: T };
/** What a "ptr<T>" parameter accepts: an untyped number, or a Handle<T>; a Handle of another kind is refused. */
type HandleArg<T extends string> = number & { readonly [brand]?: T };
/** What an integer parameter accepts: any number but a Handle (so a pointer cannot land in a length). */
type IntArg = number & { readonly [brand]?: undefined };

/** The table with every "ptr<T>" as "ptr": what the loaders bind (they know only NativeType). */
export function eraseTypedPointers<T extends TypedSymbolTable>(table: T): Record<keyof T, SymbolDef> {
  const out = {} as Record<keyof T, SymbolDef>;
  for (const key of Object.keys(table) as (keyof T)[]) {
    const def = table[key];
    const erase = (t: TableType): NativeType => (t.startsWith("ptr") ? "ptr" : t as NativeType);
    out[key] = { ...def, params: def.params.map(erase), result: erase(def.result) };
  }
  return out;
}

/** DOCA libraries loaded only when present beside the required ones (libdoca_<name>.so; a DOCA install may lack them), in loading order. */
export type OptionalDocaLibrary = "rdma" | "compress" | "sha" | "erasure_coding" | "aes_gcm";
export const OPTIONAL_DOCA_LIBRARIES: readonly OptionalDocaLibrary[] = ["rdma", "compress", "sha", "erasure_coding", "aes_gcm"];

export interface SymbolDef {
  /** Which shared library holds the symbol (libdoca_<lib>.so, or libc). */
  lib: "common" | "dma" | "comch" | OptionalDocaLibrary | "libc";
  params: readonly NativeType[];
  result: NativeType;
  /** Missing from some builds (software-device diagnostics, newer-DOCA functions): bound as undefined. */
  optional?: true;
  /** Older (or newer) spellings tried when the primary name is absent. */
  aliases?: readonly string[];
  /** Blocks the calling thread: loaders also provide an off-main-thread variant (`<name>Async`). */
  blocking?: true;
}

export type SymbolTable = Record<string, SymbolDef>;

/** A symbol of a typed table (DOCA_SYMBOLS): its pointers may name their object type ("ptr<doca_dev>"). */
export interface TypedSymbolDef extends Omit<SymbolDef, "params" | "result"> {
  params: readonly TableType[];
  result: TableType;
}
export type TypedSymbolTable = Record<string, TypedSymbolDef>;

/** A native function bound by a loader, untyped (the loaders' own view; wrappers use BoundFns). */
// deno-lint-ignore no-explicit-any
export type NativeFn = (...args: any[]) => any;

/** The kinds that are 64 bits wide: on Deno their fastest (raw) form is a bigint. */
type Wide = "ptr" | `ptr<${string}>` | "u64" | "usize";
type ResultOf<T extends TableType> = T extends "void" ? void : T extends `ptr<${infer N}>` ? Handle<N> : number;
type ArgOf<T> = T extends `ptr<${infer N}>` ? HandleArg<N> : T extends "ptr" ? number : IntArg;
type RawArg<T> = T extends Wide ? number | bigint : number;
type RawResultOf<T extends TableType> = T extends "void" ? void : T extends Wide ? number | bigint : number;
/** A tuple of parameter kinds → a tuple of JS argument types (homomorphic over the tuple, so arity is kept). */
type Args<P extends readonly TableType[]> = { -readonly [K in keyof P]: ArgOf<P[K]> };
type RawArgs<P extends readonly TableType[]> = { -readonly [K in keyof P]: RawArg<P[K]> };

/** The TS type of one symbol above the loaders: a number per parameter, a number (or void) back. */
export type TypedFn<D extends TypedSymbolDef> = (...args: Args<D["params"]>) => ResultOf<D["result"]>;

/** The same symbol's hot-path form: 64-bit arguments may be pre-converted (Backend.native), 64-bit results native. */
export type RawFn<D extends TypedSymbolDef> = (...args: RawArgs<D["params"]>) => RawResultOf<D["result"]>;

/** Every symbol of a table with its derived type; optional symbols may be undefined. */
export type BoundFns<T extends TypedSymbolTable> = {
  [K in keyof T]: T[K] extends { optional: true } ? TypedFn<T[K]> | undefined : TypedFn<T[K]>;
};

/** Hot-path forms of a table's symbols (see BoundLibrary.raw). */
export type RawFns<T extends TypedSymbolTable> = {
  [K in keyof T]: T[K] extends { optional: true } ? RawFn<T[K]> | undefined : RawFn<T[K]>;
};

/** `<name>Async` twins of the table's blocking symbols: the same call off the main thread. */
export type AsyncTwins<T extends TypedSymbolTable> = {
  [K in keyof T as T[K] extends { blocking: true } ? `${K & string}Async` : never]: (...args: Args<T[K]["params"]>) => Promise<number>;
};

export interface CallbackDef {
  params: readonly NativeType[];
  result: "void";
}

/** A JS function made callable from C; `address` is what gets passed to DOCA. */
export interface NativeCallback {
  readonly address: number;
  close(): void;
}

export interface BoundLibrary {
  readonly path: string;
  /**
   * Key: the table's primary name. Value undefined when an optional symbol is absent. A `blocking: true` symbol
   * also gets `<name>Async`, the same call run off the main thread, returning a Promise.
   */
  readonly fns: Record<string, NativeFn | undefined>;
  /**
   * The same functions without number conversion, for hot paths: arguments must be `backend.native()` values and
   * 64-bit results come back in native form (bigint on Deno, number elsewhere). Identical to `fns` on Bun/Node.
   */
  readonly raw: Record<string, NativeFn | undefined>;
  /** Which actual exported name each key resolved to (differs when an alias was used). */
  readonly resolved: Record<string, string>;
  /** Primary names absent from the library (all spellings tried). */
  readonly missing: string[];
  close(): void;
}

/** What each runtime's loader must provide. Nothing above ffi/ sees this. */
export interface Backend {
  readonly runtime: "deno" | "bun" | "node";
  /** Opens a library and binds every symbol of `table` whose lib matches `lib`; absent symbols land in `missing`. */
  bind(path: string, table: SymbolTable, lib: SymbolDef["lib"]): BoundLibrary;
  /** A callback C can call on the JS main thread (DOCA calls it from inside doca_pe_progress / ctx start / stop). */
  callback(def: CallbackDef, fn: (...args: number[]) => void): NativeCallback;
  /** A number in the form 64-bit arguments take fastest (Deno: bigint; Bun, Node: the number itself). */
  native(n: number): number | bigint;
  /** An ArrayBuffer aliasing native memory (no copy). The memory must outlive the view. */
  view(address: number, length: number): ArrayBuffer;
  /** Reads a NUL-terminated string at `address`. */
  cstring(address: number): string;
}
