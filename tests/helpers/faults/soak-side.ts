/**
 * One long-lived side of the dma-copy soak (tests/fault-soak.test.ts): runs tasks/dma-copy.ts's dmaCopy() COUNT
 * times in this process, with random sizes and directions from a seed both sides share, each copy on its own Comch
 * server name. The sending side writes a pattern file before each copy; the receiving side checks the SHA-256 of
 * what arrived against the pattern. Reports open descriptors (/proc/self/fd) and live DOCA handles after the first
 * copy and at the end.
 *
 *   soak-side.ts <host|dpu> <dir> <count> <seed> <server-prefix>
 *
 * Prints one JSON line per copy ({i, size, dir, ok}) and a final {"done": true, ...}; exits 1 on the first failure.
 */
import { createHash } from "node:crypto";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { liveObjects } from "../../../mod.ts";
import { dmaCopy, parseDmaCopyArgs } from "../../../tasks/dma-copy.ts";
import { sha256File } from "../tasks/workspace.ts";
import { rng } from "./common.ts";

const [side, dir, countText, seedText, prefix] = process.argv.slice(2);
const count = Number(countText);
const emit = (m: unknown) => process.stdout.write(JSON.stringify(m) + "\n");
const fdCount = () => readdirSync("/proc/self/fd").length;

/** Size and direction of copy i: mostly small, some crossing the 2 MiB DMA buffer (several chunks). */
export function plan(seed: number, count: number): { size: number; hostSends: boolean }[] {
  const r = rng(seed);
  return Array.from({ length: count }, () => {
    const p = r();
    const size = p < 0.05
      ? 0
      : p < 0.75
      ? Math.floor(r() * 65536)
      : p < 0.95
      ? Math.floor(r() * 1_048_576)
      : 2 * 1048576 + Math.floor(r() * 300_000);
    return { size, hostSends: r() < 0.5 };
  });
}

export function patternBytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = (seed * 2654435761) >>> 0;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

if (side) {
  const steps = plan(Number(seedText), count);
  const pci = side === "host" ? "0000:b1:00.1" : "0000:03:00.1";
  let fdsAfterFirst = 0;
  let fdsMid = 0;
  let liveAfterFirst = 0;
  let bytes = 0;
  try {
    for (let i = 0; i < count; i++) {
      const { size, hostSends } = steps[i];
      const sending = (side === "host") === hostSends;
      const file = join(dir, `f${i}.bin`);
      const content = patternBytes(size, i + 1);
      const expect = createHash("sha256").update(content).digest("hex");
      if (sending) writeFileSync(file, content);
      const args = [
        "-f",
        file,
        "-p",
        pci,
        "--side",
        side,
        "--quiet",
        "--timeout",
        "30",
        "--server-name",
        `${prefix}-${i}`,
      ];
      if (side === "dpu") args.push("-r", "0000:b1:00.1");
      const command = parseDmaCopyArgs(args);
      if (command.kind !== "run") throw new Error("bad arguments");
      const summary = await dmaCopy(command.options);
      let ok = summary.bytes === size;
      if (!sending) ok &&= sha256File(file) === expect;
      rmSync(file, { force: true });
      const leftovers = readdirSync(dir);
      if (!ok || leftovers.length) {
        emit({
          i,
          size,
          error: `copy ${i} (${size} bytes) ${
            ok ? "left files behind: " + leftovers.join(",") : "differs from the original"
          }`,
        });
        process.exit(1);
      }
      bytes += size;
      emit({ i, size, hostSends, ok, fds: fdCount(), live: liveObjects() ?? 0 });
      if (i === Math.floor(count / 2)) fdsMid = fdCount();
      if (i === 0) {
        fdsAfterFirst = fdCount();
        liveAfterFirst = liveObjects() ?? 0;
      }
    }
    emit({
      done: true,
      copies: count,
      bytes,
      fdsAfterFirst,
      fdsMid,
      fdsEnd: fdCount(),
      liveAfterFirst,
      liveEnd: liveObjects() ?? 0,
    });
    process.exit(0);
  } catch (e) {
    emit({ error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    process.exit(1);
  }
}
