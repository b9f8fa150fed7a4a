/**
 * The accelerator tasks' flags (issue 30): an unknown option is one short line in every task (node's parseArgs hint
 * about "--" is not shown), and a size beyond what the device takes exits 2 naming the flag instead of being clamped
 * silently or failing later with exit 1.
 */
import "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { pattern } from "./helpers/sim-env.ts";
import { progressText } from "../tasks/accel/progress.ts";

const task = (name: string) => join(repoRoot, "tasks", `${name}.ts`);
const dir = mkdtempSync(join(tmpdir(), "doca-ts-accel-flags-"));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "plain"), pattern(5000, 1));

async function run(name: string, args: string[]) {
  return await startChild(task(name), args, { INIT_CWD: dir }, 60_000).done;
}

describe("accelerator tasks: flags", () => {
  for (const name of ["compress", "decompress", "sha", "encrypt", "decrypt", "ec-encode", "ec-recover"]) {
    test(`${name} --bogus: exit 2, one short line`, { timeout: 90_000 }, async () => {
      const r = await run(name, ["--bogus", "plain"]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `${name}: error: unknown flag "--bogus" (see --help)\n`);
    });
  }

  test("compress --chunk-size over the device's maximum: exit 2 naming the flag, nothing written", { timeout: 90_000 }, async () => {
    const r = await run("compress", ["--chunk-size", "2000000000", "-o", "c.gz", "plain"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^compress: error: --chunk-size 2000000000 is more than device \S+ takes in one task/);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes("c.gz")), []);
  });

  test("ec-encode --block-size over the device's maximum: exit 2 naming the flag, no folder", { timeout: 90_000 }, async () => {
    const r = await run("ec-encode", ["-i", "plain", "-o", "blocks", "--block-size", String(64 * 2 ** 20)]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^ec-encode: error: --block-size: \d+ must be a multiple of 64 up to \d+/);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes("blocks")), []);
  });
});

describe("a stop near the end of a run", () => {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    test(`${signal} after the last check: reported, with the signal's status (${code}), not exit 0`, { timeout: 90_000 }, async () => {
      const r = await startChild(join(repoRoot, "tests", "helpers", "tasks", "late-stop.ts"), [signal], {}, 60_000).done;
      assert.equal(r.stdout, "done after the stop\n");
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, new RegExp(`interrupted \\(${signal}\\): finished before the stop took effect \\(its output is complete\\)`));
    });
  }
});

describe("progress lines of the accelerator tasks", () => {
  test("one format: the task's name, done of total, a percentage", () => {
    assert.equal(progressText("encrypt", 1.03 * 2 ** 30, 1.4 * 2 ** 30), "encrypt: 1.03 GiB of 1.40 GiB (73%)");
    assert.equal(progressText("sha", 0, 0), "sha: 0 B of 0 B (100%)");
  });
});
