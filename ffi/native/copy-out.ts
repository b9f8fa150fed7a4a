/**
 * copyOut(address, length): a fresh Uint8Array with `length` bytes read from native memory, for data DOCA lends only
 * for the duration of a callback (a Comch message, immediate data). One libc memcpy into a staging area with a
 * long-lived view, then a slice (or, for a message slab, a view of the staged bytes: staged()): a view per call (an
 * external ArrayBuffer over the address) cost 2–9× more, most on Node (koffi.view) and Deno (UnsafePointer +
 * getArrayBuffer). Single-threaded use only, like every JS caller here.
 */
import { loadLibc, mapPages } from "./library.ts";

let staging = 0;
let stagingBytes: Uint8Array<ArrayBuffer> = new Uint8Array(0);

export function copyOut(address: number, length: number): Uint8Array<ArrayBuffer> {
  if (length === 0) return new Uint8Array(0);
  return staged(address, length).slice();
}

/** The `length` bytes at `address` in the staging area: valid until the next copyOut/staged call. */
export function staged(address: number, length: number): Uint8Array<ArrayBuffer> {
  const { libc, backend } = loadLibc();
  if (length > stagingBytes.length) {
    // Grows in whole powers of two (at least a page); the old area is unmapped once the new one exists.
    const size = 2 ** Math.ceil(Math.log2(Math.max(length, 4096)));
    const next = mapPages(size);
    if (staging) libc.munmap(staging, stagingBytes.length);
    staging = next;
    stagingBytes = new Uint8Array(backend.view(next, size));
  }
  if (length > 0) libc.memcpy(staging, address, length);
  return stagingBytes.subarray(0, length);
}
