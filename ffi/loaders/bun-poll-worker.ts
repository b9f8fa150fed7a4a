/**
 * Bun only: a Worker that makes one blocking libc call (poll) at a time for the main thread, which has no
 * off-thread FFI in Bun. It shares the process's address space, so the pollfd pointer it is given is valid here.
 */
import { createRequire } from "node:module";

type Fn = (...args: number[]) => number;
const ffi = createRequire(import.meta.url)("bun:ffi") as {
  dlopen(path: string, syms: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, Fn> };
};
const libc = ffi.dlopen("libc.so.6", { poll: { args: ["ptr", "u64", "i32"], returns: "i32" } }).symbols;

const scope = globalThis as unknown as {
  onmessage: (e: { data: { name: string; args: number[] } }) => void;
  postMessage(m: unknown): void;
};
scope.onmessage = (e) => {
  const fn = libc[e.data.name];
  scope.postMessage({ rc: fn ? fn(...e.data.args) : -1 });
};
