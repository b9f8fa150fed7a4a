/**
 * Two sides in different user namespaces (the DPU side under `unshare -Ur`, as in a container) cannot reach each
 * other's memory on the software device: both sides get an explanation naming user namespaces, not a bare
 * DOCA_ERROR_NOT_PERMITTED, and no file is left behind.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { repoRoot, runtimeCommand } from "../tasks/common/run-pair.ts";
import { DPU_PCI, HOST_PCI, type Workspace, workspace, writePatternFile } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const script = join(repoRoot, "tasks", "dma-copy.ts");
const userns = spawnSync("unshare", ["-Ur", "true"]).status === 0;

function run(argv: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (out += d));
    const t = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("close", (code) => (clearTimeout(t), resolve({ code, out })));
  });
}

test("sides in different user namespaces get an explanation, not a bare NOT_PERMITTED", {
  skip: userns ? false : "unshare -Ur is not allowed here",
}, async () => {
  const w = workspace("userns");
  spaces.push(w);
  writePatternFile(join(w.host, "f.bin"), 100_000);
  const dpuCmd = runtimeCommand(script, ["-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "60"]);
  const dpu = run(["unshare", "-Ur", dpuCmd.command, ...dpuCmd.args], { ...w.env, DOCA_TS_ANNOUNCE_LISTEN: "1" });
  // The host retries connecting until the DPU listens (within its --timeout).
  const hostCmd = runtimeCommand(script, ["-f", join(w.host, "f.bin"), "-p", HOST_PCI, "--timeout", "60"]);
  const [h, d] = await Promise.all([run([hostCmd.command, ...hostCmd.args], w.env), dpu]);
  assert.notEqual(d.code, 0, d.out);
  assert.notEqual(h.code, 0, h.out);
  assert.match(d.out, /same user in the same user namespace/, d.out);
  // The DPU explains, and so does the host: the DPU's reason is sent before it leaves, and a reason sent before a
  // disconnection is always delivered (sim: read past the kernel's reset report; tasks: kept whoever waits).
  assert.match(h.out, /same user in the same user namespace/, h.out);
  assert.deepEqual(w.list(w.dpu), []);
});
