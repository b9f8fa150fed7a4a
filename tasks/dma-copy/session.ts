/** What the host and DPU halves of a copy share: their context, the result summary, and small checks. */
import { createHash, type Hash } from "node:crypto";
import type { Device } from "../../ffi/doca/common/device.ts";
import type { ProgressEngine } from "../../ffi/engine/pe.ts";
import type { Logger } from "../common/log-level.ts";
import type { Messenger } from "../wire/messenger.ts";
import type { DmaCopyOptions } from "./options.ts";
export { safeNumber } from "../wire/protocol.ts";
import type { ProgressBar } from "../transfer/progress.ts";

export interface SessionContext {
  options: DmaCopyOptions;
  device: Device;
  pe: ProgressEngine;
  messenger: Messenger;
  log: Logger;
  /** Created once the size is known. */
  progress: (total: number) => ProgressBar;
  /** Aborted by Ctrl-C / SIGTERM: every wait ends with an InterruptedError. */
  signal?: AbortSignal;
}

export interface Summary {
  side: "host" | "dpu";
  role: "send" | "receive";
  file: string;
  bytes: number;
  seconds: number;
  bytesPerSecond: number;
  /** "extended": doca-ts peer (chunked, SHA-256 verified); "classic": NVIDIA's single-buffer sequence. */
  mode: "extended" | "classic";
  chunks: number;
  chunkSize: number;
  slots: number;
  /** Hex SHA-256 of the file both sides agreed on (extended mode). */
  sha256?: string;
  peakRssBytes?: number;
  /** "VmHWM" (the kernel's high-water mark) or "sampled" (RSS sampled every 20 ms: no /proc access). */
  peakRssSource?: "VmHWM" | "sampled";
}

/** What a transfer function reports back to the session wrapper. */
export interface TransferResult {
  role: "send" | "receive";
  bytes: number;
  mode: "extended" | "classic";
  chunks: number;
  chunkSize: number;
  slots: number;
  sha256?: string;
}

export function sha256(): Hash {
  return createHash("sha256");
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

