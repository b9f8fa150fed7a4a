/**
 * Tasks run with the permissions they declare and never prompt: each task is started the way `deno task` starts it
 * (the flags of its deno.json entry, not -A) inside a pseudo-terminal, where Deno would stop at a prompt; on Bun and
 * Node with the documented commands. A flag taken away fails with a message naming it, never a prompt or a check
 * skipped quietly.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { denoTasks, runDeclared, runInPty, splitRunCommand, taskArgv } from "./helpers/tasks/task-command.ts";
import { DPU_PCI, HOST_PCI, sha256File, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const space = (tag: string) => (spaces.push(workspace(tag)), spaces.at(-1)!);

/** Deno's prompt ("┏ ⚠️  Deno requests … Allow?") or a permission error that escaped as a raw stack. */
const PROMPT = /Deno requests|Allow\?|\[y\/n/;
const LONG = 120_000;

describe("deno.json tasks and shebangs", () => {
  test("every task that runs a script passes --no-prompt, and the script's shebang has the same flags", () => {
    const checked: string[] = [];
    for (const [name, command] of Object.entries(denoTasks())) {
      const run = splitRunCommand(command);
      if (!run) continue;
      checked.push(name);
      assert.ok(run.flags.includes("--no-prompt") || run.flags.includes("--allow-all"), `${name}: ${command}`);
      const shebang = readFileSync(join(repoRoot, run.script), "utf8").split("\n")[0];
      assert.equal(shebang, `#!/usr/bin/env -S deno run ${run.flags.join(" ")}`, `${run.script}'s shebang differs from deno.json's ${name}`);
    }
    for (const t of ["dma-copy", "demo", "devices", "doctor", "comch-server", "comch-client", "comch-stream"]) {
      assert.ok(checked.includes(t), `task ${t} checked`);
    }
  });
});

describe(`tasks in a pseudo-terminal with their own permissions (${currentRuntime()})`, () => {
  async function pair(direction: "host→dpu" | "dpu→host", hostDrop?: string) {
    const w = space("perm");
    const src = join(direction === "host→dpu" ? w.host : w.dpu, "data.bin");
    const expect = writePatternFile(src, 3 * 1024 * 1024 + 5);
    const dpu = runInPty(taskArgv("dma-copy", ["-f", join(w.dpu, "data.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "60"]), w.env, LONG);
    await dpu.waitFor("waiting for the host", LONG);
    const host = runInPty(taskArgv("dma-copy", ["-f", join(w.host, "data.bin"), "-p", HOST_PCI, "--timeout", "60"], hostDrop), w.env, LONG);
    const [h, d] = await Promise.all([host.done, dpu.done]);
    return { w, h, d, expect };
  }

  for (const direction of ["host→dpu", "dpu→host"] as const) {
    test(`dma-copy ${direction}: both sides finish, no prompt, progress drawn on the terminal`, async () => {
      const { w, h, d, expect } = await pair(direction);
      assert.equal(h.code, 0, `host:\n${h.output}`);
      assert.equal(d.code, 0, `DPU:\n${d.output}`);
      assert.doesNotMatch(h.output + d.output, PROMPT);
      assert.equal(sha256File(join(direction === "host→dpu" ? w.dpu : w.host, "data.bin")), expect);
      assert.deepEqual(w.list(w.host), ["data.bin"]);
      assert.deepEqual(w.list(w.dpu), ["data.bin"]);
    });
  }

  test("devices, dma-local-copy and doctor finish without a prompt", async () => {
    const w = space("perm-misc");
    for (const [name, args] of [["devices", []], ["dma-local-copy", ["--size", "65536"]], ["doctor", ["--timeout", "20"]]] as const) {
      const r = await runInPty(taskArgv(name, [...args]), w.env, LONG).done;
      assert.doesNotMatch(r.output, PROMPT, `${name}:\n${r.output}`);
      assert.doesNotMatch(r.output, /NotCapable|Requires \w+ access/, `${name}:\n${r.output}`);
      assert.ok(r.code === 0 || (name === "doctor" && r.code === 1), `${name} exited ${r.code}:\n${r.output}`);
    }
  });

  test("compress, decompress and sha finish without a prompt, their files written", async () => {
    const w = space("perm-accel");
    const input = join(w.host, "data.bin");
    const expect = writePatternFile(input, 300_000);
    for (const [name, args] of [
      ["compress", [input, "-o", `${input}.gz`]],
      ["decompress", [`${input}.gz`, "-o", join(w.host, "back.bin")]],
      ["sha", [join(w.host, "back.bin"), "-o", join(w.host, "list")]],
    ] as const) {
      const r = await runInPty(taskArgv(name, [...args]), w.env, LONG).done;
      assert.doesNotMatch(r.output, PROMPT, `${name}:\n${r.output}`);
      assert.equal(r.code, 0, `${name} exited ${r.code}:\n${r.output}`);
    }
    assert.equal(sha256File(join(w.host, "back.bin")), expect);
    assert.deepEqual(w.list(w.host), ["back.bin", "data.bin", "data.bin.gz", "list"]);
  });

  test("comch-server/comch-client and comch-stream pairs finish without a prompt", async () => {
    const w = space("perm-comch");
    const server = runInPty(taskArgv("comch-server", ["-r", HOST_PCI, "-p", DPU_PCI, "-s", "perm", "--timeout", "60"]), w.env, LONG);
    await server.waitFor("waiting for a client", LONG);
    const client = await runInPty(taskArgv("comch-client", ["-p", HOST_PCI, "-s", "perm", "-t", "hi", "--timeout", "60"]), w.env, LONG).done;
    const s = await server.done;
    assert.equal(client.code, 0, client.output);
    assert.equal(s.code, 0, s.output);
    assert.match(s.output, /received "hi"/);
    const dpu = runInPty(taskArgv("comch-stream", ["--side", "dpu", "-r", HOST_PCI, "-p", DPU_PCI, "--timeout", "60"]), w.env, LONG);
    await dpu.waitFor("waiting for the host", LONG);
    const host = await runInPty(taskArgv("comch-stream", ["-p", HOST_PCI, "--count", "200", "--timeout", "60"]), w.env, LONG).done;
    const d = await dpu.done;
    for (const r of [client, s, host, d]) assert.doesNotMatch(r.output, PROMPT, r.output);
    assert.equal(host.code, 0, host.output);
    assert.equal(d.code, 0, d.output);
  });

  test("demo finishes without a prompt", async () => {
    const w = space("perm-demo");
    const r = await runInPty(taskArgv("demo", ["--size", "100000"]), w.env, LONG).done;
    assert.doesNotMatch(r.output, PROMPT, r.output);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /every copy verified/);
  });

  test("a flag taken away (--allow-sys=statfs from the receiver) fails naming it: no prompt, no check skipped", {
    skip: currentRuntime() === "deno" ? false : "Deno's permission flags only",
  }, async () => {
    const { w, h, d } = await pair("dpu→host", "--allow-sys=statfs");
    assert.equal(h.code, 1, `host:\n${h.output}`);
    assert.doesNotMatch(h.output + d.output, PROMPT);
    assert.match(h.output, /needs Deno's --allow-sys .*statfs/);
    assert.notEqual(d.code, 0, `the DPU is told: ${d.output}`);
    assert.deepEqual(w.list(w.host), [], "nothing left in the host's folder");
  });
});

describe(`tasks with their declared permissions, outside a terminal (${currentRuntime()})`, () => {
  const onDeno = currentRuntime() === "deno";
  const denoOnly = { skip: onDeno ? false : "Deno's permission flags only", timeout: LONG };
  /** Anything that says a Deno flag is missing (or Deno's raw error). */
  const ASKS_FOR_A_FLAG = /--allow-|NotCapable|Requires \w+ access/;

  test("without DOCA_SIM_DIR and XDG_RUNTIME_DIR the Comch tasks start and name the default folder", { timeout: LONG }, async () => {
    // Naming the default folder /tmp/doca-sim-<uid> asked for the uid with --allow-sys, which dma-copy and
    // comch-client do not declare: they failed before any work. A server name of this test's own, and only the
    // early failure (nobody answers) is checked: the default folder may be a concurrent run's.
    const w = space("perm-default-folder");
    const name = `perm-default-${process.pid}`;
    const unset = ["DOCA_SIM_DIR", "XDG_RUNTIME_DIR"];
    const runs = {
      "comch-client": await runDeclared("comch-client", ["-s", name, "--timeout", "1"], { unset, timeoutMs: LONG }),
      "dma-copy host": await runDeclared("dma-copy", ["-f", join(w.host, "x.bin"), "--server-name", name, "--timeout", "1"], {
        unset,
        timeoutMs: LONG,
      }),
      "dma-copy dpu": await runDeclared("dma-copy", ["-f", join(w.dpu, "x.bin"), "-r", HOST_PCI, "--server-name", name, "--timeout", "1"], {
        unset,
        timeoutMs: LONG,
      }),
    };
    for (const [what, r] of Object.entries(runs)) {
      assert.equal(r.code, 1, `${what}:\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, ASKS_FOR_A_FLAG, `${what}:\n${r.stderr}`);
      // nobody answers; or, on a machine whose default folder the device refuses, that refusal (not a permission)
      assert.match(r.stderr, /within 1 s \(--timeout\)|cannot be used by the software device/, `${what}:\n${r.stderr}`);
      assert.match(r.stderr, /the software device's default folder \/tmp\/doca-sim-\d+\b/, `${what}:\n${r.stderr}`);
    }
  });

  test("an output under /sys, /proc or /dev is named as a system path, not \"add --allow-all\"", denoOnly, async () => {
    const w = space("perm-system-path");
    const input = join(w.host, "in.bin");
    writePatternFile(input, 1000);
    for (const [name, args, path] of [
      ["compress", [input, "-o", "/sys/doca-ts-x.gz"], "/sys/doca-ts-x.gz"],
      ["sha", [input, "-o", "/proc/doca-ts-x"], "/proc/doca-ts-x"],
      ["ec-encode", ["-i", input, "-o", "/sys/doca-ts-x"], "/sys/doca-ts-x"],
      ["encrypt", ["--generate-key", "/sys/doca-ts-k"], "/sys/doca-ts-k"],
      ["dma-copy", ["-f", "/proc/doca-ts-x", "-r", HOST_PCI, "--timeout", "1"], "/proc/doca-ts-x"],
    ] as const) {
      const r = await runDeclared(name, [...args], { env: w.env, timeoutMs: LONG });
      assert.equal(r.code, 1, `${name}:\n${r.stderr}`);
      assert.ok(r.stderr.includes(`${path} is a system path`), `${name}:\n${r.stderr}`);
      assert.match(r.stderr, /choose another path/, `${name}:\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, /add --allow-all|run it with `deno task/, `${name}:\n${r.stderr}`);
    }
  });

  test("a missing --allow-write or --allow-read is the one permission line, never \"cannot create X\"", denoOnly, async () => {
    const w = space("perm-rewrap");
    const input = join(w.host, "in.bin");
    writePatternFile(input, 1000);
    for (const [name, args, drop] of [
      ["sha", [input, "-o", join(w.host, "list.txt")], "--allow-write"],
      ["compress", [input, "-o", join(w.host, "in.gz")], "--allow-write"],
      ["ec-encode", ["-i", input, "-o", join(w.host, "blocks")], "--allow-write"],
      ["encrypt", ["--generate-key", join(w.host, "key")], "--allow-write"],
      ["rdma-copy", ["--send", input, "--connect", "127.0.0.1:9", "--timeout", "1"], "--allow-read"],
    ] as const) {
      const r = await runDeclared(name, [...args], { env: w.env, dropFlag: drop, timeoutMs: LONG });
      assert.equal(r.code, 1, `${name}:\n${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^${name}: error: this program needs Deno's ${drop} `), `${name}:\n${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, `${name}:\n${r.stderr}`);
    }
    assert.deepEqual(w.list(w.host), ["in.bin"], "nothing written");
  });
});
