/**
 * tasks/README.md's stopOnSignals() example, taken from the README itself (issue 32 item 6): the block is written to a
 * scratch module with only its import path and target file changed, run by the runtime running this test as a user
 * would run it, as the receiving (DPU) side of a paced copy, and sent SIGINT mid-copy. It must end as a task does:
 * exit 130, one "interrupted" line and no stack trace, no temporary file or lock left, the host told why.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { HOST_PCI, untilItStays, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));

/** The ```ts block of tasks/README.md that calls stopOnSignals(). */
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
    const script = join(dir, "stop-example.mts");
    writeFileSync(
      script,
      example
        .replaceAll(`from "doca-ts/tasks"`, `from "${pathToFileURL(join(repoRoot, "tasks", "mod.ts")).href}"`)
        .replaceAll(`"/tmp/received.bin"`, JSON.stringify(target)),
    );
    writePatternFile(join(w.host, "f.bin"), 16 << 20);
    const dpu = startChild(script, [], { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, 120_000);
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
