/**
 * The runtime-neutral vocabulary shared by the symbol tables and the three loaders.
 *
 * Above the loaders every native pointer is a JS number (0 = NULL) and every `union doca_data` is a u64 number
 * holding a small integer id. The loaders translate these names into Deno / bun:ffi / koffi types.
 */

/** C argument / result kinds. "ptr" is any pointer; "u64" also carries `union doca_data` by value. */
export type NativeType = "void" | "u8" | "u16" | "u32" | "i32" | "u64" | "usize" | "ptr";

export interface SymbolDef {
  /** Which shared library holds the symbol (libdoca_<lib>.so, or libc). */
  lib: "common" | "dma" | "comch" | "libc";
  params: readonly NativeType[];
  result: NativeType;
  /** Missing from some builds (software-device diagnostics, newer-DOCA functions): bound as undefined. */
  optional?: true;
  /** Older (or newer) spellings tried when the primary name is absent. */
  aliases?: readonly string[];
  /** May run completion / state callbacks synchronously (Deno needs `callback: true` for these). */
  callbacks?: true;
  /** Blocks the calling thread: loaders also provide an off-main-thread variant (`<name>Async`). */
  blocking?: true;
}

export type SymbolTable = Record<string, SymbolDef>;

/** A native function bound by a loader: numbers in, number out (void → undefined). */
// deno-lint-ignore no-explicit-any
export type NativeFn = (...args: any[]) => any;

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
  /** A callback C can call on the JS main thread (only from inside a `callbacks: true` call). */
  callback(def: CallbackDef, fn: (...args: number[]) => void): NativeCallback;
  /** A number in the form 64-bit arguments take fastest (Deno: bigint; Bun, Node: the number itself). */
  native(n: number): number | bigint;
  /** An ArrayBuffer aliasing native memory (no copy). The memory must outlive the view. */
  view(address: number, length: number): ArrayBuffer;
  /** Reads a NUL-terminated string at `address`. */
  cstring(address: number): string;
}
