/**
 * The references of the end-to-end rows (issue 29), each copying the same file on the same disk as the tasks:
 * - `dd bs=4M conv=fsync`: the disk's own rate for one reader and writer;
 * - the C copy floor (copy-floor.c) with and without SHA-256: the least work a verified two-process copy shaped like
 *   dma-copy (same chunk size and slot count) does on these cores, so what dma-copy can at best reach;
 * - the C TCP copy (tcp-copy.c): sendfile over loopback TCP into read + write + fsync, the comparison for rdma-copy.
 * The floor needs libcrypto; without it its rows are skipped with a line that says so.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildCDriver } from "./c-driver.ts";
import { measured } from "./measured.ts";

/** dma-copy's defaults between doca-ts peers: chunks of the DPU's max DMA buf size (2 MiB here), 8 in flight. */
export const FLOOR_CHUNK = 2 * 2 ** 20;
export const FLOOR_SLOTS = 8;

export type ReferenceName = "dd" | "floor" | "floorNoSha" | "tcp";

export const REFERENCE_LABEL: Record<ReferenceName, string> = {
  dd: "dd bs=4M",
  floor: "C copy floor",
  floorNoSha: "C copy floor, no SHA",
  tcp: "C TCP copy",
};

/** A side of a two-process copy: the one reading the source, or the one writing the target. */
export type Role = "sender" | "receiver";

/** One copy's figures: bytes per second, and CPU seconds (user + system) by role; dd, one process, is both. */
export interface CopyFigures {
  rate: number;
  cpu: Partial<Record<Role | "dd", number>>;
}

export interface References {
  /** Which references this machine can run (the floor needs libcrypto). */
  names: ReferenceName[];
  /** Copies `source` once with each reference. */
  measure(source: string, size: number): Promise<Partial<Record<ReferenceName, CopyFigures>>>;
}

/** Builds the C references; `log` says why one is skipped. */
export function copyReferences(driver: string, work: string, log: (line: string) => void): References {
  let floor: string | undefined;
  try {
    floor = buildCDriver("copy-floor", [], ["crypto"]);
  } catch (e) {
    log(`the C copy floor is skipped: it needs libcrypto's headers and library (Debian: libssl-dev): ${(e as Error).message.split("\n").slice(0, 3).join(" ")}`);
  }
  const tcp = buildCDriver("tcp-copy", []);
  const names: ReferenceName[] = floor ? ["dd", "floor", "floorNoSha", "tcp"] : ["dd", "tcp"];

  const run = async (what: string, argv: string[], size: number, target: string): Promise<CopyFigures> => {
    const r = await measured(driver, argv, { BENCH_WORK: work });
    rmSync(target, { force: true });
    if (r.status !== 0) throw new Error(`${what} failed (${r.status}): ${r.stderr}`);
    // The C copies time themselves (their own fork to rename) and report each process's CPU; dd is timed and
    // its CPU counted by the wrapper.
    if (r.stdout.trim()) {
      const report = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, number>;
      if (report.bytes !== size) throw new Error(`${what} copied ${report.bytes} of ${size} bytes`);
      const cpu = (role: Role) => report[`${role}UserSeconds`] + report[`${role}SystemSeconds`];
      return { rate: report.bytesPerSecond, cpu: { sender: cpu("sender"), receiver: cpu("receiver") } };
    }
    return { rate: size / r.seconds, cpu: { dd: r.cpuSeconds } };
  };

  return {
    names,
    async measure(source, size) {
      const target = join(work, "reference.out");
      const rates: Partial<Record<ReferenceName, CopyFigures>> = {};
      rates.dd = await run("dd", ["dd", `if=${source}`, `of=${target}`, "bs=4M", "conv=fsync", "status=none"], size, target);
      if (floor) {
        for (const [name, mode] of [["floor", "sha"], ["floorNoSha", "nosha"]] as const) {
          rates[name] = await run(`copy-floor (${mode})`, [floor, source, target, String(FLOOR_CHUNK), String(FLOOR_SLOTS), mode], size, target);
        }
      }
      rates.tcp = await run("tcp-copy", [tcp, source, target], size, target);
      return rates;
    },
  };
}
