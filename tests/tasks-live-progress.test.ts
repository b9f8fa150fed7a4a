/**
 * Progress on every long run (issue 32 §6): demo, rdma-demo, comch-stream and rdma-ping draw a live line on a
 * terminal (run here inside a pseudo-terminal, `script -qec`) and print nothing of it when their output is piped.
 * The tasks that move bytes draw one format, the task's name first (issue 32 n1 item 4), and every live line is
 * erased at the end: none is left above the summary.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { repoRoot, runtimeCommand } from "./helpers/spawn-runtime.ts";
import { HOST_PCI, workspaces, writePatternFile } from "./helpers/tasks/workspace.ts";
import { join } from "node:path";
import { noRdma } from "./helpers/rdma-pair.ts";
import { testPort } from "../tools/ports.ts";
import { formatElapsed } from "../tasks/common/live-line.ts";

const hasScript = spawnSync("script", ["--version"]).status === 0;
const task = (name: string) => fileURLToPath(new URL(`../tasks/${name}.ts`, import.meta.url));
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const CR_LINE = new RegExp("\\r[^\\r\\n]*" + String.fromCharCode(27) + "\\[K");

/** Runs a task in a pseudo-terminal (stdout and stderr both the terminal) or with pipes; resolves with its output. */
function runTask(name: string, args: string[], env: Record<string, string>, terminal: boolean): Promise<{ code: number | null; out: string }> {
  const cmd = runtimeCommand(task(name), args);
  const [command, argv] = terminal
    ? ["script", ["-qec", [cmd.command, ...cmd.args].map(quote).join(" "), "/dev/null"]]
    : [cmd.command, cmd.args];
  const child = spawn(command, argv, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (out += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), 150_000);
  return new Promise((resolve) => child.on("close", (code) => (clearTimeout(killer), resolve({ code, out }))));
}

const space = workspaces(after);

/** The shared progress line: "TASK: 1.00 MiB of 8.00 MiB (12%)…" (tasks/common/progress.ts). */
const progressOf = (label: string) => new RegExp(`\\r${label}: [\\d.]+ [KMG]?i?B of [\\d.]+ [KMG]?i?B \\(\\d+%\\)`);
/** A live line left on screen: drawn (ends in ESC[K), then a line break instead of its erasure. */
const LEFT_ON_SCREEN = new RegExp("\\(\\d+%\\)[^\\r\\n]*" + String.fromCharCode(27) + "\\[K\\r?\\n");

describe("live progress lines", { skip: !hasScript && "needs script (util-linux)" }, () => {
  test("formatElapsed", () => {
    assert.equal(formatElapsed(12_400), "12 s");
    assert.equal(formatElapsed(125_000), "2 min 05 s");
  });

  test("demo: a live line per copy on a terminal, none when piped", { timeout: 300_000 }, async () => {
    const tty = await runTask("demo", ["--size", "3000000"], {}, true);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /demo: host → DPU: copying… \d+ s/);
    assert.match(tty.out, CR_LINE);
    const piped = await runTask("demo", ["--size", "3000000"], {}, false);
    assert.equal(piped.code, 0, piped.out);
    assert.doesNotMatch(piped.out, /copying…|\r/);
  });

  test("rdma-demo: a live line per copy on a terminal", { timeout: 300_000, skip: noRdma }, async () => {
    const tty = await runTask("rdma-demo", ["--loopback", "--size", "2000000"], {}, true);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /rdma-demo: copying by RDMA write… \d+ s/);
    const piped = await runTask("rdma-demo", ["--loopback", "--size", "2000000"], {}, false);
    assert.equal(piped.code, 0, piped.out);
    assert.doesNotMatch(piped.out, /copying by|\r/);
    // sizes for people in the units every task uses, never "2000000 bytes" (issue 32)
    assert.match(piped.out, /rdma-demo: write: 1\.91 MiB in \d+\.\d\d s, [\d.]+ [KMG]iB\/s, sha256 matches/);
    assert.doesNotMatch(piped.out, /\d bytes/);
  });

  test("dma-copy: the host's progress line names the task and side, and is erased before the summary", { timeout: 300_000 }, async () => {
    const w = space("live-dma-copy");
    writePatternFile(join(w.host, "f.bin"), 8 << 20);
    const paced = ["--chunk-size", "65536", "--slots", "2", "--timeout", "60"];
    const dpu = runTask("dma-copy", ["--side", "dpu", "-r", "b1:00.1", "-f", join(w.dpu, "f.bin"), ...paced], w.env, false);
    const host = await runTask("dma-copy", ["--side", "host", "-p", HOST_PCI, "-f", join(w.host, "f.bin"), ...paced], w.env, true);
    const d = await dpu;
    assert.equal(host.code, 0, host.out);
    assert.equal(d.code, 0, d.out);
    assert.match(host.out, progressOf("dma-copy: host side"), JSON.stringify(host.out.slice(0, 400)));
    assert.doesNotMatch(host.out, /\[#+\.*\]/, "no separate bar format");
    assert.doesNotMatch(host.out, LEFT_ON_SCREEN, JSON.stringify(host.out.slice(-400)));
    assert.match(host.out, /dma-copy: host side: sent /);
  });

  test("encrypt: the same line, erased at the end (it left its last percentage on screen)", { timeout: 300_000 }, async () => {
    const w = space("live-encrypt");
    writePatternFile(join(w.host, "in.bin"), 8 << 20);
    const key = join(w.host, "key");
    assert.equal((await runTask("encrypt", ["--generate-key", key], w.env, false)).code, 0);
    const r = await runTask("encrypt", ["-i", join(w.host, "in.bin"), "-o", join(w.host, "in.enc"), "-k", key], w.env, true);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, progressOf("encrypt"), JSON.stringify(r.out.slice(0, 400)));
    assert.doesNotMatch(r.out, LEFT_ON_SCREEN, JSON.stringify(r.out.slice(-400)));
  });

  test("rdma-ping: the sender's count on a terminal, none when piped", { timeout: 300_000, skip: noRdma }, async () => {
    for (const terminal of [true, false]) {
      const w = space("live-ping");
      const port = testPort();
      const listener = runTask("rdma-ping", ["--listen", `${port}`, "--timeout", "60"], w.env, false);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the sender waits for it anyway (--timeout)
      const sender = await runTask("rdma-ping", ["--connect", `127.0.0.1:${port}`, "--count", "300", "--timeout", "60"], w.env, terminal);
      const l = await listener;
      assert.equal(sender.code, 0, sender.out);
      assert.equal(l.code, 0, l.out);
      if (terminal) assert.match(sender.out, /rdma-ping: \d+ of 300 round trips measured/);
      else assert.doesNotMatch(sender.out, /round trips measured|\r/);
      w.remove();
    }
  });
});
