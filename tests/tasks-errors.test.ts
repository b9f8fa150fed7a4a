/**
 * Errors in the user's words (issue 12 §3), each reproducing a report of the issue: paths relative to the folder
 * the user ran from (INIT_CWD), both sides' files named, the target folder checked before connecting, one shape for
 * a lost peer, comch-server on the wrong side or on a name already served, --classic on both doca-ts sides.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { DPU_LISTENING, repoRoot, runCopyPair, startChild } from "../tasks/common/run-pair.ts";
import { PATH_VARIABLES, resolvePathVariables } from "../tasks/common/user-path.ts";
import { defaultTimeout, DPU_PCI, HOST_PCI, MAX_BUF, sha256File, workspaces, writePatternFile } from "./helpers/tasks/workspace.ts";

const space = workspaces(after);
const task = (name: string) => fileURLToPath(new URL(`../tasks/${name}`, import.meta.url));
const host = (file: string, extra: string[] = []) => ["-f", file, "-p", HOST_PCI, ...defaultTimeout(extra), ...extra];
const dpu = (file: string, extra: string[] = []) => ["-f", file, "-p", DPU_PCI, "-r", HOST_PCI, ...defaultTimeout(extra), ...extra];

describe("paths are the user's", () => {
  test("a relative -f resolves against INIT_CWD (npm run / deno task), not the repo root", async () => {
    const w = space("initcwd");
    const expect = writePatternFile(join(w.host, "rel.bin"), 5000);
    const r = await runCopyPair({
      hostArgs: host("./rel.bin"),
      dpuArgs: dpu(join(w.dpu, "rel.bin")),
      env: { ...w.env, INIT_CWD: w.host },
    });
    assert.equal(r.host.code, 0, r.host.stderr);
    assert.equal(sha256File(join(w.dpu, "rel.bin")), expect);
  });

  test("'exists on neither' and 'exists on both' name the host's file and the DPU's", async () => {
    const w = space("names");
    const neither = await runCopyPair({ hostArgs: host(join(w.host, "a.bin")), dpuArgs: dpu(join(w.dpu, "a.bin")), env: w.env });
    assert.notEqual(neither.host.code, 0);
    assert.match(neither.host.stderr, new RegExp(`neither.*DPU: ${join(w.dpu, "a.bin")}.*host: ${join(w.host, "a.bin")} does not exist`));
    writePatternFile(join(w.host, "b.bin"), 10);
    writePatternFile(join(w.dpu, "b.bin"), 10);
    const both = await runCopyPair({ hostArgs: host(join(w.host, "b.bin")), dpuArgs: dpu(join(w.dpu, "b.bin")), env: w.env });
    assert.notEqual(both.host.code, 0);
    assert.match(both.host.stderr, new RegExp(`exists on both.*${join(w.dpu, "b.bin")}.*host: ${join(w.host, "b.bin")} exists`));
  });
});

describe("the target folder is checked before connecting, naming the user's target", () => {
  test("a missing folder: the host fails at once without a DPU", async () => {
    const w = space("nofolder");
    const target = join(w.host, "missing", "f.bin");
    const r = await startChild(task("dma-copy.ts"), ["--side", "host", ...host(target)], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`cannot create ${target}: its folder ${join(w.host, "missing")} does not exist`));
    assert.doesNotMatch(r.stderr, /\.part|doca-ts-\d+/, "the hidden temporary file is not what the user is told about");
  });

  test("a missing folder: the DPU says so at once, before a host connects", { timeout: 90_000 }, async () => {
    const w = space("nofolder-dpu");
    const target = join(w.dpu, "missing", "f.bin");
    const child = startChild(task("dma-copy.ts"), ["--side", "dpu", ...dpu(target, ["--timeout", "60"])], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 80_000);
    await child.waitForStderr(`cannot create ${target}: its folder ${join(w.dpu, "missing")} does not exist`, 30_000);
    child.signal!("SIGINT");
    const r = await child.done;
    assert.equal(r.code, 130, r.stderr);
  });

  test("a read-only folder: the host fails at once, naming the target", { skip: process.getuid?.() === 0 ? "root writes anywhere" : false }, async () => {
    const w = space("rofolder");
    chmodSync(w.host, 0o555);
    try {
      const r = await startChild(task("dma-copy.ts"), ["--side", "host", ...host(join(w.host, "f.bin"))], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`cannot create ${join(w.host, "f.bin")}: the folder ${w.host} is not writable`));
    } finally {
      chmodSync(w.host, 0o755);
    }
  });
});

describe("losing the peer reads the same in every direction", () => {
  for (const [direction, killed] of [["dpu→host", "dpu"], ["host→dpu", "host"]] as const) {
    test(`${direction}, the ${killed === "dpu" ? "DPU" : "host"} dies mid-copy`, async () => {
      const w = space("lost");
      const src = direction === "dpu→host" ? w.dpu : w.host;
      writePatternFile(join(src, "f.bin"), 64 * 1024 * 1024);
      const paced = ["--chunk-size", "16384", "--slots", "1", "--timeout", "10"];
      const d = startChild(task("dma-copy.ts"), ["--side", "dpu", ...dpu(join(w.dpu, "f.bin"), paced)], { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, 60_000);
      await d.waitForStderr(DPU_LISTENING, 60_000);
      const h = startChild(task("dma-copy.ts"), ["--side", "host", ...host(join(w.host, "f.bin"), paced)], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000);
      const receiverDir = direction === "dpu→host" ? w.host : w.dpu;
      for (let i = 0; i < 3000 && w.list(receiverDir).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
      (killed === "dpu" ? d : h).kill();
      const survivor = await (killed === "dpu" ? h : d).done;
      await (killed === "dpu" ? d : h).done;
      assert.notEqual(survivor.code, 0, survivor.stderr);
      const peer = killed === "dpu" ? "the DPU side" : "the host side";
      assert.match(survivor.stderr, new RegExp(`error: (${peer} disconnected while|gave up .* ${peer} did not send it)`));
    });
  }
});

describe("comch-server says what to change", () => {
  test("on the host side: it must run on the DPU side", async () => {
    const w = space("srvside");
    const r = await startChild(task("comch-server.ts"), ["--side", "host", "-r", HOST_PCI], w.env, 60_000).done;
    assert.equal(r.code, 1);
    assert.match(r.stderr, /comch-server must run on the DPU side: .* --side dpu/);
  });

  test("a name already served says so; the default side is the DPU", async () => {
    const w = space("srvname");
    const first = startChild(task("comch-server.ts"), ["-r", HOST_PCI, "-s", "dup", "--timeout", "20"], w.env, 60_000);
    await first.waitForStderr("waiting for a client", 60_000);
    const second = await startChild(task("comch-server.ts"), ["-r", HOST_PCI, "-s", "dup", "--timeout", "20"], w.env, 60_000).done;
    first.signal!("SIGINT");
    const f = await first.done;
    assert.equal(second.code, 1);
    assert.match(second.stderr, /a Comch server named "dup" is already running/);
    assert.equal(f.code, 130, f.stderr);
    assert.match(f.stderr, /interrupted \(SIGINT\) while waiting for a client/);
  });
});

describe("--classic on both doca-ts sides", () => {
  test("a file over one buffer: both sides name --classic, nobody blames NVIDIA's application", async () => {
    const w = space("classic2");
    writePatternFile(join(w.host, "big.bin"), MAX_BUF + 1);
    const r = await runCopyPair({ hostArgs: host(join(w.host, "big.bin"), ["--classic"]), dpuArgs: dpu(join(w.dpu, "big.bin"), ["--classic"]), env: w.env });
    assert.notEqual(r.host.code, 0);
    assert.match(r.dpu.stderr, /classic mode \(--classic on this DPU side\) supports at most 2097152 bytes/);
    assert.match(r.host.stderr, /With --classic the copy is NVIDIA's single-buffer protocol: at most one DMA buffer/);
    assert.doesNotMatch(r.host.stderr, /probably NVIDIA/);
  });
});

describe("the software device's folder (DOCA_SIM_DIR) in the task's own words", () => {
  test("a folder the device would refuse is named with why, at once, by every Comch task", { timeout: 600_000 }, async () => {
    // The device only logged its refusal ("[doca-sim N] … cannot create it") and answered NOT_PERMITTED; a host
    // side waited out its whole --timeout on a mode-0777 folder before blaming a DPU side that was not started.
    const w = space("sim-dir");
    const aFile = join(w.root, "a-file");
    writeFileSync(aFile, "not a folder");
    const open = join(w.root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const folders: [string, RegExp][] = [
      [join(w.root, "missing", "sim"), /cannot create it: \S+\/missing does not exist/],
      [aFile, /it is not a directory/],
      [open, /it is writable by others \(mode 0777; chmod 700 it\)/],
      // longer than a Unix socket path allows below it (the device failed doca_ctx_start with INITIALIZATION)
      [join(w.root, "x".repeat(100)), /its path is \d+ bytes long: the Comch sockets inside it would need \d+, more than the 107/],
    ];
    const runs: [string, string[]][] = [
      ["comch-client.ts", ["--timeout", "30"]],
      ["comch-server.ts", ["-r", HOST_PCI, "--timeout", "30"]],
      ["dma-copy.ts", ["-f", join(w.host, "x.bin"), "--timeout", "30"]],
      ["dma-copy.ts", ["-f", join(w.dpu, "x.bin"), "-r", HOST_PCI, "--timeout", "30"]],
    ];
    for (const [dir, why] of folders) {
      for (const [name, args] of runs) {
        const started = Date.now();
        const r = await startChild(task(name), args, { ...w.env, DOCA_SIM_DIR: dir }, 60_000).done;
        const seen = `${name} ${args.join(" ")} with DOCA_SIM_DIR=${dir}:\n${r.stderr}`;
        assert.equal(r.code, 1, seen);
        assert.ok(r.stderr.includes(`DOCA_SIM_DIR=${dir} cannot be used by the software device: `), seen);
        assert.match(r.stderr, why, seen);
        assert.ok(Date.now() - started < 25_000, `at once, not after --timeout 30: ${seen}`);
      }
    }
  });

  test("a relative DOCA_SIM_DIR is the user's folder's (INIT_CWD), not the repository's", { timeout: 120_000 }, async () => {
    const w = space("sim-dir-relative");
    const relative = `relsim-${process.pid}`;
    const r = await startChild(task("comch-client.ts"), ["-s", `rel-${process.pid}`, "--timeout", "1"], {
      ...w.env,
      DOCA_SIM_DIR: relative,
      INIT_CWD: w.host,
    }, 60_000).done;
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`DOCA_SIM_DIR=${join(w.host, relative)}`), r.stderr);
    assert.ok(existsSync(join(w.host, relative)), "the device made the folder where the user ran the command");
    assert.ok(!existsSync(join(repoRoot, relative)), "nothing made in the repository");
  });

  test("every path-valued variable the device or the library reads is resolved against INIT_CWD", () => {
    const env: Record<string, string | undefined> = {
      INIT_CWD: "/home/u/work",
      DOCA_SIM_DIR: "sim",
      DOCA_SIM_CONFIG: "./conf/devices.json",
      DOCA_LIB_DIR: "../lib",
      DOCA_SIM_LIBCRYPTO: "libcrypto.so.3",
      DOCA_SIM_SIDE: "dpu",
    };
    resolvePathVariables(env);
    assert.deepEqual(env, {
      INIT_CWD: "/home/u/work",
      DOCA_SIM_DIR: "/home/u/work/sim",
      DOCA_SIM_CONFIG: "/home/u/work/conf/devices.json",
      DOCA_LIB_DIR: "/home/u/lib",
      DOCA_SIM_LIBCRYPTO: "libcrypto.so.3", // a bare name is dlopen's search, not a path
      DOCA_SIM_SIDE: "dpu",
    });
    const absolute = { INIT_CWD: "/home/u/work", DOCA_SIM_DIR: "/run/x", DOCA_SIM_LIBCRYPTO: "./ssl/libcrypto.so.3" };
    resolvePathVariables(absolute);
    assert.deepEqual(absolute, { INIT_CWD: "/home/u/work", DOCA_SIM_DIR: "/run/x", DOCA_SIM_LIBCRYPTO: "/home/u/work/ssl/libcrypto.so.3" });
    assert.deepEqual([...PATH_VARIABLES].sort(), ["DOCA_LIB_DIR", "DOCA_SIM_CONFIG", "DOCA_SIM_DIR", "DOCA_SIM_LIBCRYPTO"]);
  });
});
