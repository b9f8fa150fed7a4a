/**
 * The task functions a program imports choose the software device's side from their role, as dmaCopy({ side })
 * does (issue 32): runComchServer and streamConsumer run on the DPU, runComchClient and streamProducer on the host,
 * with no DOCA_SIM_SIDE in the environment. Before, a script calling runComchServer() without it failed with
 * "must run on the DPU side". Each side is its own process, started through the runtime running this file.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { startChild } from "../tasks/common/run-pair.ts";
import { type Workspace, workspace } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const helper = new URL("./helpers/tasks/role-side.ts", import.meta.url).pathname;

for (const [listener, connector] of [["server", "client"], ["consumer", "producer"]] as const) {
  test(`${listener} and ${connector} with no DOCA_SIM_SIDE: each function picks its side`, { timeout: 180_000 }, async () => {
    const w = workspace("role-side");
    spaces.push(w);
    const env = { ...w.env, DOCA_SIM_SIDE: "" }; // unset as far as the functions and the device are concerned
    const dpu = startChild(helper, [listener, `role-${listener}`], env, 150_000);
    await dpu.waitForStderr("role-side: listening", 90_000);
    const host = await startChild(helper, [connector, `role-${listener}`], env, 120_000).done;
    const d = await dpu.done;
    assert.equal(d.code, 0, d.stderr);
    assert.equal(host.code, 0, host.stderr);
    if (listener === "server") {
      assert.deepEqual(JSON.parse(d.stdout).received, ["hello"]);
      assert.equal(JSON.parse(host.stdout).length, 1, host.stdout);
    } else {
      assert.equal(JSON.parse(d.stdout).messages, 100, d.stdout);
      assert.equal(JSON.parse(host.stdout).host.messages, 100, host.stdout);
    }
  });
}
