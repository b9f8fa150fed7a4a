/**
 * Two `npm pack`s of one checkout at once (the suite's package tests beside the bench's Node rows did it): the build
 * writes its JavaScript next to the sources, so the second pack's prepack used to clean the first one's output
 * before npm packed it ("mod.js, tasks/dma-copy.js … missing after tsc", or a tarball without them). prepack holds
 * a lock until postpack (scripts/build-package.mjs): both tarballs are whole. Runs once, under Node.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { currentRuntime } from "./helpers/spawn-runtime.ts";
import { repoRoot } from "./helpers/pkg/scratch.ts";

const pack = (dir: string) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("close", (code) => resolve({ code, stderr }));
  });

const listed = (dir: string) => {
  const tarball = readdirSync(dir).find((n) => n.endsWith(".tgz"));
  assert.ok(tarball, `no tarball in ${dir}`);
  return spawnSync("tar", ["tzf", join(dir, tarball)], { encoding: "utf8" }).stdout.split("\n");
};

test("a second npm pack started while the first builds waits for it: both tarballs are whole", { skip: currentRuntime() !== "node" && "runs once, under Node", timeout: 300_000 }, async () => {
  const a = mkdtempSync(join(tmpdir(), "doca-pack-a-")), b = mkdtempSync(join(tmpdir(), "doca-pack-b-"));
  try {
    const first = pack(a);
    // the moment the first build has written its JavaScript, the second pack starts (its prepack used to clean it)
    const deadline = Date.now() + 120_000;
    while (!existsSync(join(repoRoot, "mod.js"))) {
      if (Date.now() > deadline) throw new Error("the first pack never built mod.js");
      await new Promise((r) => setTimeout(r, 20));
    }
    const second = pack(b);
    const [ra, rb] = await Promise.all([first, second]);
    assert.equal(ra.code, 0, ra.stderr);
    assert.equal(rb.code, 0, rb.stderr);
    for (const dir of [a, b]) {
      const files = listed(dir);
      for (const f of ["package/mod.js", "package/tasks/dma-copy.js", "package/ffi/native/library.js"]) assert.ok(files.includes(f), `${f} in ${dir}`);
    }
    // (whether the lock is free now is not this test's to say: the suite's other package tests pack beside it)
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});
