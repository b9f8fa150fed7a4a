/**
 * The DOCA 2.7 flavour carries 2.7's declarations (issue 20 §1): a 2.7-style program (sim/flavours/2.7/examples)
 * builds against sim/flavours/2.7/include + sim/include as C and, where g++ exists, as C++ (where constness
 * mismatches are errors), links the 2.7 libraries and runs; the 2.7 libraries export none of the 3.x-only names.
 * The same program does not build as C++ against the 3.x headers, so the test tells the two apart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { buildSoftwareDevice } from "../ffi/load/sim-build/builder.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const program = join(root, "sim", "flavours", "2.7", "examples", "flavour_27.c");
const include27 = ["-I" + join(root, "sim", "flavours", "2.7", "include"), "-I" + join(root, "sim", "include")];

function have(tool: string): boolean {
  return spawnSync(tool, ["--version"], { encoding: "utf8" }).status === 0;
}

test("a DOCA 2.7-style program builds (C and C++) against the 2.7 flavour and runs; its libraries hide 3.x names", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "doca-sim-27-"));
  try {
    const lib = buildSoftwareDevice({ outDir: join(root, "build", "sim-2.7"), flavour: "2.7" });
    const languages = have("g++") ? [["cc", "c"], ["g++", "c++"]] : [["cc", "c"]];
    for (const [compiler, language] of languages) {
      const out = join(dir, `flavour_27-${language}`);
      const build = spawnSync(compiler, ["-x", language, "-Wall", "-Wextra", "-Werror", ...include27, program, "-L" + lib,
        "-l:libdoca_common.so.2", "-l:libdoca_comch.so.2", `-Wl,-rpath,${lib}`, "-o", out], { encoding: "utf8" });
      assert.equal(build.status, 0, `${compiler}: ${build.stderr}`);
      const run = spawnSync(out, [], { encoding: "utf8", env: { ...process.env, DOCA_SIM_DIR: dir } });
      assert.equal(run.status, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /^PASS flavour_27 \(2\.7/m);
    }
    if (have("g++")) {
      const against3 = spawnSync("g++", ["-x", "c++", "-fsyntax-only", "-I" + join(root, "sim", "include"), program], { encoding: "utf8" });
      assert.notEqual(against3.status, 0, "the 2.7 program must not build against the 3.x headers (they differ)");
    }
    const exported = (name: string) =>
      spawnSync("nm", ["-D", "--defined-only", join(lib, name)], { encoding: "utf8" }).stdout.split("\n")
        .map((line) => line.trim().split(/\s+/)[2]?.replace(/@.*/, "")).filter(Boolean);
    const common = exported("libdoca_common.so.2"), comch = exported("libdoca_comch.so.2");
    for (const name of ["doca_devinfo_get_pci_func_type", "doca_devinfo_get_sf_index"]) assert.ok(!common.includes(name), name);
    for (const name of ["doca_comch_server_get_device_rep", "doca_comch_server_event_connection_status_changed_register"]) {
      assert.ok(!comch.includes(name), name);
    }
    assert.ok(comch.includes("doca_comch_server_get_device_repr") && comch.includes("doca_comch_server_event_connection_register"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
