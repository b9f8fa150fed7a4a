/**
 * doca-ts as a package: `npm pack`, installed into a scratch project outside the repository, imported as
 * "doca-ts" (Node, Bun; Deno through an import map onto the unpacked tarball), does a local DMA copy with the
 * software device built on demand into the user's cache from the sources shipped in the package. Without a C
 * compiler the failure says so. Runs under each runtime with that runtime.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { currentRuntime } from "./helpers/spawn-runtime.ts";
import { repoRoot, runInScratch, type Scratch, scratchProject } from "./helpers/pkg/scratch.ts";
import { TASKS } from "../bin/task-list.mjs";

/** README.md's API example ("## The API"), importing "doca-ts" as a user of the package would. */
function readmeExample(): string {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("\n## The API\n")));
  assert.ok(block, "README.md has its API example");
  return block[1].replaceAll(`from "./mod.ts"`, `from "doca-ts"`);
}

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
    assert.match(result.stderr, /doca-ts: no DOCA installation found; building the software DOCA device into \S+ \(once, about 15 s\)\n(.*\n)*doca-ts: software DOCA device built/,
      "and says so before the build's seconds of silence");
    const again = runInScratch(scratch, SCRIPT);
    assert.equal(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /built/, "the second use finds the cache");
  });

  test("README.md's API example runs as pasted (Node: plain node, no loader)", { timeout: 300_000 }, () => {
    const scratch = project();
    const script = currentRuntime() === "node" ? "readme.mjs" : "readme.ts";
    writeFileSync(join(scratch.dir, script), readmeExample());
    const result = runInScratch(scratch, script);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.equal(result.stdout.trim().split("\n").at(-1), "7");
  });

  test("npx doca-ts TASK: a command for every task, from the package's JavaScript", {
    timeout: 300_000,
    skip: currentRuntime() !== "node" && "the bin runs with node",
  }, () => {
    const scratch = project();
    const bin = join(scratch.dir, "node_modules", ".bin", "doca-ts");
    for (const name of TASKS) {
      assert.ok(existsSync(join(scratch.dir, "node_modules", "doca-ts", "tasks", `${name}.js`)), `the package ships tasks/${name}.js`);
    }
    const run = (args: string[]) => spawnSync(bin, args, { cwd: scratch.dir, env: scratch.env, encoding: "utf8", timeout: 120_000 });
    const help = run(["--help"]);
    assert.equal(help.status, 0, help.stderr);
    for (const name of TASKS) assert.match(help.stdout, new RegExp(`\\b${name}\\b`));
    const copy = run(["dma-local-copy", "--json"]);
    assert.equal(copy.status, 0, copy.stderr);
    assert.equal(JSON.parse(copy.stdout).equal, true);
    const bad = run(["dma-local-copy", "--size", "0"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^dma-local-copy: error: --size/);
    const unknown = run(["nope"]);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown task "nope"/);
  });
});

describe("package: every task is exported and has a command", () => {
  test("the bin's task list is deno.json's tasks of tasks/; the package and JSR export ./tasks", () => {
    const deno = JSON.parse(readFileSync(join(repoRoot, "deno.json"), "utf8"));
    const scripts = Object.values(deno.tasks as Record<string, string | { command: string }>)
      .map((t) => (typeof t === "string" ? t : t.command))
      .map((command) => /^deno run .* tasks\/([a-z-]+)\.ts$/.exec(command)?.[1])
      .filter((name): name is string => name !== undefined);
    assert.deepEqual([...TASKS].sort(), [...new Set(scripts)].sort());
    assert.equal(deno.exports["./tasks"], "./tasks/mod.ts", "JSR exposes doca-ts/tasks");
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    assert.equal(pkg.bin["doca-ts"], "bin/doca-ts.mjs");
    assert.ok(pkg.files.includes("bin/"));
    const built = JSON.parse(readFileSync(join(repoRoot, "tsconfig.package.json"), "utf8")).files as string[];
    for (const name of TASKS) assert.ok(built.includes(`tasks/${name}.ts`), `npm pack builds tasks/${name}.js`);
    // the Deno import map for the unpacked tarball is documented in docs/USAGE.md (README.md links there)
    const usage = readFileSync(join(repoRoot, "docs", "USAGE.md"), "utf8");
    assert.match(usage, /"doca-ts\/tasks": "\.\/vendor\/doca-ts\/tasks\/mod\.ts"/, "docs/USAGE.md's Deno import map maps doca-ts/tasks");
  });

  test("every tasks/*.ts with a shebang is a task of the bin's list, executable in git (mode 100755)", () => {
    // .d.ts: the declarations an npm pack running beside this test (another runtime's lane) writes for a moment
    const scripts = readdirSync(join(repoRoot, "tasks")).filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
      .filter((name) => readFileSync(join(repoRoot, "tasks", name), "utf8").startsWith("#!"));
    assert.deepEqual(scripts.map((name) => name.slice(0, -3)).sort(), [...TASKS].sort(), "a script with a shebang is in bin/task-list.mjs");
    const staged = spawnSync("git", ["ls-files", "-s", "--", ...scripts.map((name) => `tasks/${name}`)], { cwd: repoRoot, encoding: "utf8" });
    assert.equal(staged.status, 0, staged.stderr);
    const modes = new Map(staged.stdout.trim().split("\n").map((line) => [line.split("\t")[1], line.split(" ")[0]]));
    for (const name of scripts) assert.equal(modes.get(`tasks/${name}`), "100755", `tasks/${name} is executable in git`);
  });

  test("README.md's API example is plain JavaScript: no `using` (Node 20 cannot parse it)", () => {
    assert.doesNotMatch(readmeExample(), /^\s*(await\s+)?using\s/m);
  });
});
