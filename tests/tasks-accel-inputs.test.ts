/**
 * The accelerator tasks' inputs and outputs (issue 30): a FIFO as input, key file or manifest is refused at once
 * (open(2) of a FIFO used to block the task, and its stop handlers with it); a manifest behind /dev/zero is refused
 * unread; a taken output name (a dangling symbolic link too) is said before any work, in the task's own words, never
 * as dma-copy's "appeared during the copy".
 */
import "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { pattern } from "./helpers/sim-env.ts";

const task = (name: string) => join(repoRoot, "tasks", `${name}.ts`);
const dir = mkdtempSync(join(tmpdir(), "doca-ts-accel-inputs-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);
writeFileSync(at("plain"), pattern(5000, 1));
writeFileSync(at("key"), `${"ab".repeat(32)}\n`, { mode: 0o600 });
spawnSync("mkfifo", [at("fifo")]);
symlinkSync(join(dir, "nowhere"), at("dangling"));

/** Runs a task that must end by itself well within its limit (a hang is killed and fails the test). */
async function run(name: string, args: string[]) {
  return await startChild(task(name), args, { INIT_CWD: dir }, 60_000).done;
}

describe("accelerator tasks: inputs that are not regular files", () => {
  const inputs: [string, string[]][] = [
    ["compress", ["fifo"]],
    ["decompress", ["fifo", "-o", "out"]],
    ["sha", ["fifo"]],
    ["encrypt", ["-i", "fifo", "-o", "enc", "-k", "key"]],
    ["decrypt", ["-i", "fifo", "-o", "dec", "-k", "key"]],
    ["ec-encode", ["-i", "fifo", "-o", "blocks"]],
  ];
  for (const [name, args] of inputs) {
    test(`${name}: a FIFO as input is refused at once, saying so`, { timeout: 90_000 }, async () => {
      const r = await run(name, args);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /fifo is a pipe or FIFO: only a regular file is accepted/);
    });
  }

  test("encrypt: a FIFO as key file is refused for its type before it is opened (exit 2)", { timeout: 90_000 }, async () => {
    const r = await run("encrypt", ["-i", "plain", "-o", "enc", "-k", "fifo"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--key: .*fifo is a pipe or FIFO: a key file must be a regular file/);
  });

  test("ec-recover: a manifest that is /dev/zero or a FIFO is refused unread", { timeout: 90_000 }, async () => {
    for (const [folder, make] of [["zero", (p: string) => symlinkSync("/dev/zero", p)], ["pipe", (p: string) => spawnSync("mkfifo", [p])]] as const) {
      mkdirSync(at(folder));
      make(join(at(folder), "manifest.json"));
      const r = await run("ec-recover", ["-i", folder, "-o", `${folder}.out`]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /manifest\.json is (a character device|a pipe or FIFO): only a regular file is accepted/);
    }
  });
});

describe("accelerator tasks: a taken output name is said before any work", () => {
  // The input is missing: a task that looked at its output name only after its work would complain about the input.
  const outputs: [string, string[], RegExp][] = [
    ["compress", ["missing", "-o", "dangling"], /dangling exists \(a symbolic link\): refusing to replace it/],
    ["sha", ["missing", "-o", "dangling"], /dangling exists \(a symbolic link\): refusing to replace it/],
    ["encrypt", ["-i", "missing", "-o", "dangling", "-k", "key"], /a symbolic link of that name already exists \(encrypt never replaces/],
    ["decrypt", ["-i", "missing", "-o", "plain", "-k", "key"], /a file of that name already exists \(decrypt never replaces/],
    ["ec-encode", ["-i", "missing", "-o", "dangling"], /a symbolic link of that name already exists \(ec-encode never replaces/],
    ["ec-recover", ["-i", "missing", "-o", "plain"], /a file of that name already exists \(ec-recover never replaces/],
  ];
  for (const [name, args, message] of outputs) {
    test(`${name}: -o ${args[args.indexOf("-o") + 1]} taken, the input missing: the output is named`, { timeout: 90_000 }, async () => {
      const r = await run(name, args);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /appeared during|received copy/);
    });
  }
});

describe("accelerator tasks: a folder as the output is a usage error before any work, --force or not", () => {
  mkdirSync(at("adir"));
  // The input is missing: a task that looked at its output only after its work would complain about the input.
  const outputs: [string, string[]][] = [
    ["compress", ["missing", "-o", "adir"]],
    ["decompress", ["missing.gz", "-o", "adir"]],
    ["sha", ["missing", "-o", "adir"]],
    ["encrypt", ["-i", "missing", "-o", "adir", "-k", "key"]],
    ["decrypt", ["-i", "missing", "-o", "adir", "-k", "key"]],
    ["ec-recover", ["-i", "missing", "-o", "adir"]],
  ];
  for (const [name, args] of outputs) {
    const forced = ["compress", "decompress", "sha"].includes(name) ? [[], ["-f"]] : [[]];
    for (const force of forced) {
      test(`${name} ${[...args, ...force].join(" ")}: exit 2 naming -o/--output`, { timeout: 90_000 }, async () => {
        const r = await run(name, [...args, ...force]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`^${name}: error: -o/--output: \\S*adir is a folder, not a file: the output must be a file name`));
        assert.match(r.stderr, /\(see --help\)/);
        // the rule after it names only a flag the task has (issue 32 n1 item 3: rdma-copy spoke of --force)
        if (forced.length === 1) assert.match(r.stderr, new RegExp(`\\(${name} never replaces anything\\)`));
        if (forced.length === 1) assert.doesNotMatch(r.stderr, /--force/);
      });
    }
  }
  test("compress -f onto a folder with a real input: nothing is written, the folder stays", { timeout: 90_000 }, async () => {
    const r = await run("compress", ["plain", "-o", "adir", "-f"]);
    assert.equal(r.code, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /EISDIR/);
    assert.ok(existsSync(join(at("adir"), ".")));
  });
});

describe("accelerator tasks: a killed run's leftovers", () => {
  // a pid that cannot be alive, files last written an hour ago (a fresh one may be a run in another pid namespace)
  const dead = (name: string, folder = false) => {
    const path = at(`.${name}.doca-ts-999999999-dead1.part`);
    if (folder) mkdirSync(path);
    else writeFileSync(path, "partial");
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(path, hourAgo, hourAgo);
    return path;
  };
  const cases: [string, string[], string, boolean][] = [
    ["compress", ["plain", "-o", "swept.gz"], "swept.gz", false],
    ["encrypt", ["-i", "plain", "-o", "swept.enc", "-k", "key"], "swept.enc", false],
    ["ec-encode", ["-i", "plain", "-o", "swept.blocks"], "swept.blocks", true],
  ];
  for (const [name, args, output, folder] of cases) {
    test(`${name}: the next run in that folder removes a dead run's .${output}.doca-ts-PID-*.part and says so`, { timeout: 90_000 }, async () => {
      const path = dead(output, folder);
      const r = await run(name, args);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^${name}: removed \\.${output.replace(".", "\\.")}\\.doca-ts-999999999-dead1\\.part, the temporary file of a dead run`, "m"));
      assert.equal(existsSync(path), false);
    });
  }
});
