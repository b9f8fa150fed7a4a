/**
 * doca-ts as a package: `npm pack`, installed into a scratch project outside the repository, imported as
 * "doca-ts" (Node, Bun; Deno through an import map onto the unpacked tarball), does a local DMA copy with the
 * software device built on demand into the user's cache from the sources shipped in the package. Without a C
 * compiler the failure says so. Runs under each runtime with that runtime.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentRuntime } from "./helpers/spawn-runtime.ts";
import { runInScratch, type Scratch, scratchProject } from "./helpers-pkg/scratch.ts";

// Plain JavaScript (no `using`: Node 20 has no such syntax), the same text as app.mjs (Node) and app.ts (Bun, Deno).
const USER_SCRIPT = `
import { Access, BufInventory, Device, Dma, listDevices, loadDoca, Mmap, NativeMemory, ProgressEngine } from "doca-ts";
import { dmaLocalCopy } from "doca-ts/tasks";
const info = loadDoca();
const owned = [];
const own = (resource) => (owned.unshift(resource), resource);
const dev = own(Device.open(listDevices()[0].pciAddr));
const pe = own(new ProgressEngine());
const src = own(NativeMemory.alloc(65536)), dst = own(NativeMemory.alloc(65536));
for (let i = 0; i < src.bytes.length; i++) src.bytes[i] = (i * 7 + 3) & 255;
const map = own(Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] }));
const map2 = own(Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] }));
const inv = own(new BufInventory(2));
const dma = own(new Dma(dev, pe));
await dma.memcpy(inv.bufByData(map, src.address, 65536), inv.bufByAddr(map2, dst.address, 65536));
const same = dst.bytes.every((b, i) => b === ((i * 7 + 3) & 255));
for (const resource of owned) resource[Symbol.dispose]();
const task = await dmaLocalCopy(new TextEncoder().encode("doca-ts tasks from a package"));
console.log(JSON.stringify({ same, task: task.equal, dir: info.dir, version: info.version, runtime: info.runtime }));
`;

/** Node runs plain JavaScript with no loader; Bun and Deno run TypeScript. */
const SCRIPT = currentRuntime() === "node" ? "app.mjs" : "app.ts";

describe(`package: npm pack installed in a scratch project (${currentRuntime()})`, () => {
  // Set up inside the first test (not a hook) so that the generous test timeout covers npm pack + install.
  let scratch: Scratch | undefined;
  const project = (): Scratch => {
    if (!scratch) {
      scratch = scratchProject();
      writeFileSync(join(scratch.dir, SCRIPT), USER_SCRIPT);
    }
    return scratch;
  };
  after(() => {
    if (scratch) rmSync(scratch.dir, { recursive: true, force: true });
    if (scratch) rmSync(scratch.env.DOCA_SIM_DIR, { recursive: true, force: true });
  });

  test("without a C compiler and no DOCA, loading fails with a message that says so", { timeout: 300_000 }, () => {
    const scratch = project();
    const result = runInScratch(scratch, SCRIPT, { CC: "/nonexistent/cc", XDG_CACHE_HOME: join(scratch.dir, "nocc") });
    assert.notEqual(result.status, 0, result.stdout);
    assert.match(result.stderr, /no C compiler: `\/nonexistent\/cc` was not found/);
    assert.match(result.stderr, /DOCA_LIB_DIR/);
    assert.match(result.stderr, /install a C compiler/, "the fix that applies to a package user");
    assert.doesNotMatch(result.stderr, /deno task/, "no repository-only fix for a package user");
    assert.equal(existsSync(join(scratch.dir, "nocc", "doca-ts")) && existsSync(join(scratch.dir, "nocc", "doca-ts", "lib")), false);
  });

  test('import "doca-ts": the software device is built into the user cache, a local DMA copy is verified', {
    timeout: 300_000,
  }, () => {
    const scratch = project();
    const result = runInScratch(scratch, SCRIPT);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
    assert.equal(report.same, true, "the library's DMA copy");
    assert.equal(report.task, true, 'dmaLocalCopy from "doca-ts/tasks"');
    assert.equal(report.runtime, currentRuntime());
    assert.match(report.version, /^3\.\d+\.\d+-sim$/);
    assert.equal(report.dir, join(scratch.dir, "cache", "doca-ts", `sim-${report.dir.match(/sim-([^/]+)\/lib$/)[1]}`, "lib"));
    assert.match(result.stderr, /doca-ts: software DOCA device built/, "the first use says it built the device");
    const again = runInScratch(scratch, SCRIPT);
    assert.equal(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /built/, "the second use finds the cache");
  });
});
