/**
 * The receiver's file flushes to disk while the copy runs (so the final fsync does not write the whole file while
 * the transfer waits): a flush in flight keeps its fd open until it settles, whether the file is committed or
 * aborted meanwhile, and what lands under the name is every byte written. A lock whose owner was killed but not yet
 * reaped (a zombie) is taken over like any lock of a process that is gone.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { AtomicFile, lockName, removeStaleTemporaries, TargetLock, temporaryName } from "../tasks/transfer/atomic-file.ts";
import { runPlace } from "../tasks/transfer/run-place.ts";
import { type Workspace, workspace } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const space = (tag: string) => (spaces.push(workspace(tag)), spaces.at(-1)!);

/** How many of this process's fds point at `path` (an unlinked file shows as "PATH (deleted)"). */
function fdsOn(path: string): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)) n++;
    } catch { /* the fd of the listing itself, gone */ }
  }
  return n;
}

/** Waits (event loop turns, 10 s at most) until `check` holds; fails loudly otherwise. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`still not ${what} after 10 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("AtomicFile background flush", { skip: !existsSync("/proc/self/fd") && "needs /proc/self/fd" }, () => {
  test("an abort while a flush runs removes the file at once and closes its fd when the flush settles", async () => {
    const w = space("flush-abort");
    const file = AtomicFile.create(join(w.dpu, "f.bin"), 1);
    await file.writeAtAsync(new Uint8Array(4096).fill(7), 0);
    // The flush started after the write; its completion cannot have run yet (no event-loop turn since).
    file.abort();
    assert.deepEqual(w.list(w.dpu), [], "temporary file and lock gone at once");
    // Deno's node:fs holds a second fd of its own during the flush; ours must be one of them.
    assert.ok(fdsOn(file.tempPath) >= 1, "the fd stays open while the flush it was given runs");
    await until(() => fdsOn(file.tempPath) === 0, "closed");
  });

  test("commit waits for the flush in flight; every byte written lands under the name", async () => {
    const w = space("flush-commit");
    const target = join(w.dpu, "f.bin");
    const file = AtomicFile.create(target, 1000);
    const chunk = (i: number) => new Uint8Array(1500).fill(i + 1);
    for (let i = 0; i < 8; i++) await file.writeAtAsync(chunk(i), i * 1500);
    await file.commit();
    assert.equal(fdsOn(file.tempPath), 0);
    const got = readFileSync(target);
    assert.equal(got.length, 8 * 1500);
    for (let i = 0; i < 8; i++) assert.ok(got.subarray(i * 1500, (i + 1) * 1500).every((b) => b === i + 1), `chunk ${i}`);
    assert.deepEqual(w.list(w.dpu), ["f.bin"]);
  });
});

describe("a dead run's temporary file (issue 32 item 5)", () => {
  test("written here (this boot and pid namespace) by a process that is gone: removed at once; from elsewhere: kept while fresh; a live owner's: kept", { timeout: 30_000 }, () => {
    const w = space("stale-here");
    const dead = Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
    const here = temporaryName(join(w.dpu, "a.bin"), dead);
    const elsewhere = temporaryName(join(w.dpu, "b.bin"), dead, "r", "00000000");
    const unsaid = temporaryName(join(w.dpu, "c.bin"), dead, "r", "");
    const mine = temporaryName(join(w.dpu, "d.bin"));
    for (const name of [here, elsewhere, unsaid, mine]) writeFileSync(join(w.dpu, name), "partial");
    const r = removeStaleTemporaries(w.dpu);
    assert.deepEqual(r.removed, [here]);
    assert.deepEqual(r.unknown.sort(), [elsewhere, unsaid].sort());
    assert.deepEqual(r.live, [mine]);
    assert.equal(existsSync(join(w.dpu, here)), false);
  });
});

describe("what a dead run's temporary name holds, when doca-ts did not make it (attack-s4)", () => {
  test("a regular file and ec-encode's folder of blocks go; a folder with other content, a FIFO and a symbolic link stay, each reported with its kind", { timeout: 30_000 }, () => {
    const w = space("stale-kinds");
    const dead = Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
    const name = (tag: string) => temporaryName(join(w.dpu, "o.bin"), dead, tag);
    writeFileSync(join(w.dpu, name("file")), "partial");
    mkdirSync(join(w.dpu, name("ecfolder")));
    writeFileSync(join(w.dpu, name("ecfolder"), "block-000"), "half");
    writeFileSync(join(w.dpu, name("ecfolder"), "manifest.json"), "{}");
    mkdirSync(join(w.dpu, name("folder")));
    writeFileSync(join(w.dpu, name("folder"), "keep"), "precious");
    spawnSync("mkfifo", [join(w.dpu, name("fifo"))]);
    symlinkSync(join(w.dpu, "victim"), join(w.dpu, name("link")));
    writeFileSync(join(w.dpu, "victim"), "someone's");
    const r = removeStaleTemporaries(w.dpu);
    assert.deepEqual(r.removed.sort(), [name("file"), name("ecfolder")].sort());
    assert.deepEqual(
      r.kept.sort((a, b) => a.name.localeCompare(b.name)),
      [
        { name: name("fifo"), kind: "a pipe or FIFO" },
        { name: name("folder"), kind: "a folder holding keep" },
        { name: name("link"), kind: "a symbolic link" },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    assert.equal(readFileSync(join(w.dpu, name("folder"), "keep"), "utf8"), "precious");
    assert.ok(lstatSync(join(w.dpu, name("fifo"))).isFIFO());
    assert.equal(readFileSync(join(w.dpu, "victim"), "utf8"), "someone's");
  });
});

describe("a lock's owner that was killed but not reaped", () => {
  test("a zombie (it answers signal 0) counts as gone: its lock is taken over", { timeout: 60_000 }, async () => {
    // `sleep 0 &` ends at once; its parent then becomes `sleep 20` (exec), which never reaps it: a zombie for 20 s
    const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 20"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once("data", (d) => resolve(String(d).trim()))));
      for (let i = 0; i < 200 && !/\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8")); i++) await new Promise((r) => setTimeout(r, 10));
      assert.match(readFileSync(`/proc/${pid}/stat`, "utf8"), /\) Z /, "the child became a zombie");
      const w = space("zombie");
      const target = join(w.dpu, "out.bin");
      writeFileSync(join(w.dpu, lockName("out.bin")), `pid ${pid}\ntemporary x\nsince 2020-01-01T00:00:00Z\nplace ${runPlace()}\n`);
      TargetLock.checkFree(target); // would throw "another copy is writing it" while the zombie counted as alive
      assert.equal(existsSync(join(w.dpu, lockName("out.bin"))), false, "the lock was taken over");
    } finally {
      parent.kill("SIGKILL");
    }
  });
});
