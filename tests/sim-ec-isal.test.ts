/**
 * The software device's erasure coding against Intel ISA-L, the reference implementation of the code DOCA's header
 * describes: tests/isal/ec_compare.c encodes the same data with a DOCA create task (Cauchy) and with ISA-L's portable
 * gf_gen_cauchy1_matrix + ec_encode_data_base, for several geometries, and requires byte-identical redundancy.
 * ISA-L is not in this repository: its sources come from a local snapshot of intel/isa-l that ISAL_REPO names (a git
 * directory or a checkout, as sim/README.md says); without one the test is skipped with a line saying so.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const libDir = join(root, "build", "sim", "lib");
const named = process.env.ISAL_REPO;
const snapshot = named && (existsSync(join(named, "erasure_code")) || existsSync(join(named, "HEAD"))) ? named : undefined;
const skip = snapshot ? false : named
  ? `ISAL_REPO=${named} is not a snapshot of intel/isa-l (a checkout with erasure_code/ or a git directory)`
  : "no snapshot of intel/isa-l (set ISAL_REPO to a git directory or checkout)";
if (!snapshot) console.log(`# ISA-L comparison skipped: ${skip}`);

const PARTS = ["erasure_code/ec_base.c", "erasure_code/ec_base.h", "erasure_code/ec_base_aliases.c", "include"];

describe("erasure coding against Intel ISA-L", { skip }, () => {
  test("Cauchy redundancy is byte-identical to ISA-L's gf_gen_cauchy1_matrix + ec_encode_data", { timeout: 120_000 }, () => {
    const work = mkdtempSync(join(tmpdir(), "doca-isal-"));
    try {
      if (existsSync(join(snapshot!, "erasure_code"))) {
        for (const p of PARTS) cpSync(join(snapshot!, p), join(work, p), { recursive: true });
      } else {
        const archive = spawnSync("git", ["--git-dir", snapshot!, "archive", "HEAD", ...PARTS], { maxBuffer: 1 << 26 });
        assert.equal(archive.status, 0, String(archive.stderr));
        assert.equal(spawnSync("tar", ["-x", "-C", work], { input: archive.stdout }).status, 0);
      }
      const program = join(work, "ec_compare");
      const cc = spawnSync("cc", [
        "-std=gnu11", "-O2", "-w", `-I${join(root, "sim", "include")}`, `-I${join(work, "include")}`, `-I${join(work, "erasure_code")}`,
        join(root, "tests", "isal", "ec_compare.c"), join(work, "erasure_code", "ec_base.c"), join(work, "erasure_code", "ec_base_aliases.c"),
        `-L${libDir}`, "-ldoca_erasure_coding", "-ldoca_common", `-Wl,-rpath,${libDir}`, "-o", program,
      ], { encoding: "utf8", timeout: 120_000 });
      assert.equal(cc.status, 0, cc.stderr);
      const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: work, DOCA_SIM_STRICT: "1" };
      delete env.DOCA_SIM_CONFIG;
      const r = spawnSync(program, [], { env, encoding: "utf8", timeout: 60_000 });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /^PASS ec_compare$/m);
      assert.equal(r.stdout.match(/^ok cauchy .* byte-identical/gm)?.length, 7);
      assert.match(r.stdout, /ok vandermonde: DOCA's formula differs from ISA-L's gf_gen_rs_matrix/);
      assert.doesNotMatch(r.stderr, /strict:/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
