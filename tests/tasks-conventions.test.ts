/**
 * One convention for every task (issue 32 §4): --version everywhere, one JSON flag name (--json; dma-copy keeps
 * --json-output because NVIDIA's -j/--json FILE is taken), a description for every deno.json task, a missing Deno
 * permission as one clean line, and an environment variable that decided the outcome named in the error, the
 * software device's folder named even when it is the default.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import process from "node:process";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { DOCA_TS_VERSION } from "../tasks/common/version.ts";
import { runDeclared } from "./helpers/tasks/task-command.ts";
import { FLAGS as dmaCopy } from "../tasks/dma-copy/options.ts";
import { FLAGS as dmaLocalCopy } from "../tasks/dma-local-copy.ts";
import { FLAGS as comchServer } from "../tasks/comch-server.ts";
import { FLAGS as comchClient } from "../tasks/comch-client.ts";
import { FLAGS as comchStream } from "../tasks/comch-stream.ts";
import { FLAGS as devices } from "../tasks/devices.ts";
import { FLAGS as demo } from "../tasks/demo.ts";
import { FLAGS as rdmaCopy } from "../tasks/rdma-copy/options.ts";
import { FLAGS as rdmaPing } from "../tasks/rdma-ping.ts";
import { FLAGS as rdmaDemo } from "../tasks/rdma-demo.ts";
import { FLAGS as compress } from "../tasks/compress.ts";
import { FLAGS as decompress } from "../tasks/decompress.ts";
import { FLAGS as sha } from "../tasks/sha.ts";
import { FLAGS as encrypt } from "../tasks/encrypt.ts";
import { FLAGS as decrypt } from "../tasks/decrypt.ts";
import { FLAGS as ecEncode } from "../tasks/ec-encode.ts";
import { FLAGS as ecRecover } from "../tasks/ec-recover.ts";
import { FLAGS as storageRelay } from "../tasks/storage-relay.ts";
import { TASKS } from "../bin/task-list.mjs";

const onDeno = typeof (globalThis as Record<string, unknown>).Deno !== "undefined";
const task = (name: string) => join(repoRoot, "tasks", `${name}.ts`);
const scratch: string[] = [];
after(() => scratch.forEach((d) => rmSync(d, { recursive: true, force: true })));

const FLAG_SETS: Record<string, Record<string, unknown>> = {
  "dma-copy": dmaCopy,
  "dma-local-copy": dmaLocalCopy,
  "comch-server": comchServer,
  "comch-client": comchClient,
  "comch-stream": comchStream,
  devices,
  demo,
  "rdma-copy": rdmaCopy,
  "rdma-ping": rdmaPing,
  "rdma-demo": rdmaDemo,
  compress,
  decompress,
  sha,
  encrypt,
  decrypt,
  "ec-encode": ecEncode,
  "ec-recover": ecRecover,
  "storage-relay": storageRelay,
};

describe("one convention for every task", () => {
  test("every task takes --version; the version is package.json's", () => {
    assert.deepEqual([...Object.keys(FLAG_SETS), "doctor"].sort(), [...TASKS].sort(), "every task of bin/task-list.mjs is checked here");
    for (const [name, flags] of Object.entries(FLAG_SETS)) assert.ok("version" in flags, `${name} takes --version`);
    assert.equal(DOCA_TS_VERSION, JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).version);
  });

  for (const name of [...Object.keys(FLAG_SETS), "doctor"]) {
    // With exactly the Deno flags its deno.json task and shebang declare: rdma-demo lacked --allow-ffi and said
    // "DOCA not loaded: Requires ffi access" under Deno while Bun and Node named the version.
    test(`${name} --version names doca-ts and the DOCA it loads, with its declared permissions`, { timeout: 60_000 }, async () => {
      const r = await runDeclared(name, ["--version"], { timeoutMs: 50_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^doca-ts ${name} ${DOCA_TS_VERSION.replaceAll(".", "\\.")}; DOCA \\S+ from /`));
    });
  }

  test("npx doca-ts --version answers doca-ts's version (bin/doca-ts.mjs)", { timeout: 60_000 }, () => {
    // bin/doca-ts.mjs is Node's (npx runs it with node), whichever runtime runs this test
    const r = spawnSync("node", [join(repoRoot, "bin", "doca-ts.mjs"), "--version"], { encoding: "utf8", timeout: 50_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^doca-ts ${DOCA_TS_VERSION.replaceAll(".", "\\.")} `));
    const help = spawnSync("node", [join(repoRoot, "bin", "doca-ts.mjs"), "--help"], { encoding: "utf8", timeout: 50_000 });
    assert.match(help.stdout, /doca-ts --version/, "its usage names it");
  });

  test("npx doca-ts dma-copy runs in a Node given deno.json's V8 flags for it, from any folder (bin/task-flags.mjs)", { timeout: 90_000 }, async () => {
    // Node takes V8 flags only at start-up: without --max-semi-space-size=2 a DPU side serving for days grows V8's
    // young generation under hosts that come and go (benchmarks/README.md, "Comch churn")
    const { nodeFlagsFor } = await import("../bin/task-flags.mjs");
    assert.deepEqual(nodeFlagsFor("dma-copy"), ["--max-semi-space-size=2"]);
    assert.deepEqual(nodeFlagsFor("sha"), []);
    const dir = mkdtempSync(join(tmpdir(), "doca-bin-flags-"));
    try {
      // started from a folder without node_modules: the repository's tsx must still be found
      const child = spawn("node", [join(repoRoot, "bin", "doca-ts.mjs"), "dma-copy", "--side", "dpu", "-f", join(dir, "none"), "-p", "0000:03:00.1", "-r", "0000:b1:00.1", "--timeout", "3"], {
        cwd: dir,
        env: { ...process.env, DOCA_SIM_DIR: dir, DOCA_SIM_SIDE: "dpu" },
        stdio: ["ignore", "ignore", "pipe"],
      });
      const killer = setTimeout(() => child.kill("SIGKILL"), 80_000);
      let stderr = "";
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        child.stderr!.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
          if (stderr.includes("waiting for the host")) resolve();
        });
        void exited.then(() => reject(new Error(`exited before waiting for the host:\n${stderr}`)));
      });
      const task = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/)[0];
      const argv = readFileSync(`/proc/${task}/cmdline`, "utf8").split("\0");
      assert.ok(argv.includes("--max-semi-space-size=2"), argv.join(" "));
      const code = await exited;
      clearTimeout(killer);
      assert.equal(code, 1, stderr); // no host within --timeout: the task's own failure, relayed
      assert.match(stderr, /no host connected within 3 s/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("one JSON flag: --json; --json-output only on dma-copy (NVIDIA's -j/--json FILE takes the name)", () => {
    for (const [name, flags] of Object.entries(FLAG_SETS)) {
      if (name === "dma-copy") {
        assert.ok("json-output" in flags && (flags.json as { short?: string }).short === "j");
        continue;
      }
      assert.ok(!("json-output" in flags), `${name} has no --json-output`);
    }
    for (const name of ["dma-local-copy", "comch-stream", "devices", "rdma-copy", "rdma-ping"]) {
      assert.ok("json" in FLAG_SETS[name], `${name} prints JSON with --json`);
    }
  });

  test("every deno.json task has a description (deno task lists it)", () => {
    const tasks = JSON.parse(readFileSync(join(repoRoot, "deno.json"), "utf8")).tasks as Record<string, unknown>;
    const bare = Object.entries(tasks).filter(([, v]) => typeof v !== "object" || !(v as { description?: string }).description);
    assert.deepEqual(bare.map(([k]) => k), []);
  });

  test("a missing Deno permission is one line, no trace", { skip: !onDeno, timeout: 60_000 }, () => {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    // Through sh: Deno's node:child_process hands its own permissions to a deno it starts directly.
    const r = spawnSync("sh", ["-c", `exec "$DENO_BIN" run --no-prompt "$TASK"`], {
      cwd: repoRoot,
      env: { ...process.env, DENO_BIN: deno, TASK: task("devices") },
      encoding: "utf8",
      timeout: 50_000,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^devices: error: this program needs Deno's --allow-env/);
    assert.doesNotMatch(r.stderr, /Uncaught|NotCapable: | {4}at /);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  });

  test("DOCA_SIM_SIDE that chose the side is named in the error", { timeout: 60_000 }, async () => {
    const sim = mkdtempSync(join(tmpdir(), "doca-ts-conv-"));
    scratch.push(sim);
    const r = await startChild(task("comch-client"), ["--timeout", "2"], { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: sim }, 50_000).done;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^comch-client: error: .*DOCA_SIM_SIDE=dpu chose the side \(--side host overrides it\)/);
    // not the device's bare DOCA_ERROR_NOT_SUPPORTED: which side, and what sets it (issue 32 n1 item 6)
    assert.match(r.stderr, /a Comch client must run on the host side: .*--side host \(or DOCA_SIM_SIDE=host/);
    assert.doesNotMatch(r.stderr, /NOT_SUPPORTED/);
    const d = await startChild(task("dma-copy"), ["-f", join(sim, "x.bin")], { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: sim }, 50_000).done;
    assert.notEqual(d.code, 0);
    assert.match(d.stderr, /missing -r\/--rep-pci.*DOCA_SIM_SIDE=dpu chose the side/);
  });

  test("a DOCA_SIM_SIDE that is neither host nor dpu is named as the variable, not as --side", { timeout: 60_000 }, async () => {
    const sim = mkdtempSync(join(tmpdir(), "doca-ts-conv-"));
    scratch.push(sim);
    const r = await startChild(task("devices"), [], { DOCA_SIM_SIDE: "DPU", DOCA_SIM_DIR: sim }, 50_000).done;
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^devices: error: the environment variable DOCA_SIM_SIDE="DPU" is neither host nor dpu \(lower case\)/);
    assert.doesNotMatch(r.stderr, /--side: expected/);
    const d = await startChild(task("dma-copy"), ["-f", join(sim, "x.bin")], { DOCA_SIM_SIDE: "DPU", DOCA_SIM_DIR: sim }, 50_000).done;
    assert.equal(d.code, 2, d.stderr);
    assert.match(d.stderr, /DOCA_SIM_SIDE="DPU" is neither host nor dpu/);
  });

  test("a Comch timeout lists its likely causes and names the software device's default folder", { timeout: 60_000 }, async () => {
    const xdg = mkdtempSync(join(tmpdir(), "doca-ts-conv-xdg-"));
    scratch.push(xdg);
    const r = await startChild(task("comch-client"), ["--timeout", "1", "-s", "nobody-here"], {
      DOCA_SIM_DIR: "",
      XDG_RUNTIME_DIR: xdg,
      DOCA_SIM_SIDE: "host",
    }, 50_000).done;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /likely causes: /);
    assert.ok(r.stderr.includes(`the software device's default folder ${xdg}/doca-sim`), r.stderr);
  });

  test("a relative XDG_RUNTIME_DIR is ignored (XDG spec) by the tasks and by the software device", { timeout: 60_000 }, async () => {
    // The task runs in the repository: a relative value pointing at a scratch folder would make the device create
    // <scratch>/doca-sim if it were taken as a path; as if unset, the default folder /tmp/doca-sim-<uid> is used.
    const xdg = mkdtempSync(join(tmpdir(), "doca-ts-conv-relxdg-"));
    scratch.push(xdg);
    const rel = relative(repoRoot, xdg);
    const r = await startChild(task("comch-client"), ["--timeout", "1", "-s", `nobody-rel-${process.pid}`], {
      DOCA_SIM_DIR: "",
      XDG_RUNTIME_DIR: rel,
      DOCA_SIM_SIDE: "host",
    }, 50_000).done;
    assert.equal(r.code, 1, r.stderr);
    assert.ok(!r.stderr.includes(`${rel}/doca-sim`), r.stderr);
    assert.match(r.stderr, /the software device's default folder \/tmp\/doca-sim-\d+\b/);
    assert.equal(existsSync(join(xdg, "doca-sim")), false, "the software device took the relative XDG_RUNTIME_DIR as a path");
  });
});
