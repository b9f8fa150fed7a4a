/**
 * Every byte of machine code doca-ts places in executable memory comes from ffi/native/asm/*.S: re-assemble each
 * architecture (x86-64 with as / llvm-mc; aarch64 with aarch64-linux-gnu-as, which the Arm lane's
 * gcc-aarch64-linux-gnu brings, or llvm-mc) and compare with ffi/native/machine-code.ts byte for byte; and the call_each
 * loop works through the runtime's own path (on Deno: libc's bsearch and the packed entry), so a libc whose bsearch
 * stopped calling compar(key, base) once for a one-element array fails here.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import process from "node:process";
import { assemble, assembler, GENERATED, render, type Arch, type ArchCode } from "../scripts/machine-code.ts";
import { MACHINE_CODE } from "../ffi/native/machine-code.ts";
import { callEach, symbolAddress } from "../ffi/native/native-call.ts";

describe("machine code from source", () => {
  const codes: Partial<Record<Arch, ArchCode>> = {};
  for (const arch of ["x64", "arm64"] as const) {
    const missing = assembler(arch) === undefined && `no ${arch} assembler installed (as / aarch64-linux-gnu-as / llvm-mc): not checked`;
    test(`${arch}: ffi/asm re-assembles to the bytes and offsets in ffi/native/machine-code.ts`, { skip: missing }, () => {
      const code = assemble(arch);
      assert.notEqual(typeof code, "string", String(code));
      codes[arch] = code as ArchCode;
      assert.deepEqual(code, MACHINE_CODE[arch], "run `deno task machine-code` after changing ffi/native/asm/*.S");
    });
  }

  test("ffi/native/machine-code.ts is exactly what the generator writes", () => {
    // Offsets and bytes are compared above; here the file itself (nobody edited the generated text by hand).
    assert.equal(readFileSync(GENERATED, "utf8"), render(MACHINE_CODE));
  });
});

describe("call_each through the runtime's path", () => {
  const each = ["x64", "arm64"].includes(process.arch) ? callEach() : undefined;
  test("stops at the first nonzero result, counts the calls that passed (Deno: through libc bsearch)", { skip: !each && "no call_each here (DOCA_TS_JS_CALLBACKS=1, executable memory refused, or another architecture)" }, () => {
    const labs = symbolAddress("libc.so.6", "labs");
    const values = [0, 0, 0, 7, 0, 0];
    values.forEach((v, i) => each!.set(0, i, v));
    assert.equal(each!.run(labs, values.length, true, 0), 3, "labs over [0,0,0,7,0,0] passes three calls, then stops");
    assert.equal(each!.run(labs, 3, true, 0), 3);
    assert.equal(each!.run(labs, values.length, false, 0), values.length, "unchecked: every call runs");
    each!.set(0, 0, 2 ** 40); // a 64-bit argument arrives whole: labs(2^40) has zero low bits, 2^40 + 1 does not
    assert.equal(each!.run(labs, 1, true, 0), 1);
    each!.set(0, 0, 2 ** 40 + 1);
    assert.equal(each!.run(labs, 1, true, 0), 0);
  });
});
