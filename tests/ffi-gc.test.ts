/**
 * A forgotten Buf or Mmap is destroyed by its finalizer (issue 19 §5): a child process with the garbage collector
 * exposed makes 64 Bufs and their Mmap, drops them without closing, forces collection, and the software device's live
 * object count returns to where it was. Children before parents: the Bufs' finalizers release them before the Mmap's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { currentRuntime } from "./helpers/spawn-runtime.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const child = join(root, "tests", "helpers", "gc-child.ts");

function command(): [string, string[]] {
  switch (currentRuntime()) {
    case "deno":
      return [process.execPath, ["run", "-A", "--v8-flags=--expose-gc", child]];
    case "bun":
      return [process.execPath, [child]];
    default:
      return [process.execPath, ["--expose-gc", "--import", "tsx", child]];
  }
}

test("forgotten Bufs and their Mmap are released by the finalizers once collected", { skip: noLiveCounter, timeout: 120_000 }, () => {
  const [cmd, args] = command();
  const run = spawnSync(cmd, args, { cwd: root, encoding: "utf8", env: process.env, timeout: 100_000 });
  assert.equal(run.status, 0, run.stderr);
  const { base, held, after } = JSON.parse(run.stdout.trim().split("\n").pop()!) as Record<string, number>;
  assert.equal(held - base, 65, "64 Bufs and one Mmap were alive while reachable");
  assert.equal(after, base, `finalizers released them: ${after - base} left`);
});
