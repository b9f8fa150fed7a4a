/** Positional file reads for the accelerator tasks: a read returns short only at the end of the file. */
import { readSync } from "node:fs";

/** Fills `buffer` from `position` (less at the end of the file); how many bytes it read. */
export function readFully(fd: number, buffer: Uint8Array, position: number): number {
  let got = 0;
  while (got < buffer.length) {
    const n = readSync(fd, buffer, got, buffer.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}
