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

const USER_SCRIPT = `
import { Access, BufInventory, Device, Dma, listDevices, loadDoca, Mmap, NativeMemory, ProgressEngine } from "doca-ts";
const info = loadDoca();
using dev = Device.open(listDevices()[0].pciAddr);
using pe = new ProgressEngine();
using src = NativeMemory.alloc(65536), dst = NativeMemory.alloc(65536);
for (let i = 0; i < src.bytes.length; i++) src.bytes[i] = (i * 7 + 3) & 255;
using map = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using map2 = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using inv = new BufInventory(2);
using dma = new Dma(dev, pe);
await dma.memcpy(inv.bufByData(map, src.address, 65536), inv.bufByAddr(map2, dst.address, 65536));
const same = dst.bytes.every((b, i) => b === ((i * 7 + 3) & 255));
console.log(JSON.stringify({ same, dir: info.dir, version: info.version, runtime: info.runtime }));
`;

describe(`package: npm pack installed in a scratch project (${currentRuntime()})`, () => {
  // Set up inside the first test (not a hook) so that the generous test timeout covers npm pack + install.
  let scratch: Scratch | undefined;
  const project = (): Scratch => {
    if (!scratch) {
      scratch = scratchProject();
      writeFileSync(join(scratch.dir, "copy.ts"), USER_SCRIPT);
    }
    return scratch;
  };
  after(() => {
    if (scratch) rmSync(scratch.dir, { recursive: true, force: true });
    if (scratch) rmSync(scratch.env.DOCA_SIM_DIR, { recursive: true, force: true });
  });

  test("without a C compiler and no DOCA, loading fails with a message that says so", { timeout: 300_000 }, () => {
    const scratch = project();
    const result = runInScratch(scratch, "copy.ts", { CC: "/nonexistent/cc", XDG_CACHE_HOME: join(scratch.dir, "nocc") });
    assert.notEqual(result.status, 0, result.stdout);
    assert.match(result.stderr, /no C compiler: `\/nonexistent\/cc` was not found/);
    assert.match(result.stderr, /DOCA_LIB_DIR/);
    assert.equal(existsSync(join(scratch.dir, "nocc", "doca-ts")) && existsSync(join(scratch.dir, "nocc", "doca-ts", "lib")), false);
  });

  test('import "doca-ts": the software device is built into the user cache, a local DMA copy is verified', {
    timeout: 300_000,
  }, () => {
    const scratch = project();
    const result = runInScratch(scratch, "copy.ts");
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
    assert.equal(report.same, true);
    assert.equal(report.runtime, currentRuntime());
    assert.match(report.version, /^3\.\d+\.\d+-sim$/);
    assert.equal(report.dir, join(scratch.dir, "cache", "doca-ts", `sim-${report.dir.match(/sim-([^/]+)\/lib$/)[1]}`, "lib"));
    assert.match(result.stderr, /doca-ts: software DOCA device built/, "the first use says it built the device");
    const again = runInScratch(scratch, "copy.ts");
    assert.equal(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /built/, "the second use finds the cache");
  });
});
