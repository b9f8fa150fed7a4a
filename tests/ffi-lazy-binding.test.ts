/**
 * Deno binds each DOCA function at its first use (ffi/load/loaders/deno.ts): Deno.dlopen builds a trampoline per
 * declared symbol, and declaring the whole table at load cost 45-65 ms of every cold start. This checks the promise
 * from the outside, in a child process that counts what each Deno.dlopen declares: nothing of DOCA's at load, only
 * what one DMA copy calls afterwards, and presence (optionalMissing) still right without binding anything.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { currentRuntime, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { simDir } from "./helpers/sim-env.ts";

const notDeno = currentRuntime() !== "deno" && "Deno's loader only (Bun and Node bind a library at once, in a few ms)";

test("ffi: Deno declares no DOCA function at load, and only those a DMA copy calls", { skip: notDeno, timeout: 120_000 }, async () => {
  await using child = spawnRuntime(new URL("./helpers/lazy-binding-child.ts", import.meta.url), { env: { DOCA_SIM_DIR: simDir } });
  const line = await child.readLine(90_000).catch((e) => {
    throw new Error(`${e.message}; child stderr: ${child.stderr}`);
  });
  assert.equal(await child.exited, 0, child.stderr);
  const r = JSON.parse(line);
  assert.equal(r.copied, true);
  // Loading reads the version and error names: a handful, against ~350 in the table.
  assert.ok(r.atLoad.length <= 8, `declared at load: ${r.atLoad.join(", ")}`);
  assert.ok(r.afterCopy > r.atLoad.length && r.afterCopy < 100, `declared after one copy: ${r.afterCopy}`);
  // Opening a device asks libdoca_rdma for its capabilities (a few cap functions), never for the whole library.
  assert.ok(r.rdmaDeclared < 15, `RDMA functions declared: ${r.rdmaDeclared}`);
  // The optional functions this DOCA lacks are known without binding: the software device of DOCA 3.x exports all
  // of them; its DOCA 2.7 build (CI's 2.7 lane) lacks the newer ones
  if (r.version.startsWith("2.7")) assert.ok(r.optionalMissing > 0, `DOCA ${r.version}: ${r.optionalMissing} missing`);
  else assert.equal(r.optionalMissing, 0, `DOCA ${r.version}`);
});
