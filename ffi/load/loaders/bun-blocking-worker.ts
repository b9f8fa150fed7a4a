/**
 * Bun only: a Worker that makes one blocking native call at a time for the main thread, which has no off-thread FFI
 * in Bun. Any symbol declared `blocking: true` in a table works (today: libc poll): the request names the library,
 * the symbol and its bun:ffi types, and the worker binds it once. It shares the process's address space, so pointer
 * arguments (a pollfd) are valid here.
 */
import { createRequire } from "node:module";

type Fn = (...args: number[]) => number;
interface Request {
  path: string;
  name: string;
  args: string[];
  returns: string;
  values: number[];
}

const ffi = createRequire(import.meta.url)("bun:ffi") as {
  dlopen(path: string, syms: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, Fn> };
};
const bound = new Map<string, Fn>();

function fnFor(r: Request): Fn {
  const key = `${r.path}\0${r.name}`;
  let fn = bound.get(key);
  if (!fn) {
    fn = ffi.dlopen(r.path, { [r.name]: { args: r.args, returns: r.returns } }).symbols[r.name];
    bound.set(key, fn);
  }
  return fn;
}

const scope = globalThis as unknown as {
  onmessage: (e: { data: Request }) => void;
  postMessage(m: unknown): void;
};
scope.onmessage = (e) => {
  try {
    scope.postMessage({ rc: Number(fnFor(e.data)(...e.data.values)) });
  } catch (error) {
    scope.postMessage({ rc: -1, error: String(error) });
  }
};
