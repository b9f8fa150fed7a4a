/**
 * Messages that must point at the right fix: pack:offline without a cross compiler names the cross-compiler
 * packages (not the native gcc), and pack-offline prints that hint.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compilerMissingHint } from "../scripts/cross-compiler.ts";

test("a missing cross compiler suggests the cross-compiler packages, a missing native one gcc", () => {
  const cross = compilerMissingHint("aarch64", "x86_64", "aarch64-linux-gnu-gcc");
  assert.match(cross, /apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross/);
  assert.doesNotMatch(cross, /install gcc libc6-dev/);
  assert.match(compilerMissingHint("x86_64", "aarch64", "x86_64-linux-gnu-gcc"), /gcc-x86-64-linux-gnu libc6-dev-amd64-cross/);
  assert.match(compilerMissingHint("x86_64", "x86_64", "cc"), /apt-get install gcc libc6-dev/);
});

test("pack-offline prints the hint when the builder found no compiler", () => {
  const src = readFileSync(new URL("../scripts/pack-offline.ts", import.meta.url), "utf8");
  assert.match(src, /e\.noCompiler \? compilerMissingHint\(arch, hostArch, cc\)/);
});
