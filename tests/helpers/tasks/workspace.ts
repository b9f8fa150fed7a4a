/**
 * A scratch workspace for one host/DPU copy: separate host and DPU folders and a private DOCA_SIM_DIR, plus
 * deterministic file contents and hashing.
 */
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const HOST_PCI = "0000:b1:00.1";
export const DPU_PCI = "0000:03:00.1";
export const MAX_BUF = 2 * 1024 * 1024; // the software device's default max DMA buffer size

export interface Workspace {
  root: string;
  host: string;
  dpu: string;
  env: Record<string, string>;
  /** Files (incl. hidden temp files) in a folder. */
  list(dir: string): string[];
  remove(): void;
}

/**
 * A folder name for a test's tag, the tag cut to 16 characters: the software device's Comch sockets live below it
 * (DOCA_SIM_DIR = FOLDER/sim), and a Unix socket path holds at most 107 bytes; the test runner's own TMPDIR
 * (/tmp/dts-XXXXXX) already takes 15 of them.
 */
function tempFolder(tag: string): string {
  return mkdtempSync(join(tmpdir(), `doca-ts-${tag.slice(0, 16)}-`));
}

export function workspace(tag: string): Workspace {
  const root = tempFolder(tag);
  const host = join(root, "host");
  const dpu = join(root, "dpu");
  const sim = join(root, "sim");
  for (const d of [host, dpu, sim]) mkdirSync(d);
  return {
    root,
    host,
    dpu,
    env: { DOCA_SIM_DIR: sim },
    list: (dir) => readdirSync(dir).sort(),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * Workspaces for one test file, all removed after its tests: `const space = workspaces(after);` then `space("tag")`
 * (node:test's `after`, passed in so this module does not register hooks of its own).
 */
export function workspaces(after: (fn: () => void) => void): (tag: string) => Workspace {
  const made: Workspace[] = [];
  after(() => made.forEach((w) => w.remove()));
  return (tag) => {
    const w = workspace(tag);
    made.push(w);
    return w;
  };
}

/** A test body that gets a fresh folder (doca-ts-TAG-…), removed when the body ends, however it ends. */
export function withTempDir(tag: string, fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = tempFolder(tag);
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** Writes `size` bytes that differ at every offset (a shifted or partial copy cannot hash the same). */
export function writePatternFile(path: string, size: number, seed = 1): string {
  const fd = openSync(path, "wx");
  const hash = createHash("sha256");
  try {
    const block = new Uint8Array(Math.min(size, 1 << 20) || 1);
    let x = (seed * 2654435761) >>> 0;
    for (let done = 0; done < size; done += block.length) {
      const n = Math.min(block.length, size - done);
      for (let i = 0; i < n; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        block[i] = x >>> 24;
      }
      writeSync(fd, block, 0, n, done);
      hash.update(block.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

export function sha256File(path: string): string {
  const hash = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const block = new Uint8Array(1 << 20);
    let position = 0;
    for (;;) {
      const n = readSync(fd, block, 0, block.length, position);
      if (n === 0) break;
      hash.update(block.subarray(0, n));
      position += n;
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

export function readSmall(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}

/** `--timeout 20` unless `extra` chooses its own (a flag given twice is a usage error). */
export function defaultTimeout(extra: string[]): string[] {
  return extra.includes("--timeout") ? [] : ["--timeout", "20"];
}

/**
 * Waits until `check()` holds on two polls `pollMs` apart (or `timeoutMs` passes; or `stop()` says to give up):
 * a task's temporary file, as opposed to the probe of the same kind of name its target check creates and removes at
 * once before any work (seen once, it sent a stop before the work had begun). Returns whether it held.
 */
export async function untilItStays(check: () => boolean, o: { timeoutMs: number; pollMs?: number; stop?: () => boolean }): Promise<boolean> {
  const deadline = Date.now() + o.timeoutMs;
  let before = false;
  while (Date.now() < deadline && !o.stop?.()) {
    const now = check();
    if (now && before) return true;
    before = now;
    await new Promise((r) => setTimeout(r, o.pollMs ?? 10));
  }
  return false;
}
