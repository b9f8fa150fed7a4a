/**
 * Clean shutdown survives the wrappers (issue 18 §3): Ctrl-C typed into a terminal (a real pseudo-terminal, via
 * util-linux `script`; the tty driver sends SIGINT to the whole foreground process group, wrappers included, and the
 * wrappers forward it again) ends `npm run deno -- task dma-copy`, `deno task dma-copy`, `node_modules/.bin/bun
 * tasks/dma-copy.ts` and `node --import tsx tasks/dma-copy.ts` with the same line, cleanup, peer notice and status as
 * a direct run, and the calling shell goes on with that status ($? is 130). Not `npx bun`: npx (npm exec) dies of
 * the terminal's SIGINT itself whatever its child does, so the calling shell dies with it (issue 32 #11).
 *
 * The calling shell is bash, named (script runs $SHELL, /bin/sh when unset). Bash goes on when its child ends with a
 * status after a SIGINT and dies only when the child died of it; that difference is what "exit 130" buys. Debian's
 * /bin/sh (dash) dies of any SIGINT typed while it waits, whatever the child does, so with it the line proves nothing
 * (a fresh CI machine has no SHELL set: this file failed there before bash was named).
 *
 * Normal group: per wrapper, 2 interruptions of a DPU receiving a copy (temporary file removed, the host told
 * "interrupted (SIGINT)"). Slow group (DOCA_TS_SLOW=1): per wrapper, 20 interruptions of a DPU waiting for its host.
 * The commands are the same whichever runtime runs this file, so only the Deno run executes them.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { DPU_PCI, HOST_PCI, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const bash = ["/bin/bash", "/usr/bin/bash"].find((p) => existsSync(p));
const hasScript = spawnSync("script", ["--version"]).status === 0;
const skip = currentRuntime() !== "deno"
  ? "the wrappers run the same commands whichever runtime runs this file: the Deno run covers them"
  : !hasScript
  ? "no util-linux `script` for a pseudo-terminal"
  : !bash
  ? "no bash to be the calling shell"
  : false;
const SLOW = process.env.DOCA_TS_SLOW === "1";
const deno = join(repoRoot, "node_modules", "deno", "deno");
const quote = (args: string[]) => args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");

const WRAPPERS: Record<string, (args: string[]) => string> = {
  "npm run deno -- task": (args) => `npm run --silent deno -- task dma-copy ${quote(args)}`,
  "deno task": (args) => `${quote([deno])} task dma-copy ${quote(args)}`,
  "node_modules/.bin/bun": (args) => `node_modules/.bin/bun tasks/dma-copy.ts ${quote(args)}`,
  "node --import tsx": (args) => `node --import tsx tasks/dma-copy.ts ${quote(args)}`,
};

/**
 * Runs `command` in a pseudo-terminal, types Ctrl-C once `ready()` holds (checked every 20 ms, failing loudly after
 * 60 s), and resolves with the terminal's output and the command's exit status (script -e). The shell then prints
 * "shell went on: STATUS": script -e says 130 also for a shell killed by SIGINT, which this line tells apart.
 */
function ctrlCInTerminal(command: string, env: Record<string, string>, ready: (output: string) => boolean): Promise<{ status: number | null; output: string }> {
  const child = spawn("script", ["-qec", `${command}; echo "shell went on: $?"`, "/dev/null"], { cwd: repoRoot, env: { ...process.env, ...env, SHELL: bash! }, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (output += d));
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (ready(output)) {
        clearInterval(poll);
        child.stdin!.write("\x03");
      } else if (Date.now() - started > 60_000) {
        clearInterval(poll);
        child.kill("SIGKILL");
        reject(new Error(`not ready within 60 s: ${command}\n${output}`));
      }
    }, 20);
    child.on("close", (status) => {
      clearInterval(poll);
      child.stdin!.destroy();
      resolve({ status, output });
    });
  });
}

/** The terminal echoes ^C; the task's line may follow another log line the copy printed meanwhile. */
const cleanLine = /\^C[^]*dma-copy: DPU side: interrupted \(SIGINT\) while .*was not created/;

describe("Ctrl-C in a terminal through every wrapper", { skip }, () => {
  for (const [name, wrap] of Object.entries(WRAPPERS)) {
    test(`${name}: 2 interruptions mid-copy — the line, no temporary file, the host told, exit 130`, { timeout: 300_000 }, async () => {
      for (let i = 0; i < 2; i++) {
        const w = workspace("wrap");
        spaces.push(w);
        writePatternFile(join(w.host, "f.bin"), 16 * 1024 * 1024, i + 1);
        const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "30"];
        let host: ReturnType<typeof startChild> | undefined;
        const dpu = ctrlCInTerminal(
          wrap(["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...paced]),
          { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" },
          (out) => {
            if (!host && out.includes("waiting for the host")) {
              host = startChild(new URL("../tasks/dma-copy.ts", import.meta.url).pathname, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced, "--quiet"], { ...w.env, DOCA_SIM_SIDE: "host" }, 120_000);
            }
            return host !== undefined && w.list(w.dpu).length > 0; // its temporary file: the copy is under way
          },
        );
        const d = await dpu;
        const h = await host!.done;
        const context = `${name} #${i + 1}\nterminal (${d.status}):\n${d.output}\nhost (${h.code}): ${h.stderr}`;
        assert.match(d.output, cleanLine, context);
        assert.match(d.output, /shell went on: 130/, context);
        assert.doesNotMatch(d.output, /Uncaught|cleanup did not finish/, context);
        assert.deepEqual(w.list(w.dpu), [], `no file and no temporary file; ${context}`);
        assert.notEqual(h.code, 0, context);
        assert.match(h.stderr, /the DPU side stopped: interrupted \(SIGINT\)/, context);
      }
    });
  }

  test("the terminal goes away mid-copy (ssh dropped: its pty closes): the receiver gets SIGHUP and stops cleanly", { timeout: 120_000 }, async () => {
    const w = workspace("wrap-hup");
    spaces.push(w);
    writePatternFile(join(w.host, "f.bin"), 16 * 1024 * 1024);
    const paced = ["--chunk-size", "8192", "--slots", "1", "--timeout", "30"];
    const terminal = spawn("script", ["-qec", WRAPPERS["deno task"](["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...paced]), "/dev/null"], {
      cwd: repoRoot,
      env: { ...process.env, ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" },
      stdio: ["pipe", "pipe", "ignore"],
    });
    let output = "";
    terminal.stdout!.setEncoding("utf8").on("data", (d: string) => (output += d));
    for (let i = 0; i < 3000 && !output.includes("waiting for the host"); i++) await new Promise((r) => setTimeout(r, 20));
    const host = startChild(new URL("../tasks/dma-copy.ts", import.meta.url).pathname, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...paced, "--quiet"], { ...w.env, DOCA_SIM_SIDE: "host" }, 120_000);
    for (let i = 0; i < 3000 && w.list(w.dpu).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(w.list(w.dpu).length > 0, `the copy never started:\n${output}`);
    terminal.kill("SIGKILL"); // the terminal window closed: the kernel hangs up its pty
    const h = await host.done;
    terminal.stdin!.destroy();
    assert.notEqual(h.code, 0, h.stderr);
    // The kernel hangs up the pty: SIGHUP, and writes to it fail; whichever the DPU notices first is the reason it gives
    assert.match(h.stderr, /the DPU side stopped: interrupted \((SIGHUP|SIGPIPE: std(err|out) closed)\)/, h.stderr);
    for (let i = 0; i < 500 && w.list(w.dpu).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(w.list(w.dpu), [], "no file and no temporary file");
  });

  for (const [name, wrap] of Object.entries(WRAPPERS)) {
    test(`${name}: 20 interruptions of a waiting DPU, each with the clean line and exit 130`, { skip: SLOW ? false : "slow group (DOCA_TS_SLOW=1)", timeout: 300_000 }, async () => {
      const w = workspace("wrap-wait");
      spaces.push(w);
      for (let i = 0; i < 20; i++) {
        const r = await ctrlCInTerminal(
          wrap(["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "60"]),
          { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" },
          (out) => out.includes("waiting for the host"),
        );
        const context = `${name} #${i + 1} (${r.status}):\n${r.output}`;
        assert.match(r.output, /\^C[^]*dma-copy: DPU side: interrupted \(SIGINT\) while waiting for the host side to connect/, context);
        assert.match(r.output, /shell went on: 130/, context);
        assert.deepEqual(w.list(w.dpu), [], context);
      }
    });
  }
});
