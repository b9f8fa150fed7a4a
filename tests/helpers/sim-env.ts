/**
 * Test environment for the software device: a private DOCA_SIM_DIR (mkdtemp) so concurrent suites do not share
 * Comch sockets or export registries. Import it before anything loads DOCA. Runners that put several test files in
 * one process (bun test) keep the first file's directory: the software device may read it once per process.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { setNativeEnv } from "../../ffi/diagnostics.ts";

export const simDir: string = process.env.DOCA_SIM_DIR ??= mkdtempSync(join(tmpdir(), "doca-ts-test-"));
// Bun does not pass process.env writes on to C's getenv(): make sure the software device sees the same folder.
setNativeEnv("DOCA_SIM_DIR", simDir);

/** PCI addresses of the software device's default configuration (docs/ARCHITECTURE.md). */
export const HOST_PCI = "0000:b1:00.1";
export const DPU_PCI = "0000:03:00.1";

/** A name no other test (or concurrent run) uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Environment for a child process acting as the DPU. */
export function dpuEnv(): Record<string, string> {
  return { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: simDir };
}

/** Deterministic test bytes: a pattern that differs at every offset (catches shifted or partial copies). */
export function pattern(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
