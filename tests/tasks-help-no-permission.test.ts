/**
 * --help and a bad flag need no Deno permission (issue 32 #12): `deno run --no-prompt tasks/X.ts --help` printed
 * "this program needs Deno's --allow-env" (exit 1) because runMain read DOCA_* before the task parsed its flags; a
 * real run without the permission still fails naming the flag. Deno only: Bun and Node have no permissions.
 * Started with Deno.Command, not node:child_process: Deno's spawn of its own executable ran the child with the
 * parent's permissions (the test passed without the fix).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { repoRoot } from "../tasks/common/run-pair.ts";

const skip = currentRuntime() === "deno" ? false : "Deno's permissions only";
const tasks = readdirSync(join(repoRoot, "tasks")).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && readFileSync(join(repoRoot, "tasks", f), "utf8").startsWith("#!"));

interface DenoCommand {
  Command: new (cmd: string, opts: { args: string[]; cwd: string; signal: AbortSignal }) => { output(): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array }> };
  execPath(): string;
}

/** `deno run --no-prompt tasks/FILE ARGS` with no permission at all. */
async function bare(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const deno = (globalThis as unknown as { Deno: DenoCommand }).Deno;
  const out = await new deno.Command(deno.execPath(), {
    args: ["run", "--no-prompt", join(repoRoot, "tasks", file), ...args],
    cwd: repoRoot,
    signal: AbortSignal.timeout(100_000),
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

describe("tasks without any Deno permission", () => {
  test("--help prints the usage (exit 0) and a bad flag is a usage error (exit 2), in every task", { skip, timeout: 600_000 }, async () => {
    assert.ok(tasks.length >= 15, tasks.join(" "));
    for (const file of tasks) {
      const name = file.replace(/\.ts$/, "");
      const help = await bare(file, ["--help"]);
      assert.equal(help.code, 0, `${name} --help: ${help.stderr}`);
      assert.match(help.stdout, new RegExp(`^Usage: ${name} `), name);
      const bad = await bare(file, ["--no-such-flag"]);
      assert.equal(bad.code, 2, `${name} --no-such-flag: ${bad.stderr}`);
      assert.match(bad.stderr, new RegExp(`^${name}: error: .*no-such-flag`), name);
    }
  });

  test("a real run still fails with one line naming the missing flag", { skip, timeout: 120_000 }, async () => {
    const r = await bare("devices.ts", []);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^devices: error: this program needs Deno's --allow-env/);
  });
});
