/**
 * Which of a symbol table's functions a library exports, learnt with libc's dlopen/dlsym before binding any (the
 * Bun and Deno loaders: bun:ffi's dlopen fails on the first absent symbol, and Deno's declares every symbol it is
 * given, at a cost per symbol). Each loader hands over its own way to call the two.
 */
import type { SymbolDef, SymbolTable } from "../types.ts";

/** libc's dlopen and dlsym as one runtime calls them (a handle and an address, null or 0 when absent). */
export interface Dl<H, A> {
  open(path: Uint8Array, flags: number): H | null;
  sym(handle: H, name: Uint8Array): A | null;
  /** dlerror(): why the last dlopen failed, when the loader can read it. */
  error?(): string | undefined;
}

export interface Exported<H, A> {
  handle: H;
  /** Present entries: the table key, its definition, the spelling found and its address. */
  present: { key: string; def: SymbolDef; name: string; address: A }[];
  /** Key → the spelling found (differs from the key when an alias was used). */
  resolved: Record<string, string>;
  /** Required keys (not `optional`) found under none of their spellings. */
  missing: string[];
}

const RTLD_NOW = 2;
const cstr = (s: string) => new TextEncoder().encode(s + "\0");

/** Opens `path` (RTLD_NOW) and looks up every entry of `table` that belongs to `lib`, under each of its spellings. */
export function exportedSymbols<H, A>(dl: Dl<H, A>, path: string, table: SymbolTable, lib: SymbolDef["lib"]): Exported<H, A> {
  const handle = dl.open(cstr(path), RTLD_NOW);
  if (!handle) {
    const reason = dl.error?.();
    throw new Error(`dlopen failed for ${path}${reason ? `: ${reason}` : ""}`);
  }
  const out: Exported<H, A> = { handle, present: [], resolved: {}, missing: [] };
  for (const [key, def] of Object.entries(table)) {
    if (def.lib !== lib) continue;
    let hit: { name: string; address: A } | undefined;
    for (const name of [key, ...(def.aliases ?? [])]) {
      const address = dl.sym(handle, cstr(name));
      if (address) {
        hit = { name, address };
        break;
      }
    }
    if (!hit) {
      if (!def.optional) out.missing.push(key);
      continue;
    }
    out.resolved[key] = hit.name;
    out.present.push({ key, def, ...hit });
  }
  return out;
}
