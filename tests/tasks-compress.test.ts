/**
 * compress and decompress as a user runs them (a child of this runtime): gunzip reads compress's output byte for
 * byte, decompress reads it back and reads gzip's and the lz4 tool's files; a corrupt input fails with exit 1, a
 * clear message and nothing left behind; an existing output is refused; bad flags exit 2 naming the flag.
 */
import "./helpers/sim-env.ts";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { startChild } from "../tasks/common/run-pair.ts";
import { untilItStays, withTempDir } from "./helpers/tasks/workspace.ts";
import { textLike } from "./helpers/text-like.ts";

const task = (name: string) => fileURLToPath(new URL(`../tasks/${name}`, import.meta.url));
const run = (name: string, args: string[]) => startChild(task(name), args, {}, 120_000).done;

const WORDS = ["doca ", "gzip ", "deflate ", "member ", "block ", "frame ", "\n"];
/** Text-like bytes (helpers/text-like.ts) over this file's words. */
const text = (length: number, seed = 1): Uint8Array => textLike(WORDS, length, seed);

const withDir = (fn: (dir: string) => Promise<void>) => withTempDir("compress", fn);

/**
 * compress started on a 48 MiB file of `dir`, returned once its temporary file has appeared (within 60 s): a run
 * caught mid-way, for the tests that stop it. 4 KiB per task: thousands of tasks, so the run is still going then.
 */
async function compressingBigFile(dir: string, seed: number) {
  const input = join(dir, "big");
  writeFileSync(input, text(48 << 20, seed));
  const child = startChild(task("compress.ts"), [input, "--chunk-size", "4096"], {}, 170_000);
  const deadline = Date.now() + 60_000;
  let exited = false;
  void child.done.then(() => (exited = true));
  await untilItStays(() => readdirSync(dir).some((n) => n.endsWith(".part")), { timeoutMs: Math.max(0, deadline - Date.now()), stop: () => exited });
  return { input, child };
}

const hasTool = (tool: string) => spawnSync(tool, ["--version"], { encoding: "utf8" }).status === 0;

describe("tasks: compress / decompress", () => {
  test("gunzip reads compress's output (several members) and decompress gives the file back", { timeout: 180_000 }, withDir(async (dir) => {
    const input = join(dir, "in.txt");
    const data = text(700_000);
    writeFileSync(input, data);
    const c = await run("compress.ts", [input, "--chunk-size", "200000", "--json"]);
    assert.equal(c.code, 0, c.stderr);
    const result = JSON.parse(c.stdout);
    assert.equal(result.members, 4);
    assert.ok(result.outputBytes < data.length / 2);
    const gunzip = spawnSync("gunzip", ["-c", join(dir, "in.txt.gz")], { maxBuffer: 1 << 26 });
    assert.equal(gunzip.status, 0, String(gunzip.stderr));
    assert.deepEqual(new Uint8Array(gunzip.stdout), data);
    const d = await run("decompress.ts", [join(dir, "in.txt.gz"), "-o", join(dir, "back.txt")]);
    assert.equal(d.code, 0, d.stderr);
    assert.deepEqual(new Uint8Array(readFileSync(join(dir, "back.txt"))), data);
  }));

  test("decompress reads a gzip file from node:zlib and an LZ4 frame from the lz4 tool", { timeout: 180_000 }, withDir(async (dir) => {
    const data = text(300_000, 2);
    writeFileSync(join(dir, "a"), data);
    writeFileSync(join(dir, "a.gz"), gzipSync(data));
    let d = await run("decompress.ts", [join(dir, "a.gz"), "-o", join(dir, "from-gz")]);
    assert.equal(d.code, 0, d.stderr);
    assert.deepEqual(new Uint8Array(readFileSync(join(dir, "from-gz"))), data);
    if (!hasTool("lz4")) {
      console.log("# the lz4 tool is not installed: LZ4 frame case skipped");
      return;
    }
    for (const flags of [[], ["-BD", "-B4", "--content-size"], ["-BX", "-B5"]]) {
      const lz = spawnSync("lz4", ["-q", "-f", ...flags, join(dir, "a"), join(dir, "a.lz4")]);
      assert.equal(lz.status, 0, String(lz.stderr));
      d = await run("decompress.ts", [join(dir, "a.lz4"), "-o", join(dir, "from-lz4"), "-f"]);
      assert.equal(d.code, 0, `${flags.join(" ")}: ${d.stderr}`);
      assert.deepEqual(new Uint8Array(readFileSync(join(dir, "from-lz4"))), data, flags.join(" "));
    }
  }));

  test("a corrupt or truncated input fails with exit 1, says why, and leaves nothing", { timeout: 180_000 }, withDir(async (dir) => {
    const data = text(200_000, 3);
    const gz = new Uint8Array(gzipSync(data));
    const bad = gz.slice();
    bad.fill(0xff, 100, 110);
    writeFileSync(join(dir, "bad.gz"), bad);
    writeFileSync(join(dir, "short.gz"), gz.subarray(0, gz.length >> 1));
    writeFileSync(join(dir, "junk.gz"), text(100));
    for (const [file, why] of [["bad.gz", /refused the data|CRC-32 mismatch/], ["short.gz", /refused the data|truncated/], ["junk.gz", /neither gzip nor an LZ4 frame/]] as const) {
      const d = await run("decompress.ts", [join(dir, file), "-o", join(dir, "out")]);
      assert.equal(d.code, 1, `${file}: ${d.stdout}${d.stderr}`);
      assert.match(d.stderr, why);
      assert.match(d.stderr, /^decompress: error: /m);
    }
    assert.deepEqual(readdirSync(dir).sort(), ["bad.gz", "junk.gz", "short.gz"], "no output, no temporary file");
  }));

  test("SIGINT while compressing: exit 130, one line saying so, no output and no temporary file", { timeout: 180_000 }, withDir(async (dir) => {
    const { child } = await compressingBigFile(dir, 6);
    child.signal!("SIGINT");
    const r = await child.done;
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /interrupted \(SIGINT\) while compressing/);
    assert.deepEqual(readdirSync(dir), ["big"]);
  }));

  test("SIGKILL while compressing, run again at once: the dead run's temporary file is removed, saying so (issue 32 item 5)", { timeout: 240_000 }, withDir(async (dir) => {
    const { input, child } = await compressingBigFile(dir, 7);
    child.kill();
    await child.done;
    const left = readdirSync(dir).filter((n) => n.endsWith(".part"));
    assert.equal(left.length, 1, "SIGKILL leaves the temporary file");
    const r = await run("compress.ts", [input]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^compress: removed ${left[0].replaceAll(".", "\\.")}, the temporary file of a dead run$`, "m"));
    assert.deepEqual(readdirSync(dir).sort(), ["big", "big.gz"], "no temporary file stays");
  }));

  test("an existing output is refused (exit 1) unless -f; bad flags exit 2 naming the flag", { timeout: 120_000 }, withDir(async (dir) => {
    writeFileSync(join(dir, "x"), text(1000));
    writeFileSync(join(dir, "x.gz"), "keep");
    let r = await run("compress.ts", [join(dir, "x")]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exists \(a file\): refusing to replace it \(use --force/);
    assert.equal(readFileSync(join(dir, "x.gz"), "utf8"), "keep");
    r = await run("compress.ts", [join(dir, "x"), "-f"]);
    assert.equal(r.code, 0, r.stderr);
    r = await run("compress.ts", [join(dir, "x"), "--chunk-size", "0"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--chunk-size/);
    r = await run("decompress.ts", [join(dir, "x")]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /give -o/);
  }));
});
