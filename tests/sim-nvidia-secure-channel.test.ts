/**
 * NVIDIA's secure_channel application (DOCA 3.3, NVIDIA-DOCA/doca-samples applications/secure_channel: a Comch
 * server on the DPU, a client on the host, each streaming messages to the other through a producer/consumer fast
 * path), built unmodified against the software device for both sides and run as their guide says, with strict mode
 * on. It ends well on both sides, and strict mode's summary names its one misuse with its true count: it frees each
 * of its posted receive tasks (after releasing the task's buffer) before stopping the consumer, one misuse per task,
 * counted once (not also as a buffer released while in use, nor as tasks left unfreed at the consumer's destroy).
 * Skipped, saying so, without a snapshot of the samples repository (tools/nvidia-snapshot.ts).
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "./helpers/spawn-runtime.ts";
import { extractSnapshot, findSnapshot, NO_SNAPSHOT } from "../tools/nvidia-snapshot.ts";

const snapshot = findSnapshot();
const skip = snapshot ? false : NO_SNAPSHOT;
if (!snapshot) console.log(`# NVIDIA secure_channel skipped: ${skip}`);

const MESSAGES = 1000;
const DEADLINE_MS = 120_000;
let work = "";

/** Compiles secure_channel twice, as NVIDIA's meson does: for the host, and for the DPU (DOCA_ARCH_DPU). */
function build(): { host: string; dpu: string } {
  work = mkdtempSync(join(tmpdir(), "doca-nvidia-sc-"));
  const src = join(work, "src");
  mkdirSync(src);
  const common = "applications/common";
  extractSnapshot(snapshot!, [
    "applications/secure_channel", `${common}/comch_utils.c`, `${common}/comch_utils.h`, `${common}/utils.c`,
    `${common}/utils.h`, "samples/common.c", "samples/common.h", "samples/common_utils.h",
  ], src);
  const libDir = join(repoRoot, "build", "sim", "lib");
  const standIns = join(repoRoot, "tests", "nvidia-samples");
  const app = join(src, "applications", "secure_channel");
  // -std=gnu11 as NVIDIA's meson builds them; their warnings are theirs (ours are -Werror in the device build)
  const flags = ["-std=gnu11", "-O1", "-w", "-DDOCA_ALLOW_EXPERIMENTAL_API", `-I${join(repoRoot, "sim", "include")}`, `-I${standIns}`, `-I${src}`,
    `-I${join(src, common)}`, `-I${join(src, "samples")}`, `-I${app}`];
  const sources = [join(app, "secure_channel.c"), join(app, "secure_channel_core.c"), join(src, common, "comch_utils.c"),
    join(src, common, "utils.c"), join(src, "samples", "common.c"), join(standIns, "argp_log.c")];
  const libs = [`-L${libDir}`, "-ldoca_comch", "-ldoca_common", "-lpthread", `-Wl,-rpath,${libDir}`];
  const out = { host: join(work, "secure_channel_host"), dpu: join(work, "secure_channel_dpu") };
  for (const [side, define] of [["host", []], ["dpu", ["-DDOCA_ARCH_DPU"]]] as const) {
    const cc = spawnSync("cc", [...flags, ...define, ...sources, ...libs, "-o", out[side]], { encoding: "utf8", timeout: 120_000 });
    assert.equal(cc.status, 0, `building secure_channel (${side}):\n${cc.stderr}`);
  }
  return out;
}

interface Side {
  log: string;
  /** Resolves with the exit code (null: killed at the deadline). */
  done: Promise<number | null>;
}

function startSide(program: string, args: string[], env: Record<string, string | undefined>): Side {
  const child = spawn(program, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const side: Side = { log: "", done: Promise.resolve(null) };
  child.stdout.on("data", (d) => (side.log += d));
  child.stderr.on("data", (d) => (side.log += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS);
  side.done = new Promise((resolve) => child.on("close", (code) => (clearTimeout(killer), resolve(code))));
  return side;
}

/** Waits until `side` printed `text` (or ended, or the deadline passed: the caller's assertions then say why). */
async function printed(side: Side, text: string): Promise<void> {
  let ended = false;
  side.done.then(() => (ended = true));
  for (const deadline = Date.now() + DEADLINE_MS; !side.log.includes(text) && !ended && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("NVIDIA's secure_channel on the software device", { skip }, () => {
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("both sides stream their messages and end well; strict mode names its one misuse, counted once per task", async () => {
    const bin = build();
    const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: join(work, "sim"), DOCA_SIM_STRICT: "1" };
    delete env.DOCA_SIM_CONFIG;
    delete env.DOCA_SIM_SHUFFLE;
    const size = ["-s", "256", "-n", String(MESSAGES)];
    // The DPU side first, as its guide has it; the host once the DPU's server waits for it
    const dpu = startSide(bin.dpu, ["-p", "03:00.1", "-r", "b1:00.1", ...size], { ...env, DOCA_SIM_SIDE: "dpu" });
    await printed(dpu, "waiting on a client");
    const host = startSide(bin.host, ["-p", "b1:00.1", ...size], { ...env, DOCA_SIM_SIDE: "host" });
    const codes = { host: await host.done, DPU: await dpu.done };
    for (const [side, ran] of [["host", host], ["DPU", dpu]] as const) {
      assert.equal(codes[side], 0, `${side} side:\n${ran.log}`);
      assert.match(ran.log, new RegExp(`Producer sent ${MESSAGES} messages`), `${side} side:\n${ran.log}`);
      assert.match(ran.log, new RegExp(`Consumer received ${MESSAGES} messages`), `${side} side:\n${ran.log}`);
      // its teardown frees each posted receive (buffer released first) before stopping the consumer
      assert.match(ran.log, new RegExp(`strict: summary: ${MESSAGES} reports of 1 kind\\n`), `${side} side:\n${ran.log}`);
      assert.match(ran.log, new RegExp(`strict: +${MESSAGES} x free-inflight-task: doca_task_free\\(comch_consumer_post_recv\\)`), `${side} side:\n${ran.log}`);
      assert.doesNotMatch(ran.log, /release-held-buf|destroy-with-children|task-not-freed|leak/, `${side} side:\n${ran.log}`);
    }
  });
});
