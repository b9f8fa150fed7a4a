/**
 * The package's public types (the .d.ts files `npm pack` ships, built as scripts/build-package.mjs builds them, here
 * into a scratch folder): no member marked @internal, and nothing that hands out or takes a native address on the
 * connection classes (what callbacks and endpoints use is module-private, tsconfig.package.json's stripInternal only
 * a backstop).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./helpers/pkg/scratch.ts";

function declarations(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? declarations(path) : name.endsWith(".d.ts") ? [path] : [];
  });
}

test("the package's .d.ts has no @internal member and no raw-address member on its connections", { timeout: 180_000 }, () => {
  const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  assert.ok(existsSync(tsc), "typescript is a devDependency: run npm ci");
  const out = mkdtempSync(join(tmpdir(), "doca-types-"));
  try {
    const run = spawnSync("node", [tsc, "-p", join(repoRoot, "tsconfig.package.json"), "--emitDeclarationOnly", "--outDir", out], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 170_000,
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    const files = declarations(out);
    assert.ok(files.length > 20, `declarations written: ${files.length}`);
    const internal = files.filter((f) => readFileSync(f, "utf8").includes("@internal"));
    assert.deepEqual(internal.map((f) => f.slice(out.length + 1)), [], "declarations that still carry @internal members");
    const read = (rel: string) => readFileSync(join(out, rel), "utf8");
    const rdma = read("ffi/doca/rdma/rdma.d.ts");
    for (const member of ["bindHandle", "get handle", "noteState", "established(", "onConnectionRequest", "onConnectionEvent", "messageOf", "submit("]) {
      assert.ok(!rdma.includes(member), `RDMA's public types expose ${member}`);
    }
    const comch = read("ffi/doca/comch/comch-connection.d.ts");
    for (const member of ["onMessage", "onStatus", "onRemoteConsumer", "markDisconnected", "overflowed", "gone()"]) {
      assert.ok(!comch.includes(member), `ComchConnection's public types expose ${member}`);
    }
    assert.doesNotMatch(read("ffi/doca/comch/comch-endpoint.d.ts"), /^\s+sendOn\(/m, "ComchEndpoint.sendOn takes a native connection");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
