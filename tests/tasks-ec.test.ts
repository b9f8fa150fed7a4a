/**
 * ec-encode / ec-recover as child processes of this test's runtime on the software device: a file into 3 + 2
 * blocks, rebuilt from every choice of 3 blocks (deleted or damaged ones), byte for byte; more than 2 lost is exit 1
 * with no output file; several stripes; the manifest as documented; a bad manifest refused naming its field and why.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startChild } from "../tasks/common/run-pair.ts";
import { workspaces } from "./helpers/tasks/workspace.ts";
import { ok, run, task } from "./helpers/tasks/run-task.ts";

const space = workspaces(after);
const TIMEOUT = 240_000;

const block = (k: number) => `block-${String(k).padStart(3, "0")}`;

/** A workspace with FILE of `size` random bytes and the name of a blocks folder (not made) beside it. */
function randomInput(size: number) {
  const w = space("ec");
  const input = join(w.root, "file");
  const plain = crypto.randomBytes(size);
  writeFileSync(input, plain);
  return { w, input, plain, dir: join(w.root, "blocks") };
}

describe("ec-encode / ec-recover", () => {
  test("3 + 2 blocks: rebuilt from every choice of 3, byte for byte", { timeout: TIMEOUT }, async () => {
    const { w, input, plain, dir } = randomInput(10_000);
    const manifest = JSON.parse(await ok("ec-encode.ts", ["-i", input, "-o", dir, "-n", "3", "-m", "2", "--json"], w.env));
    assert.equal(manifest.format, "doca-ts-ec");
    assert.equal(manifest.fileSize, 10_000);
    assert.equal(manifest.sha256, crypto.createHash("sha256").update(plain).digest("hex"));
    assert.equal(manifest.blocks.length, 5);
    // every pair of lost blocks (10), every single one (5) and none: deleted, or damaged for odd choices
    const choices: number[][] = [[]];
    for (let a = 0; a < 5; a++) {
      choices.push([a]);
      for (let b = a + 1; b < 5; b++) choices.push([a, b]);
    }
    for (const [i, lost] of choices.entries()) {
      const copy = join(w.root, `c${i}`);
      cpSync(dir, copy, { recursive: true });
      for (const k of lost) {
        if (i % 2) appendFileSync(join(copy, block(k)), "x");
        else rmSync(join(copy, block(k)));
      }
      const out = join(w.root, `out${i}`);
      const r = JSON.parse(await ok("ec-recover.ts", ["-i", copy, "-o", out, "--json"], w.env));
      assert.deepEqual(r.lost, lost);
      assert.deepEqual(readFileSync(out), plain, `lost ${lost}`);
    }
  });

  test("SIGINT while encoding: exit 130, neither the folder nor its temporary folder is left", { timeout: TIMEOUT }, async () => {
    const w = space("ec");
    const input = join(w.root, "big");
    // 1 GiB (sparse: nothing written for the input), so the encode runs for seconds after its temporary folder shows:
    // a test process stalled for half a second on a loaded machine (256 MiB took that long in all) still signals a
    // running encode; the signal stops it long before the end.
    writeFileSync(input, new Uint8Array(0));
    truncateSync(input, 1024 * 1024 * 1024);
    const child = startChild(task("ec-encode.ts"), ["-i", input, "-o", join(w.root, "blocks"), "--block-size", "4096"], w.env, 120_000);
    let ended: { code: number | null; stderr: string } | undefined;
    void child.done.then((r) => (ended = r));
    // the temporary *folder* (the target check before it probes the folder with a file of the same kind of name,
    // created and removed at once: seeing that probe sent the SIGINT before the encode had begun)
    const started = () => readdirSync(w.root, { withFileTypes: true }).some((e) => e.isDirectory() && e.name.startsWith(".blocks."));
    const deadline = Date.now() + 60_000;
    while (!started() && !ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    // an encode that ended before its folder showed, or whose folder went away before the signal, ended on its own
    // (a failure, or a finished encode): its own words say why
    if (ended || !started()) {
      const r = ended ?? await Promise.race([child.done, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      assert.fail(`the encode ended on its own before the SIGINT (${readdirSync(w.root).join(", ")}): ${JSON.stringify(r)}`);
    }
    child.signal!("SIGINT");
    const r = await child.done;
    assert.equal(r.code, 130, r.stderr);
    assert.deepEqual(readdirSync(w.root).filter((n) => n.includes("blocks")), []);
  });

  test("three of 3 + 2 lost: exit 1, no output; several stripes round trip; bad flags exit 2", { timeout: TIMEOUT }, async () => {
    const { w, input, plain, dir } = randomInput(50_000);
    const m = JSON.parse(await ok("ec-encode.ts", ["-i", input, "-o", dir, "-n", "3", "-m", "2", "--block-size", "4096", "--matrix", "vandermonde", "--json"], w.env));
    assert.equal(m.stripes, Math.ceil(50_000 / (3 * 4096)));
    rmSync(join(dir, block(0)));
    rmSync(join(dir, block(4)));
    await ok("ec-recover.ts", ["-i", dir, "-o", join(w.root, "two-lost")], w.env);
    assert.deepEqual(readFileSync(join(w.root, "two-lost")), plain);
    rmSync(join(dir, block(2)));
    const r = await run("ec-recover.ts", ["-i", dir, "-o", join(w.root, "three-lost")], w.env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /3 of 5 blocks are missing or damaged/);
    assert.equal(existsSync(join(w.root, "three-lost")), false);
    const again = await run("ec-encode.ts", ["-i", input, "-o", dir], w.env);
    assert.equal(again.code, 1, "an existing folder is never replaced");
    const bad = await run("ec-encode.ts", ["-i", input, "-o", join(w.root, "x"), "--block-size", "100"], w.env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--block-size/);
    assert.equal(existsSync(join(w.root, "x")), false);
  });

  test("a bad manifest is refused naming the field and why; a geometry that does not fit the blocks blames the manifest", { timeout: TIMEOUT }, async () => {
    const { w, input, dir } = randomInput(20_000);
    await ok("ec-encode.ts", ["-i", input, "-o", dir, "-n", "3", "-m", "2", "--block-size", "4096"], w.env);
    const good = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    const edited = (change: (m: typeof good) => void) => {
      const m = structuredClone(good);
      change(m);
      return m;
    };
    const cases = [
      ["duplicate file", edited((m) => (m.blocks[1].file = m.blocks[0].file)), /"blocks"\[1\] repeats the file "block-000" of "blocks"\[0\]/],
      ["duplicate index", edited((m) => (m.blocks[1].index = 0)), /"blocks"\[1\] repeats the index 0 of "blocks"\[0\]/],
      ["path outside", edited((m) => (m.blocks[0].file = "../other/block-000")), /"blocks"\[0\]'s file "\.\.\/other\/block-000" is a path/],
      ["stripes", edited((m) => (m.stripes = 7)), /"stripes" 7 does not fit the geometry/],
      ["matrix", edited((m) => (m.matrix = "identity")), /"matrix" "identity" is neither/],
    ] as const;
    for (const [what, manifest, why] of cases) {
      writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest));
      const out = join(w.root, `out-${what}`);
      const r = await run("ec-recover.ts", ["-i", dir, "-o", out], w.env);
      assert.equal(r.code, 1, `${what}: ${r.stderr}`);
      assert.match(r.stderr, /manifest\.json is not a valid doca-ts-ec manifest: /, what);
      assert.match(r.stderr, why, what);
      assert.equal(existsSync(out), false, what);
    }
    // stripes and fileSize changed together (still consistent): every block is far shorter than the manifest says
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(edited((m) => {
      m.stripes = 1e9;
      m.fileSize = 1e9 * 3 * 4096;
    })));
    const g = await run("ec-recover.ts", ["-i", dir, "-o", join(w.root, "out-geometry")], w.env);
    assert.equal(g.code, 1, g.stderr);
    assert.match(g.stderr, /manifest\.json does not fit its blocks: "stripes" 1000000000 × "blockSize" 4096/);
    assert.doesNotMatch(g.stderr, /missing or damaged/);
  });
});
