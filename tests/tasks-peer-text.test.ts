/**
 * Every byte a peer sends reaches the terminal escaped (issue 17 class 4): text with an OSC title, clear screen, a
 * CR overwrite, a forged "no problems found" line, a C1 CSI, bidi controls and NUL goes through every task that
 * prints something from a peer — comch-client and comch-server (both directions), doctor --peer (text and JSON),
 * comch-stream (a peer's stop notice and report, text and JSON), dma-copy's host and DPU sides (a FAILURE_REASON) —
 * and no raw control character or forged line may come out; JSON output must parse back to the peer's exact text.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DPU_LISTENING, startChild } from "../tasks/common/run-pair.ts";
import { HOST_PCI, DPU_PCI, type Workspace, workspaces } from "./helpers/tasks/workspace.ts";
import { HOSTILE_ARG, HOSTILE_TEXT, terminalProblem } from "./helpers/tasks/hostile-text.ts";

const space = workspaces(after);
const task = (name: string) => new URL(`../tasks/${name}.ts`, import.meta.url).pathname;
const helper = (name: string) => new URL(`./helpers/tasks/${name}.ts`, import.meta.url).pathname;
const clean = (what: string, output: string) => assert.equal(terminalProblem(output), undefined, `${what}:\n${JSON.stringify(output)}`);

/** A comch-server answering `reply`, and the given client command against it. */
async function serverAnd(w: Workspace, reply: string, client: { script: string; args: string[] }) {
  const server = startChild(task("comch-server"), ["-r", HOST_PCI, "-s", "peer-text", "-t", reply, "--timeout", "30"], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 60_000);
  await server.waitForStderr("waiting for a client", 30_000);
  const c = await startChild(client.script, client.args, { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
  const s = await server.done;
  return { client: c, server: s };
}

describe("peer text is escaped on its way to the terminal", () => {
  test("comch-client prints the server's hostile answer escaped; comch-server the client's hostile message", async () => {
    const w = space("pt-comch");
    const { client, server } = await serverAnd(w, HOSTILE_ARG, { script: task("comch-client"), args: ["-s", "peer-text", "-t", HOSTILE_ARG, "--timeout", "30"] });
    assert.equal(client.code, 0, client.stderr);
    assert.equal(server.code, 0, server.stderr);
    clean("client", client.stdout + client.stderr);
    clean("server", server.stdout + server.stderr);
    assert.match(client.stdout, /server answered "\\x1b\]0;owned\\x07\\x1b\[2J\\x0dFORGED no problems found\\x0a\\x9b31m\\u202eevil\\u200fend\\u2060\\u206a\\ufff9\\u\{e0041\}\\xad\\u3164"/);
    assert.match(server.stdout, /received "\\x1b\]0;owned/);
  });

  test("doctor --peer: the answer is escaped in the report and exact in --json", async () => {
    const w = space("pt-doctor");
    const text = await serverAnd(w, HOSTILE_ARG, { script: task("doctor"), args: ["--peer", "peer-text", "--timeout", "30"] });
    clean("doctor", text.client.stdout + text.client.stderr);
    assert.match(text.client.stdout, /self-test Comch with "peer-text": ok, answered "\\x1b\]0;owned/);
    const w2 = space("pt-doctor-json");
    const json = await serverAnd(w2, HOSTILE_ARG, { script: task("doctor"), args: ["--peer", "peer-text", "--timeout", "30", "--json"] });
    clean("doctor --json", json.client.stdout + json.client.stderr);
    const report = JSON.parse(json.client.stdout);
    assert.equal(report.selfTests.comch.answer, HOSTILE_ARG, "JSON carries the peer's exact text, \\u-escaped");
  });

  for (const json of [false, true]) {
    test(`comch-stream${json ? " --json" : ""}: a DPU's hostile stop notice and report`, async () => {
      for (const mode of ["stop", "report"]) {
        const w = space(`pt-stream-${mode}`);
        const dpu = startChild(helper("hostile-stream-dpu"), [mode], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 60_000);
        await dpu.waitForStderr("hostile stream DPU listening", 30_000);
        const host = await startChild(task("comch-stream"), ["--count", "5", "--size", "64", "--timeout", "20", ...(json ? ["--json"] : [])], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
        dpu.kill();
        await dpu.done;
        clean(`comch-stream ${mode}`, host.stdout + host.stderr);
        assert.notEqual(host.code, 0, `${mode}: a hostile report or stop is an error\n${host.stdout}${host.stderr}`);
        if (mode === "stop") assert.match(host.stderr, /error: the DPU side failed: \\x1b\]0;owned/);
        else assert.match(host.stderr, /error: the DPU side's report has no valid "bytes"/);
      }
    });
  }

  test("dma-copy: a hostile FAILURE_REASON is printed escaped by the host and by the DPU", async () => {
    const w = space("pt-dma");
    const hostile = startChild(helper("hostile-dpu"), ["escape"], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 60_000);
    await hostile.waitForStderr("hostile DPU listening", 30_000);
    const host = await startChild(task("dma-copy"), ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    hostile.kill();
    await hostile.done;
    assert.notEqual(host.code, 0);
    clean("dma-copy host", host.stdout + host.stderr);

    const w2 = space("pt-dma-dpu");
    const dpu = startChild(task("dma-copy"), ["--side", "dpu", "-f", join(w2.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "20"], { ...w2.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" }, 60_000);
    await dpu.waitForStderr(DPU_LISTENING, 30_000);
    await startChild(helper("lying-host"), ["escape-reason"], { ...w2.env, DOCA_SIM_SIDE: "host" }, 60_000).done;
    const d = await dpu.done;
    assert.notEqual(d.code, 0, d.stderr);
    clean("dma-copy dpu", d.stdout + d.stderr);
    assert.match(d.stderr, /\\x1b\]0;owned\\x07\\x1b\[2J\\x0dFORGED no problems found\\x0a\\x9b31m\\u202eevil\\u200f\\x00end/);
    assert.deepEqual(w2.list(w2.dpu), []);
  });

  test("device names from DOCA (here a crafted DOCA_SIM_CONFIG): devices (text, JSON) and the REPL summary", async () => {
    const w = space("pt-names");
    const config = join(w.root, "config.json");
    writeFileSync(config, JSON.stringify({ host: { devices: [{ pci: "0000:b1:00.1", ibdev: "mlx5\x1b]0;owned\x07\r\u202e", iface: "p0\x9b2J" }] } }));
    const env = { ...w.env, DOCA_SIM_CONFIG: config, DOCA_SIM_SIDE: "host" };
    for (const args of [[], ["--json"]]) {
      const r = await startChild(task("devices"), args, env, 60_000).done;
      assert.equal(r.code, 0, r.stderr);
      clean(`devices ${args.join(" ")}`, r.stdout + r.stderr);
      if (args.length) assert.equal(JSON.parse(r.stdout).devices[0].ibdevName, "mlx5\x1b]0;owned\x07\r\u202e");
      else assert.match(r.stdout, /mlx5\\x1b\]0;owned\\x07\\x0d\\u202e/);
    }
    const probe = await startChild(helper("summary-probe"), [], env, 60_000).done;
    assert.equal(probe.code, 0, probe.stderr);
    clean("Device.toString()", probe.stdout);
    assert.match(probe.stdout, /^Device \{ 0000:b1:00\.1 mlx5\\x1b/);
  });

  test("the one escaping function: text and JSON forms", async () => {
    const { printable, printableJson } = await import("../ffi/engine/printable.ts");
    assert.equal(
      printable(HOSTILE_TEXT),
      "\\x1b]0;owned\\x07\\x1b[2J\\x0dFORGED no problems found\\x0a\\x9b31m\\u202eevil\\u200f\\x00end\\u2060\\u206a\\ufff9\\u{e0041}\\xad\\u3164",
    );
    assert.equal(printable(printable(HOSTILE_TEXT)), printable(HOSTILE_TEXT), "escaping twice changes nothing");
    const json = printableJson({ t: HOSTILE_TEXT });
    assert.equal(terminalProblem(json), undefined);
    assert.deepEqual(JSON.parse(json), { t: HOSTILE_TEXT });
  });
});
