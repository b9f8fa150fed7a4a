/**
 * What the accelerator tasks report (attack s7): every one that moves data gives --json's `bytesPerSecond`, the
 * same rate as its summary line (F7: compress and decompress over the uncompressed bytes, encrypt and decrypt over
 * the plaintext, ec-encode and ec-recover over the file); encrypt and decrypt both report the plaintext's size
 * (decrypt said the ciphertext's); and a task whose stdout nobody reads (`--json … | head -0`) exits 141 with its
 * output committed and says so on stderr (F5: the line was dropped with stdout).
 */
import "./helpers/sim-env.ts";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot, runtimeCommand } from "../tasks/common/run-pair.ts";
import { withTempDir } from "./helpers/tasks/workspace.ts";
import { pattern } from "./helpers/sim-env.ts";
import { ok, task } from "./helpers/tasks/run-task.ts";

const TIMEOUT = 180_000;
const withDir = (fn: (dir: string) => Promise<void>) => withTempDir("reports", fn);

/**
 * `bytesPerSecond` is a whole number and `bytes` over `seconds`: seconds is rounded to the millisecond in JSON, so
 * the rate lies between bytes over seconds ± 0.5 ms (and 1 for its own rounding).
 */
function assertRate(report: { seconds: number; bytesPerSecond: number }, bytes: number, what: string): void {
  const { seconds, bytesPerSecond } = report;
  assert.ok(Number.isInteger(bytesPerSecond) && bytesPerSecond > 0, `${what}: bytesPerSecond ${bytesPerSecond}`);
  assert.ok(seconds > 0, `${what}: seconds ${seconds}`);
  const high = seconds > 0.0005 ? bytes / (seconds - 0.0005) + 1 : Infinity;
  const low = bytes / (seconds + 0.0005) - 1;
  assert.ok(bytesPerSecond >= low && bytesPerSecond <= high, `${what}: bytesPerSecond ${bytesPerSecond} is not ${bytes} B over ${seconds} s`);
}

/** `TASK args… | head -0` under bash: the task's own exit status and its stderr. */
function intoHeadZero(name: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const cmd = runtimeCommand(task(name), args);
  const quoted = [cmd.command, ...cmd.args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const child = spawn("bash", ["-c", `${quoted} | head -0; exit "\${PIPESTATUS[0]}"`], { cwd: repoRoot, env: process.env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  return new Promise((resolve) => child.on("close", (code) => (clearTimeout(killer), resolve({ code, stderr }))));
}

const SIZE = 3 * 1024 * 1024 + 77;

describe("tasks: what the accelerator tasks report", () => {
  test("--json: bytesPerSecond on compress, decompress, encrypt, decrypt, ec-encode, ec-recover, as their lines' rate", { timeout: TIMEOUT }, withDir(async (dir) => {
    const input = join(dir, "in");
    writeFileSync(input, pattern(SIZE, 5));
    const key = join(dir, "key");
    await ok("encrypt.ts", ["--generate-key", key], {});
    const json = async (name: string, args: string[]) => JSON.parse(await ok(name, [...args, "--json"], {}));
    assertRate(await json("compress.ts", [input, "-o", join(dir, "in.gz")]), SIZE, "compress");
    assertRate(await json("decompress.ts", [join(dir, "in.gz"), "-o", join(dir, "back")]), SIZE, "decompress");
    const enc = await json("encrypt.ts", ["-i", input, "-o", join(dir, "in.enc"), "-k", key]);
    assert.equal(enc.plaintextBytes, SIZE);
    assertRate(enc, SIZE, "encrypt");
    const dec = await json("decrypt.ts", ["-i", join(dir, "in.enc"), "-o", join(dir, "plain"), "-k", key]);
    assert.equal(dec.plaintextBytes, SIZE);
    assertRate(dec, SIZE, "decrypt");
    assertRate(await json("ec-encode.ts", ["-i", input, "-o", join(dir, "blocks")]), SIZE, "ec-encode");
    assertRate(await json("ec-recover.ts", ["-i", join(dir, "blocks"), "-o", join(dir, "rebuilt")]), SIZE, "ec-recover");
    // ec-recover's line gives its rate too, as the others' do
    const line = await ok("ec-recover.ts", ["-i", join(dir, "blocks"), "-o", join(dir, "rebuilt2")], {});
    assert.match(line, /no block lost, (\d+(\.\d+)? [KMG]?i?B\/s|-)$/m, line);
  }));

  test("encrypt and decrypt report the plaintext's size: an empty file is 0 B both ways, in the line and the JSON", { timeout: TIMEOUT }, withDir(async (dir) => {
    const key = join(dir, "key");
    await ok("encrypt.ts", ["--generate-key", key], {});
    writeFileSync(join(dir, "empty"), new Uint8Array(0));
    const e = await ok("encrypt.ts", ["-i", join(dir, "empty"), "-o", join(dir, "empty.enc"), "-k", key], {});
    assert.match(e, /: 0 B in 1 chunk\(s\)/, e);
    const d = await ok("decrypt.ts", ["-i", join(dir, "empty.enc"), "-o", join(dir, "back"), "-k", key], {});
    assert.match(d, /^decrypt: decrypted .*: 0 B in 1 chunk\(s\)/m, d);
    const j = JSON.parse(await ok("decrypt.ts", ["-i", join(dir, "empty.enc"), "-o", join(dir, "back2"), "-k", key, "--json"], {}));
    assert.equal(j.plaintextBytes, 0);
    assert.equal(j.outputBytes, 0);
    assert.equal(j.inputBytes, 44); // header and one tag: the ciphertext, under its own name
  }));

  test("`--json … | head -0`: exit 141, the output committed, and one line on stderr saying so", { timeout: TIMEOUT }, withDir(async (dir) => {
    const input = join(dir, "in");
    writeFileSync(input, pattern(100_000, 6));
    const key = join(dir, "key");
    await ok("encrypt.ts", ["--generate-key", key], {});
    const cases: [string, string[], string][] = [
      ["compress.ts", [input, "-o", join(dir, "in.gz")], join(dir, "in.gz")],
      ["decompress.ts", [join(dir, "in.gz"), "-o", join(dir, "back")], join(dir, "back")],
      ["encrypt.ts", ["-i", input, "-o", join(dir, "in.enc"), "-k", key], join(dir, "in.enc")],
      ["decrypt.ts", ["-i", join(dir, "in.enc"), "-o", join(dir, "plain"), "-k", key], join(dir, "plain")],
      ["ec-encode.ts", ["-i", input, "-o", join(dir, "blocks")], join(dir, "blocks")],
      ["ec-recover.ts", ["-i", join(dir, "blocks"), "-o", join(dir, "rebuilt")], join(dir, "rebuilt")],
      ["sha.ts", [input, "-o", join(dir, "list")], join(dir, "list")],
    ];
    for (const [name, args, output] of cases) {
      const r = await intoHeadZero(name, [...args, "--json"]);
      const speaker = name.replace(/\.ts$/, "");
      assert.equal(r.code, 141, `${speaker}: ${r.stderr}`);
      assert.ok(existsSync(output), `${speaker}: its output ${output} is committed`);
      const lines = r.stderr.trim().split("\n");
      assert.deepEqual(lines, [`${speaker}: interrupted (SIGPIPE: stdout closed): finished before the stop took effect (its output is complete)`], r.stderr);
    }
    // a task without a file of its own says it was stopped, the same way
    const devices = await intoHeadZero("devices.ts", ["--json"]);
    assert.equal(devices.code, 141, devices.stderr);
    assert.match(devices.stderr, /^devices: interrupted \(SIGPIPE: stdout closed\)/m, devices.stderr);
  }));
});
