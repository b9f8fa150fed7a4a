/**
 * tasks/README.md's stopOnSignals() example, taken from the README itself (issue 32 item 6): the block is written to a
 * scratch module with only its import path and target file changed, run by the runtime running this test as a user
 * would run it, as the receiving (DPU) side of a paced copy, and sent SIGINT mid-copy. It must end as a task does:
 * exit 130, one "interrupted" line and no stack trace, no temporary file or lock left, the host told why.
 * The block runs with no environment the README does not tell the user to set: no DOCA_SIM_SIDE (its `--side dpu`
 * must be enough, issue 32 n1 item 1), only DOCA_SIM_DIR to keep the test's software device apart.
 */
import { after, test } from "node:test";
import process from "node:process";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { HOST_PCI, untilItStays, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
// The children inherit this process's environment: a DOCA_SIM_SIDE here would do the block's work for it
delete process.env.DOCA_SIM_SIDE;

/** The ```ts block of tasks/README.md that calls stopOnSignals(). */
/** The block as a module of `dir`, importing this repository's tasks and writing `target` (nothing else changed). */
function writeExample(dir: string, example: string, target: string, replace: (block: string) => string = (b) => b): string {
  const script = join(dir, "stop-example.mts");
  writeFileSync(
    script,
    replace(example)
      .replaceAll(`from "doca-ts/tasks"`, `from "${pathToFileURL(join(repoRoot, "tasks", "mod.ts")).href}"`)
      .replaceAll(`"/tmp/received.bin"`, JSON.stringify(target)),
  );
  return script;
}

function stopExample(): string {
  const readme = readFileSync(join(repoRoot, "tasks", "README.md"), "utf8");
  const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes("stopOnSignals()"));
  assert.ok(block, "tasks/README.md has a ts block calling stopOnSignals()");
  return block;
}

test("tasks/README's stopOnSignals() example, SIGINT mid-copy: exit 130, one line, no trace, nothing left", { timeout: 180_000 }, async () => {
  const example = stopExample();
  assert.match(example, /from "doca-ts\/tasks"/);
  assert.match(example, /"\/tmp\/received\.bin"/);
  const w = workspace("readme-stop");
  spaces.push(w);
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-readme-stop-"));
  try {
    const target = join(w.dpu, "received.bin");
    const script = writeExample(dir, example, target);
    writePatternFile(join(w.host, "f.bin"), 16 << 20);
    const dpu = startChild(script, [], w.env, 120_000);
    await dpu.waitForStderr("waiting for the host", 60_000);
    const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "20", "--quiet"];
    const host = startChild(join(repoRoot, "tasks", "dma-copy.ts"), ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced], { ...w.env, DOCA_SIM_SIDE: "host" }, 120_000);
    const writing = await untilItStays(() => readdirSync(w.dpu).length > 0, { timeoutMs: 60_000 });
    assert.ok(writing, "the copy never started writing");
    dpu.signal!("SIGINT");
    const [d, h] = await Promise.all([dpu.done, host.done]);
    assert.equal(d.code, 130, `${d.stderr}\nhost: ${h.stderr}`);
    assert.equal(d.stderr.trim().split("\n").filter((l) => l.includes("interrupted")).length, 1, d.stderr);
    assert.match(d.stderr, /interrupted \(SIGINT\) while /);
    assert.doesNotMatch(d.stderr, /Uncaught|^\s+at |InterruptedError:/m, d.stderr);
    assert.ok(!d.stderr.includes("\u001b["), `no colour codes: ${d.stderr}`);
    assert.deepEqual(readdirSync(w.dpu), [], "no file, no temporary file, no lock");
    assert.notEqual(h.code, 0, h.stderr);
    assert.match(h.stderr, /interrupted \(SIGINT\)/, "the host is told why");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("tasks/README's stopOnSignals() example, a failure other than a stop: one line, exit 1, no trace", { timeout: 120_000 }, async () => {
  const example = stopExample();
  assert.match(example, /"b1:00\.1"/);
  const w = workspace("readme-stop-fail");
  spaces.push(w);
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-readme-stop-"));
  try {
    // A representor this device does not have: the copy fails before any peer, as a typo would make it fail
    const script = writeExample(dir, example, join(w.dpu, "received.bin"), (b) => b.replaceAll(`"b1:00.1"`, `"b1:00.7"`));
    const d = await startChild(script, [], w.env, 100_000).done;
    assert.equal(d.code, 1, d.stderr);
    assert.equal(d.stderr.trim().split("\n").length, 1, d.stderr);
    assert.match(d.stderr, /b1:00\.7/);
    assert.doesNotMatch(d.stderr, /Uncaught|^\s+at |Error:/m, d.stderr);
    assert.deepEqual(readdirSync(w.dpu), [], "no file, no temporary file, no lock");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
