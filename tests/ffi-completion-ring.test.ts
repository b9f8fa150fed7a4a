/**
 * The native completion ring (ffi/native/completion-ring.ts): its machine code called as DOCA calls a completion callback
 * (C harness sim/tests/completion_stub.c; aarch64 bytes under qemu-aarch64-static when installed), and the DMA
 * path's guarantees with the ring and with the JS-callback fallback forced by DOCA_TS_JS_CALLBACKS=1.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { simDir } from "./helpers/sim-env.ts";
import { runtimeCommand } from "./helpers/spawn-runtime.ts";
import { completionRing, stubCode } from "../ffi/native/completion-ring.ts";
import { callEachCode, PACKED_OFFSET } from "../ffi/native/native-call.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const harness = join(root, "sim", "tests", "completion_stub.c");
const callEachHarness = join(root, "sim", "tests", "call_each.c");

function callEachArgs(arch: string): string[] {
  return [Array.from(callEachCode(arch)!, (b) => b.toString(16).padStart(2, "0")).join(""), String(PACKED_OFFSET[arch])];
}

function assertCallEachPassed(r: { status: number | null; stdout: string; stderr: string }): void {
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^ok checked run: rows passed in order with three 64-bit arguments, stops at the first nonzero result$/m);
  assert.match(r.stdout, /^ok packed entry through bsearch: result stored in args\[6\], returns 0$/m);
  assert.match(r.stdout, /^PASS call_each$/m);
}

function stubArgs(arch: string): string[] {
  const stub = stubCode(arch)!;
  const hex = Array.from(stub.code, (b) => b.toString(16).padStart(2, "0")).join("");
  return [hex, String(stub.okOffset), String(stub.errorOffset), ...stub.ringAddressAt.map(String)];
}

function assertHarnessPassed(r: { status: number | null; stdout: string; stderr: string }): void {
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^ok success and error stubs record task, task user data, ctx user data and ok flag in order$/m);
  assert.match(r.stdout, /^ok overflow counted \(7 of capacity 4\) and nothing written past the ring$/m);
  assert.match(r.stdout, /^PASS completion_stub$/m);
}

const which = (tool: string) => spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).status === 0;

describe("completion ring: machine code", () => {
  test("x86-64 stubs write the ring layout (C harness)", { skip: process.arch !== "x64" && "not an x86-64 machine" }, () => {
    const program = join(root, "build", "sim", "bin", "completion_stub");
    assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\``);
    assertHarnessPassed(spawnSync(program, stubArgs("x64"), { encoding: "utf8", timeout: 30_000 }));
  });

  test("x86-64 call_each loop and its packed entry (C harness)", { skip: process.arch !== "x64" && "not an x86-64 machine" }, () => {
    const program = join(root, "build", "sim", "bin", "call_each");
    assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\``);
    assertCallEachPassed(spawnSync(program, callEachArgs("x64"), { encoding: "utf8", timeout: 30_000 }));
  });

  const cross = which("aarch64-linux-gnu-gcc") && which("qemu-aarch64-static");
  test("aarch64 stubs write the ring layout and call_each loop (cross-compiled C harnesses under qemu)", { skip: !cross && "aarch64-linux-gnu-gcc / qemu-aarch64-static not installed" }, () => {
    const dir = mkdtempSync(join(tmpdir(), "doca-ts-a64-"));
    try {
      const program = join(dir, "completion_stub");
      const cc = spawnSync("aarch64-linux-gnu-gcc", ["-static", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", `-I${join(root, "sim", "include")}`, harness, "-o", program], { encoding: "utf8" });
      assert.equal(cc.status, 0, cc.stderr);
      assertHarnessPassed(spawnSync("qemu-aarch64-static", [program, ...stubArgs("arm64")], { encoding: "utf8", timeout: 60_000 }));
      const eachProgram = join(dir, "call_each");
      const cc2 = spawnSync("aarch64-linux-gnu-gcc", ["-static", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", callEachHarness, "-o", eachProgram], { encoding: "utf8" });
      assert.equal(cc2.status, 0, cc2.stderr);
      assertCallEachPassed(spawnSync("qemu-aarch64-static", [eachProgram, ...callEachArgs("arm64")], { encoding: "utf8", timeout: 60_000 }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the process ring exists on x86-64 / aarch64 unless DOCA_TS_JS_CALLBACKS=1", () => {
    const ring = completionRing();
    if (process.env.DOCA_TS_JS_CALLBACKS === "1" || !["x64", "arm64"].includes(process.arch)) assert.equal(ring, undefined);
    else {
      assert.ok(ring, "executable memory was refused on this machine");
      assert.ok(ring.okCallback > 0 && ring.errorCallback > 0 && ring.okCallback !== ring.errorCallback);
      assert.ok(ring.capacity >= 1024);
      assert.equal(ring.pending, 0, "nothing was recorded");
    }
  });
});

interface Checks {
  ring: boolean;
  copied: boolean;
  batchCopied: boolean;
  first: string;
  errorName: string;
  errorFn: string;
  after: string;
  flushed: string[];
  batchError: string;
  batchCounting: string;
  groupError: string;
  groupChecks: boolean;
  batchAtClose: string;
  repeatChecks: boolean;
  closedInBatch: string;
  idleAfterBatch: number;
  sources: string[];
  leaked: number;
}

function runChecks(env: Record<string, string>): Checks {
  const { command, args } = runtimeCommand(join(root, "tests", "helpers", "ring-checks.ts"));
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 120_000, env: { ...process.env, DOCA_SIM_DIR: simDir, ...env } });
  assert.equal(r.status, 0, `ring-checks failed (${r.status})\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Checks;
}

describe("completion ring: DMA guarantees on both completion paths", () => {
  for (const [label, env, ring] of [["native ring", { DOCA_TS_JS_CALLBACKS: "0" }, true], ["JS callbacks (DOCA_TS_JS_CALLBACKS=1)", { DOCA_TS_JS_CALLBACKS: "1" }, false]] as const) {
    test(`${label}: successes, errors with their status, flush on stop, no leak`, { timeout: 180_000 }, () => {
      const c = runChecks(env);
      assert.equal(c.ring, ring, ring ? "the ring should be in use" : "DOCA_TS_JS_CALLBACKS=1 must force the fallback");
      assert.equal(c.copied, true, "every 64-byte chunk copied through 16 reused tasks");
      assert.equal(c.batchCopied, true, "memcpyBatch rounds with re-armed tasks copied every byte");
      assert.equal(c.first, "fulfilled");
      assert.equal(c.errorName, "DOCA_ERROR_NOT_PERMITTED");
      assert.equal(c.errorFn, "doca_dma_task_memcpy");
      assert.equal(c.after, "fulfilled", "a task that failed is reused for the next copy");
      assert.equal(c.flushed.length, 16);
      for (const f of c.flushed) assert.match(f, /^DOCA_ERROR_/, "every copy in flight at close rejects with DOCA's flush status");
      assert.equal(c.batchError, "DOCA_ERROR_NOT_PERMITTED");
      assert.equal(c.batchCounting, ring ? "counted" : "per-task", "with the ring, batches settle as counted groups");
      assert.equal(c.groupError, "DOCA_ERROR_NOT_PERMITTED", "a batch beyond the tasks with a failing member rejects with its status");
      assert.equal(c.groupChecks, true, "every other pair copied; the tasks then serve clean, concurrent and single copies");
      assert.equal(c.repeatChecks, true, "repeated batches copy what their pairs say now, on two Dmas alternating");
      assert.match(c.closedInBatch, /closed/, "a Buf closed since the last round is refused");
      assert.equal(c.idleAfterBatch, 0, "a fresh engine's first batch leaves nothing keeping its pump running");
      assert.match(c.batchAtClose, /^DOCA_ERROR_|closed while/, "a batch in flight at close rejects");
      assert.deepEqual(
        c.sources,
        ring ? ["ring", "js", "ring"] : ["js", "js", "js"],
        "a context the ring cannot take uses JS callbacks (and copies); a closed context returns its ring entries",
      );
      assert.equal(c.leaked, 0, "no DOCA object left behind (kept tasks freed at stop)");
    });
  }
});
