/**
 * What a stranger can place beside a task's output (issue attack-s4), for every task of the same shape:
 *   - a FIFO (or folder, socket …) at the lock's name `.NAME.doca-ts.lock`: refused at once naming it and its type,
 *     never opened (open(2) of a FIFO blocked encrypt, ec-recover and dma-copy's DPU side beyond Ctrl-C and SIGKILL
 *     only ended them), never removed;
 *   - a folder or a FIFO under a dead run's temporary name: kept, with a line (a folder and its content were removed
 *     as "the temporary file of a dead run");
 *   - a full file system, or a file size limit: the error names the output and says why in words (it was the
 *     runtime's "No space left on device (os error 28)");
 *   - an output that is one of the inputs: a usage error naming both, --force or not (the input was destroyed);
 *   - a dead run's lock and temporary file: taken over in one line, worded by the rule that judged it.
 */
import "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot, runtimeCommand, startChild } from "../tasks/common/run-pair.ts";
import { lockName, temporaryName } from "../tasks/transfer/atomic-file.ts";
import { runPlace } from "../tasks/transfer/run-place.ts";
import { testPort } from "../tools/ports.ts";
import { DPU_PCI, HOST_PCI, pattern } from "./helpers/sim-env.ts";

const task = (name: string) => join(repoRoot, "tasks", `${name}.ts`);
const root = mkdtempSync(join(tmpdir(), "doca-ts-hostile-"));
after(() => rmSync(root, { recursive: true, force: true }));

let folders = 0;
/** A fresh folder with an input file `in.bin` (64 KiB), a key file `key`. */
function folder(): string {
  const dir = join(root, `f${folders++}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "in.bin"), pattern(65536, folders));
  writeFileSync(join(dir, "key"), `${"cd".repeat(32)}\n`, { mode: 0o600 });
  return dir;
}

/** Runs a task in `dir` (relative names resolve there); a hang is killed at 90 s and fails the test. */
async function run(name: string, args: string[], dir: string, env: Record<string, string> = {}) {
  const started = Date.now();
  const r = await startChild(task(name), args, { INIT_CWD: dir, ...env }, 90_000).done;
  return { ...r, seconds: (Date.now() - started) / 1000 };
}

/** A pid that is certainly not running: a child that has exited. */
const deadPid = () => Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());

const isFifo = (path: string) => lstatSync(path).isFIFO();
/** The names in `dir` but the ones given. */
const extra = (dir: string, ...known: string[]) => readdirSync(dir).filter((n) => !known.includes(n)).sort();

describe("a FIFO at the lock's name never hangs a task", () => {
  // A task that hangs is killed at 90 s; one that refuses does so in the time a runtime takes to start (seconds,
  // on two loaded cores), so 45 s tells the two apart without flaking.
  const PROMPT_S = 45;

  const fileTasks: [string, (dir: string) => string[], string][] = [
    ["encrypt", () => ["-i", "in.bin", "-o", "o.enc", "-k", "key"], "o.enc"],
    ["decrypt", () => ["-i", "in.bin", "-o", "o.dec", "-k", "key"], "o.dec"],
  ];
  for (const [name, args, output] of fileTasks) {
    test(`${name}: refused at once naming the lock file and its type; the FIFO stays, nothing else is left`, { timeout: 120_000 }, async () => {
      const dir = folder();
      if (name === "decrypt") await run("encrypt", ["-i", "in.bin", "-o", "in.enc", "-k", "key"], dir).then((r) => assert.equal(r.code, 0, r.stderr));
      const fifo = join(dir, lockName(output));
      spawnSync("mkfifo", [fifo]);
      const r = await run(name, name === "decrypt" ? ["-i", "in.enc", "-o", output, "-k", "key"] : args(dir), dir);
      assert.equal(r.signal, null, `${name} hung and was killed:\n${r.stderr}`);
      assert.ok(r.seconds < PROMPT_S, `${name} took ${r.seconds} s`);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`its lock file \\S*${lockName(output).replaceAll(".", "\\.")} is a pipe or FIFO, not a lock doca-ts makes`));
      assert.ok(isFifo(fifo), "the FIFO is left as it was");
      assert.deepEqual(extra(dir, "in.bin", "key", "in.enc"), [lockName(output)], "no output, no temporary file");
    });
  }

  test("ec-recover: refused at once naming the lock file; the FIFO stays, nothing else is left", { timeout: 180_000 }, async () => {
    const dir = folder();
    const encoded = await run("ec-encode", ["-i", "in.bin", "-o", "blocks"], dir);
    assert.equal(encoded.code, 0, encoded.stderr);
    const fifo = join(dir, lockName("out.bin"));
    spawnSync("mkfifo", [fifo]);
    const r = await run("ec-recover", ["-i", "blocks", "-o", "out.bin"], dir);
    assert.equal(r.signal, null, `ec-recover hung and was killed:\n${r.stderr}`);
    assert.ok(r.seconds < PROMPT_S, `ec-recover took ${r.seconds} s`);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /\.out\.bin\.doca-ts\.lock is a pipe or FIFO, not a lock doca-ts makes/);
    assert.ok(isFifo(fifo));
    assert.deepEqual(extra(dir, "in.bin", "key", "blocks"), [lockName("out.bin")]);
  });

  test("compress (it holds no lock): a FIFO there is neither opened nor touched; the output is written", { timeout: 120_000 }, async () => {
    const dir = folder();
    const fifo = join(dir, lockName("o.gz"));
    spawnSync("mkfifo", [fifo]);
    const r = await run("compress", ["in.bin", "-o", "o.gz"], dir);
    assert.equal(r.signal, null, `compress hung and was killed:\n${r.stderr}`);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(isFifo(fifo));
    assert.deepEqual(extra(dir, "in.bin", "key"), [lockName("o.gz"), "o.gz"].sort());
  });

  test("dma-copy, DPU side receiving: refused before its server starts, naming the lock file; --timeout is not needed", { timeout: 120_000 }, async () => {
    const dir = folder();
    const fifo = join(dir, lockName("dd.bin"));
    spawnSync("mkfifo", [fifo]);
    const sim = mkdtempSync(join(root, "sim-"));
    const r = await run("dma-copy", ["--side", "dpu", "-f", "dd.bin", "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "60"], dir, {
      DOCA_SIM_DIR: sim,
      DOCA_SIM_SIDE: "dpu",
    });
    assert.equal(r.signal, null, `dma-copy hung and was killed:\n${r.stderr}`);
    assert.ok(r.seconds < PROMPT_S, `dma-copy took ${r.seconds} s`);
    assert.notEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /\.dd\.bin\.doca-ts\.lock is a pipe or FIFO, not a lock doca-ts makes/);
    assert.ok(isFifo(fifo));
    assert.deepEqual(extra(dir, "in.bin", "key"), [lockName("dd.bin")]);
  });

  test("encrypt: a folder at the lock's name is named as a folder (not \"another process\"), and kept with its content", { timeout: 120_000 }, async () => {
    const dir = folder();
    const lock = join(dir, lockName("o.enc"));
    mkdirSync(lock);
    writeFileSync(join(lock, "keep"), "precious");
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lock, old, old);
    const r = await run("encrypt", ["-i", "in.bin", "-o", "o.enc", "-k", "key"], dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /\.o\.enc\.doca-ts\.lock is a folder, not a lock doca-ts makes/);
    assert.doesNotMatch(r.stderr, /is writing it|another process \(|process \?/, "not described as a run holding it");
    assert.equal(readFileSync(join(lock, "keep"), "utf8"), "precious");
  });
});

describe("the steps' output files: a FIFO there is a usage error at once, never an open that waits for a reader", () => {
  const cases: [string, string[], string][] = [
    ["steps/export-mmap", ["--length", "4096", "--out", "out.fifo"], "--out"],
    ["steps/dma-transfer", ["--descriptor", "missing.json", "--read", "out.fifo"], "--read"],
    ["steps/exchange-descriptor", ["--receive", "out.fifo", "-r", HOST_PCI, "--length", "4096", "--timeout", "5"], "--receive"],
  ];
  for (const [name, args, flag] of cases) {
    test(`${name} ${flag} FIFO: exit 2 naming the flag; the FIFO stays`, { timeout: 120_000 }, async () => {
      const dir = folder();
      spawnSync("mkfifo", [join(dir, "out.fifo")]);
      const sim = mkdtempSync(join(root, "sim-"));
      const r = await run(name, args, dir, { DOCA_SIM_DIR: sim });
      assert.equal(r.signal, null, `${name} hung and was killed:\n${r.stderr}`);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${flag}: \\S*out\\.fifo is a special file, not a file`));
      assert.ok(isFifo(join(dir, "out.fifo")));
      assert.deepEqual(extra(dir, "in.bin", "key"), ["out.fifo"]);
    });
  }
});

describe("what a dead run's temporary name holds, when doca-ts did not make it, is kept", () => {
  test("encrypt: a folder (with content) and a FIFO under such names stay, each with a line; a regular file goes", { timeout: 120_000 }, async () => {
    const dir = folder();
    const pid = deadPid();
    const asFolder = temporaryName(join(dir, "o.enc"), pid, "aaaa");
    const asFifo = temporaryName(join(dir, "o.enc"), pid, "bbbb");
    const asFile = temporaryName(join(dir, "o.enc"), pid, "cccc");
    mkdirSync(join(dir, asFolder));
    writeFileSync(join(dir, asFolder, "keep"), "precious");
    spawnSync("mkfifo", [join(dir, asFifo)]);
    writeFileSync(join(dir, asFile), "partial");
    const r = await run("encrypt", ["-i", "in.bin", "-o", "o.enc", "-k", "key"], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(dir, asFolder, "keep"), "utf8"), "precious", "the folder and its content stay");
    assert.ok(isFifo(join(dir, asFifo)), "the FIFO stays");
    assert.equal(existsSync(join(dir, asFile)), false, "the dead run's regular temporary file goes");
    assert.match(r.stderr, new RegExp(`^encrypt: kept ${asFolder.replaceAll(".", "\\.")}: .* it is a folder holding keep`, "m"));
    assert.match(r.stderr, new RegExp(`^encrypt: kept ${asFifo.replaceAll(".", "\\.")}: .* it is a pipe or FIFO`, "m"));
    assert.match(r.stderr, new RegExp(`^encrypt: removed ${asFile.replaceAll(".", "\\.")}, the temporary file of a dead run$`, "m"));
  });

  test("ec-encode's own dead temporary folder (blocks and manifest only) still goes", { timeout: 180_000 }, async () => {
    const dir = folder();
    const dead = temporaryName(join(dir, "blocks"), deadPid(), "dddd");
    mkdirSync(join(dir, dead));
    writeFileSync(join(dir, dead, "block-000"), "half");
    writeFileSync(join(dir, dead, "manifest.json"), "{}");
    const r = await run("ec-encode", ["-i", "in.bin", "-o", "blocks"], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(join(dir, dead)), false);
    assert.match(r.stderr, new RegExp(`removed ${dead.replaceAll(".", "\\.")}, the temporary file of a dead run`));
  });
});

describe("a dead run's lock is taken over in one line, worded by its rule", () => {
  const lockFile = (pid: number, temporary: string, place?: string) =>
    `pid ${pid}\ntemporary ${temporary}\nsince 2020-01-01T00:00:00Z\n${place ? `place ${place}\n` : ""}`;
  const takeoverLines = (stderr: string) => stderr.split("\n").filter((l) => /took over|temporary file of a dead run/.test(l));

  test("written here by a process that is gone: one line that also says its temporary file was removed", { timeout: 120_000 }, async () => {
    const dir = folder();
    const pid = deadPid();
    const temporary = temporaryName(join(dir, "o.enc"), pid);
    writeFileSync(join(dir, temporary), "half of an encrypt");
    writeFileSync(join(dir, lockName("o.enc")), lockFile(pid, temporary, runPlace()));
    const r = await run("encrypt", ["-i", "in.bin", "-o", "o.enc", "-k", "key"], dir);
    assert.equal(r.code, 0, r.stderr);
    const lines = takeoverLines(r.stderr);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`^encrypt: took over the lock of \\S*o\\.enc from process ${pid}, which is gone and removed its temporary file ${temporary.replaceAll(".", "\\.")}$`));
    assert.deepEqual(extra(dir, "in.bin", "key"), ["o.enc"]);
  });

  // A receiver checks its target before it waits for a peer: a dead run's lock and temporary file go then, not only
  // once a peer connects (a rerun that got no peer left both in place).
  for (const [name, args] of [
    ["dma-copy", ["--side", "dpu", "-f", "out.bin", "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "1"]],
    ["rdma-copy", ["--receive", "out.bin", "--listen", `127.0.0.1:${testPort()}`, "--timeout", "1"]],
  ] as const) {
    test(`${name}, a receiver that gets no peer: the dead run's lock and temporary file are gone all the same`, { timeout: 120_000 }, async () => {
      const dir = folder();
      const pid = deadPid();
      const temporary = temporaryName(join(dir, "out.bin"), pid);
      writeFileSync(join(dir, temporary), "half of a copy");
      writeFileSync(join(dir, lockName("out.bin")), lockFile(pid, temporary, runPlace()));
      const sim = mkdtempSync(join(root, "sim-"));
      const r = await run(name, [...args], dir, { DOCA_SIM_DIR: sim, DOCA_SIM_SIDE: name === "dma-copy" ? "dpu" : "host" });
      assert.notEqual(r.code, 0, r.stderr); // nobody came
      const lines = takeoverLines(r.stderr);
      assert.equal(lines.length, 1, r.stderr);
      // the task's own prefix, with its side where it has two (issue 32: "dma-copy: DPU side: took over …")
      const prefix = name === "dma-copy" ? "dma-copy: DPU side: " : "rdma-copy: ";
      assert.match(lines[0], new RegExp(`^${prefix}took over the lock of \\S*out\\.bin from process ${pid}, which is gone and removed its temporary file`));
      assert.deepEqual(extra(dir, "in.bin", "key"), [], r.stderr);
    });
  }

  test("from another host or pid namespace, not refreshed for 3 s: said so, not \"which is gone\"", { timeout: 120_000 }, async () => {
    const dir = folder();
    const lock = join(dir, lockName("o.enc"));
    writeFileSync(lock, lockFile(deadPid(), "x", "00000000"));
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const r = await run("encrypt", ["-i", "in.bin", "-o", "o.enc", "-k", "key"], dir);
    assert.equal(r.code, 0, r.stderr);
    const lines = takeoverLines(r.stderr);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /took over the lock of \S*o\.enc from process \d+ \(written on another host, in another pid namespace or by an older doca-ts; not refreshed for 3 s\)$/);
  });

  test("an empty or garbage lock is \"an unreadable lock\", never \"process ?\"", { timeout: 120_000 }, async () => {
    const dir = folder();
    const lock = join(dir, lockName("o.enc"));
    writeFileSync(lock, "\x00garbage");
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const r = await run("encrypt", ["-i", "in.bin", "-o", "o.enc", "-k", "key"], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^encrypt: took over an unreadable lock of \S*o\.enc \(\S+\.o\.enc\.doca-ts\.lock, not refreshed for 3 s\)$/m);
    assert.doesNotMatch(r.stderr, /process \?/);
  });

  test("a fresh lock of a live process: refused naming the encrypt run, not \"another copy\"", { timeout: 120_000 }, async () => {
    const dir = folder();
    writeFileSync(join(dir, lockName("o.enc")), lockFile(process.pid, "x", runPlace()));
    const r = await run("encrypt", ["-i", "in.bin", "-o", "o.enc", "-k", "key"], dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot create \\S*o\\.enc: another encrypt run is writing it \\(process ${process.pid} `));
  });
});

describe("an output that is one of the inputs is a usage error, --force or not", () => {
  const cases: [string, (dir: string) => string[], string][] = [
    ["compress", () => ["in.bin", "-o", "in.bin", "-f"], "in.bin"],
    ["sha", () => ["key", "in.bin", "-o", "in.bin", "-f"], "in.bin"],
    ["decompress", () => ["in.bin", "-o", "in.bin", "-f"], "in.bin"],
    ["encrypt", () => ["-i", "in.bin", "-o", "key", "-k", "key"], "key"],
    ["decrypt", () => ["-i", "in.bin", "-o", "in.bin", "-k", "key"], "in.bin"],
  ];
  for (const [name, args, victim] of cases) {
    test(`${name} ${args("").join(" ")}: exit 2 naming both; the input is intact`, { timeout: 120_000 }, async () => {
      const dir = folder();
      const before = readFileSync(join(dir, victim));
      const r = await run(name, args(dir), dir);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`-o/--output: \\S*${victim.replace(".", "\\.")} is the same file as (the input|-[ik]/--(input|key)) \\S*${victim.replace(".", "\\.")}`));
      assert.deepEqual(readFileSync(join(dir, victim)), before);
      assert.deepEqual(extra(dir, "in.bin", "key"), []);
    });
  }

  test("compress onto a hard link of its input, with -f: the same inode, refused", { timeout: 120_000 }, async () => {
    const dir = folder();
    linkSync(join(dir, "in.bin"), join(dir, "link.bin"));
    const r = await run("compress", ["in.bin", "-o", "link.bin", "-f"], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /link\.bin is the same file as the input \S*in\.bin/);
  });

  test("ec-recover onto its own manifest or a block (through a symbolic link to the folder): refused", { timeout: 180_000 }, async () => {
    const dir = folder();
    assert.equal((await run("ec-encode", ["-i", "in.bin", "-o", "blocks"], dir)).code, 0);
    symlinkSync("blocks", join(dir, "alias"));
    for (const output of ["blocks/manifest.json", "alias/block-001"]) {
      const r = await run("ec-recover", ["-i", "blocks", "-o", output], dir);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is the same file as the input \S*blocks\/(manifest\.json|block-001)/);
    }
  });
});

describe("a full file system or a file size limit: the error names the output and says why", () => {
  /** The task under `ulimit -f` (SIGXFSZ ignored, so the write fails with EFBIG instead of killing the process). */
  function runLimited(name: string, args: string[], dir: string, limitBlocks: number): Promise<{ code: number | null; stderr: string }> {
    const cmd = runtimeCommand(task(name), args);
    const child = spawn("sh", ["-c", `trap '' XFSZ; ulimit -f ${limitBlocks}; exec "$@"`, "sh", cmd.command, ...cmd.args], {
      cwd: repoRoot,
      env: { ...process.env, INIT_CWD: dir },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    return new Promise((resolve) => child.on("close", (code) => (clearTimeout(killer), resolve({ code, stderr }))));
  }

  // 4 MiB inputs (ec-encode: blocks of 2 MiB) against a limit of 1024 blocks (512 KiB or 1 MiB: sh's block is 512
  // or 1024 bytes); the runtimes' own cache files are far smaller
  const big = (dir: string) => {
    writeFileSync(join(dir, "big.bin"), randomBytes(4 << 20)); // incompressible: compress's output is as large
    writeFileSync(join(dir, "zeros.bin"), new Uint8Array(4 << 20));
  };
  const cases: [string, string[], string, string[]][] = [
    ["compress", ["big.bin", "-o", "out.gz"], "out.gz", []],
    ["encrypt", ["-i", "big.bin", "-o", "out.enc", "-k", "key"], "out.enc", []],
    ["decompress", ["zeros.gz", "-o", "out.bin"], "out.bin", ["compress", "zeros.bin", "-o", "zeros.gz"]],
    ["ec-recover", ["-i", "blocks", "-o", "out.bin"], "out.bin", ["ec-encode", "-i", "big.bin", "-o", "blocks", "-n", "4", "-m", "1"]],
    ["ec-encode", ["-i", "big.bin", "-o", "out.blocks", "-n", "2", "-m", "1"], "out.blocks", []],
  ];
  for (const [name, args, output, prepare] of cases) {
    test(`${name} under ulimit -f (EFBIG): names ${output}, says why, leaves nothing`, { timeout: 180_000 }, async () => {
      const dir = folder();
      big(dir);
      if (prepare.length > 0) assert.equal((await run(prepare[0], prepare.slice(1), dir)).code, 0);
      const known = readdirSync(dir);
      const r = await runLimited(name, args, dir, 1024);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`^${name}: error: cannot write \\S*${output.replace(".", "\\.")} \\([^)]*\\): the file grew past the largest file this process may write \\(EFBIG`, "m"));
      assert.deepEqual(extra(dir, ...known), [], "nothing left behind");
    });
  }

  /** A 1 MiB tmpfs, or undefined when this process may not mount one (not root, no CAP_SYS_ADMIN, a container). */
  function smallTmpfs(): string | undefined {
    const mount = mkdtempSync(join(root, "full-"));
    const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount], { encoding: "utf8" });
    if (r.status === 0) return mount;
    console.log(`skipped the tmpfs case: cannot mount a tmpfs here (${(r.stderr || r.error?.message || "").trim()})`);
    return undefined;
  }

  test("compress and encrypt onto a full tmpfs (ENOSPC): name the output, say the file system is full, leave nothing", { timeout: 180_000 }, async (t) => {
    const mount = smallTmpfs();
    if (mount === undefined) return t.skip("mount not permitted");
    try {
      const dir = folder();
      big(dir);
      for (const [name, args] of [["compress", ["big.bin", "-o", join(mount, "out.gz")]], ["encrypt", ["-i", "big.bin", "-o", join(mount, "out.enc"), "-k", "key"]]] as const) {
        const r = await run(name, [...args], dir);
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`^${name}: error: cannot write ${mount}/out\\.(gz|enc) \\([^)]*\\): the file system is full \\(ENOSPC\\)`, "m"));
        assert.deepEqual(readdirSync(mount), [], "nothing left on the full file system");
      }
    } finally {
      spawnSync("umount", ["-l", mount]);
    }
  });
});
