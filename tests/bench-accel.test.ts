/**
 * bench:accel's plumbing, not its figures: one short round at 4 KiB builds the C driver, runs the device from C and
 * from doca-ts and the libraries directly, and writes complete, finite rows; --only ec-aes --per-cpu gives the erasure
 * coding and AES-GCM rows in MiB per CPU second. Runs once, under Deno.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { benchRows } from "./helpers/bench-rows.ts";

const onDeno = currentRuntime() === "deno";

describe("deno task bench:accel", { skip: !onDeno && "runs once, under Deno" }, () => {
  test("one round gives every row, finite, with its ratio", { timeout: 180_000 }, () => {
    const { rows, stdout } = benchRows("benchmarks/accel.ts", ["--rounds", "1", "--seconds", "0.05", "--sizes", "4096", "--only", "deflate-sha"], 170_000);
    assert.deepEqual(rows.map((row) => `${row.name}/${row.runtime}`), [
      "compress deflate/Deno", "compress deflate (batches)/Deno", "compress deflate/C", "zlib direct/C",
      "sha256 hash/Deno", "sha256 hash (batches)/Deno", "sha256 hash/C", "libcrypto direct/C",
    ]);
    // 4 KiB: issue 30's target is on the batches; one Promise per task is shown beside it without one
    assert.ok(rows.find((row) => row.name === "compress deflate (batches)")?.target, "the batch row carries the target");
    for (const row of rows) assert.ok(Number.isFinite(row.value) && row.value > 0, JSON.stringify(row));
    assert.match(stdout, /compress deflate\s+Deno\s+4 KiB/);
  });

  test("--only ec-aes --per-cpu: the erasure coding and AES-GCM rows, per CPU second", { timeout: 180_000 }, () => {
    const { rows } = benchRows("benchmarks/accel.ts", ["--rounds", "1", "--seconds", "0.05", "--only", "ec-aes", "--per-cpu"], 170_000);
    const names = rows.map((row) => `${row.name}/${row.runtime}/${row.size}`);
    for (const size of [65536, 4096]) {
      for (const name of ["EC create 8+2/Deno", "EC create 8+2 (batches)/Deno", "EC create 8+2/C", "GF(2^8) tables direct/C", "AES-256-GCM encrypt/Deno", "AES-256-GCM encrypt (batches)/Deno", "AES-256-GCM encrypt/C", "OpenSSL direct/C"]) {
        assert.ok(names.includes(`${name}/${size}`), `${name} ${size}: ${names.join(", ")}`);
      }
    }
    assert.equal(rows.length, 16);
    for (const row of rows) {
      assert.ok(Number.isFinite(row.value) && row.value > 0, JSON.stringify(row));
      assert.equal(row.unit, "MiB/CPU-s");
    }
  });

  test("a bad flag exits 2 naming it", { timeout: 60_000 }, () => {
    for (const args of [["--rounds", "0"], ["--only", "sha"]]) {
      const r = spawnSync(process.execPath, ["run", "--allow-all", join(repoRoot, "benchmarks", "accel.ts"), ...args], { cwd: repoRoot, encoding: "utf8", timeout: 50_000 });
      assert.equal(r.status, 2, args.join(" "));
      assert.match(r.stderr, new RegExp(args[0]));
    }
  });
});
