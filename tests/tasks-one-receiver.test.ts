/**
 * One receiver per target: a second copy aiming at a name another copy is writing fails at once naming the first
 * (the lock next to the temporary file), an abandoned lock (process gone, not refreshed) is taken over, and the final
 * rename never replaces a file that appeared under the name meanwhile.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readlinkSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { LOCK_ABANDONED_MS, lockName, publishWithoutReplacing, TargetLock, temporaryName } from "../tasks/transfer/atomic-file.ts";
import { startChild } from "../tasks/common/run-pair.ts";
import { runPlace } from "../tasks/transfer/run-place.ts";
import { DPU_PCI, HOST_PCI, sha256File, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const space = (tag: string) => (spaces.push(workspace(tag)), spaces.at(-1)!);
const script = new URL("../tasks/dma-copy.ts", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pid that is certainly not running: a child that has exited. */
function deadPid(): number {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

describe("the target lock", () => {
  test("a second lock on the same name fails naming the holder; after release it is free", () => {
    const w = space("lock");
    const target = join(w.dpu, "f.bin");
    const first = TargetLock.acquire(target, ".f.bin.tmp");
    try {
      assert.throws(() => TargetLock.acquire(target, ".f.bin.tmp2"), new RegExp(`another copy is writing it \\(process ${process.pid} since .*writing \\.f\\.bin\\.tmp;`));
      assert.throws(() => TargetLock.checkFree(target), /another copy is writing it/);
    } finally {
      first.release();
    }
    assert.deepEqual(w.list(w.dpu), []);
    TargetLock.acquire(target, "x").release();
  });

  test("a lock from elsewhere (it does not say where) whose process looks gone is taken over once nobody refreshed it for 3 s, not before; its temporary file goes", () => {
    const w = space("lock-dead");
    const target = join(w.dpu, "f.bin");
    const lock = join(w.dpu, lockName(target));
    const pid = deadPid();
    const temporary = temporaryName(target, pid);
    const partial = join(w.dpu, temporary);
    writeFileSync(partial, "half of a copy");
    writeFileSync(lock, `pid ${pid}\ntemporary ${temporary}\nsince 2020-01-01T00:00:00Z\n`);
    assert.throws(() => TargetLock.acquire(target, "y"), /another copy is writing it/, "fresh: may be another pid namespace");
    const old = new Date(Date.now() - (LOCK_ABANDONED_MS + 1000));
    utimesSync(lock, old, old);
    const taken = TargetLock.acquire(target, "y");
    assert.match(readFileSync(lock, "utf8"), new RegExp(`^pid ${process.pid}\n`));
    assert.equal(existsSync(partial), false, "the dead run's temporary file is removed with its lock");
    taken.release();
    assert.ok(LOCK_ABANDONED_MS <= 5_000, "recognised within seconds, not 30 s");
  });

  test("a lock written here (this boot and pid namespace) whose process is gone is taken over at once, saying so (issue 32 item 4)", () => {
    const place = runPlace();
    assert.ok(place, "this machine's boot and pid namespace can be read");
    const w = space("lock-dead-here");
    const target = join(w.dpu, "f.bin");
    const lock = join(w.dpu, lockName(target));
    const pid = deadPid();
    const temporary = temporaryName(target, pid);
    assert.ok(temporary.includes(`-${place}-`), temporary);
    writeFileSync(join(w.dpu, temporary), "half of a copy");
    writeFileSync(lock, `pid ${pid}\ntemporary ${temporary}\nsince ${new Date().toISOString()}\nplace ${place}\n`);
    TargetLock.checkFree(target); // fresh mtime, yet free: the probe here is the last word
    const taken = TargetLock.acquire(target, "y");
    assert.match(readFileSync(lock, "utf8"), new RegExp(`^pid ${process.pid}\n(.*\n)*place ${place}\n`));
    assert.equal(existsSync(join(w.dpu, temporary)), false, "the dead run's temporary file is removed with its lock");
    taken.release();
  });

  test("a fresh lock of a dead-looking pid from another pid namespace, or of a live pid here, still counts", () => {
    const w = space("lock-elsewhere");
    const target = join(w.dpu, "f.bin");
    const lock = join(w.dpu, lockName(target));
    writeFileSync(lock, `pid ${deadPid()}\ntemporary x\nsince ${new Date().toISOString()}\nplace 00000000\n`);
    assert.throws(() => TargetLock.acquire(target, "y"), /another copy is writing it/);
    const live = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      writeFileSync(lock, `pid ${live.pid}\ntemporary x\nsince ${new Date().toISOString()}\nplace ${runPlace()}\n`);
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(lock, old, old);
      assert.throws(() => TargetLock.acquire(target, "y"), new RegExp(`another copy is writing it \\(process ${live.pid} `));
    } finally {
      live.kill("SIGKILL");
    }
  });

  test("the rename never replaces a file that appeared under the target name", () => {
    const w = space("noreplace");
    const target = join(w.dpu, "f.bin");
    const temp = join(w.dpu, ".f.bin.part");
    writeFileSync(temp, "received");
    writeFileSync(target, "someone else's");
    assert.throws(() => publishWithoutReplacing(temp, target), /appeared during the copy .*not replaced/);
    assert.equal(readFileSync(target, "utf8"), "someone else's");
    const other = join(w.dpu, "g.bin");
    publishWithoutReplacing(temp, other);
    assert.equal(readFileSync(other, "utf8"), "received");
    assert.ok(!existsSync(temp));
  });
});

test("two receivers, one target: the second fails at once naming the first; the first completes", async () => {
  const a = space("recv-a");
  const b = space("recv-b");
  const target = join(a.dpu, "f.bin");
  // 32 MiB in 8 KiB chunks, one slot: thousands of round trips, so the first copy still holds the lock when the
  // second process has started, even on a loaded machine where starting a runtime takes seconds
  const expect = writePatternFile(join(a.host, "f.bin"), 32 * 1024 * 1024, 5);
  const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "60", "--quiet"];
  const dpu = startChild(script, ["--side", "dpu", "-f", target, "-p", DPU_PCI, "-r", HOST_PCI, ...paced], { ...a.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 180_000);
  await dpu.waitForStderr("waiting for the host", 90_000);
  const host = startChild(script, ["--side", "host", "-f", join(a.host, "f.bin"), "-p", HOST_PCI, ...paced], a.env, 180_000);
  const lock = join(a.dpu, lockName(target));
  for (let i = 0; i < 6000 && !existsSync(lock); i++) await sleep(10);
  assert.ok(existsSync(lock), "the first receiver holds the lock while it writes");
  // The second receiver: a host without the file, aiming at the same name (its own software device, no peer needed).
  const second = await startChild(script, ["--side", "host", "-f", target, "-p", HOST_PCI, "--timeout", "60"], b.env, 90_000).done;
  assert.equal(second.code, 1, second.stderr);
  assert.match(second.stderr, /cannot create .*f\.bin: another copy is writing it \(process \d+/);
  assert.doesNotMatch(second.stderr, /could not reach|waiting for/, "failed before connecting");
  const [h, d] = await Promise.all([host.done, dpu.done]);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(h.code, 0, h.stderr);
  assert.equal(sha256File(target), expect);
  assert.deepEqual(a.list(a.dpu), ["f.bin"], "no lock or temporary file left");
});

test("a receiver killed with SIGKILL mid-copy and started again at once takes over its lock and removes its temporary file, saying so (issue 32 item 4)", { timeout: 300_000 }, async () => {
  const w = space("killed-receiver");
  const target = join(w.dpu, "f.bin");
  const expect = writePatternFile(join(w.host, "f.bin"), 32 * 1024 * 1024, 6);
  const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "60"];
  const dpuArgs = ["--side", "dpu", "-f", target, "-p", DPU_PCI, "-r", HOST_PCI, ...paced];
  const first = startChild(script, [...dpuArgs, "--quiet"], { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 180_000);
  await first.waitForStderr("waiting for the host", 90_000);
  const host1 = startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced, "--quiet"], w.env, 180_000);
  const lock = join(w.dpu, lockName(target));
  // The lock comes first, the temporary file when the transfer starts: kill it once it holds both.
  const writing = () => existsSync(lock) && w.list(w.dpu).some((n) => n.endsWith(".part"));
  for (let i = 0; i < 6000 && !writing(); i++) await sleep(10);
  assert.ok(writing(), `the first receiver holds the lock and writes its temporary file: ${w.list(w.dpu)}`);
  first.kill();
  await first.done;
  await sleep(300);
  const left = w.list(w.dpu);
  assert.equal(left.length, 2, `SIGKILL leaves the lock and the temporary file: ${left}`);
  // Before: "another copy is writing it (process N …)", exit 1, naming the dead receiver.
  const second = startChild(script, dpuArgs, { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 180_000);
  await second.waitForStderr("waiting for the host", 90_000);
  await host1.done; // lost its receiver
  const host2 = await startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced, "--quiet"], w.env, 180_000).done;
  const d = await second.done;
  assert.equal(d.code, 0, d.stderr);
  assert.equal(host2.code, 0, host2.stderr);
  const temporary = left.find((n) => n.endsWith(".part"))!;
  // one line, as tasks/README promises (it was two: the sweep's "removed …" and the lock's "took over …")
  assert.match(d.stderr, new RegExp(`dma-copy: DPU side: took over the lock of .*f\\.bin from process \\d+, which is gone and removed its temporary file ${temporary.replaceAll(".", "\\.")}`));
  assert.doesNotMatch(d.stderr, /the temporary file of a dead run/);
  assert.doesNotMatch(d.stderr, /another copy is writing it/);
  assert.equal(sha256File(target), expect);
  assert.deepEqual(w.list(w.dpu), ["f.bin"], "no lock or temporary file left");
});

test("a name that is taken (here a dangling symbolic link) is never replaced: the DPU refuses before the transfer and the host hears why", async () => {
  const w = space("taken");
  writePatternFile(join(w.host, "f.bin"), 100_000);
  symlinkSync(join(w.dpu, "nowhere"), join(w.dpu, "f.bin"));
  const dpu = startChild(script, ["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "30"], { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" }, 90_000);
  await dpu.waitForStderr("waiting for the host", 60_000);
  const host = await startChild(script, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, "--timeout", "30"], w.env, 90_000).done;
  const d = await dpu.done;
  assert.equal(d.code, 1, d.stderr);
  assert.match(d.stderr, /a symbolic link of that name already exists \(a copy never replaces anything/);
  assert.notEqual(host.code, 0);
  assert.match(host.stderr, /the DPU refused the copy: DPU: .*already exists/, host.stderr);
  assert.equal(readlinkSync(join(w.dpu, "f.bin")), join(w.dpu, "nowhere"), "the link is untouched");
});
