/**
 * Output made for people and for tools (issue 32 §3): numbers rounded for people with one unit per line, JSON
 * numbers without float noise, and a warm build of the software device that prints nothing.
 */
import "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { join } from "node:path";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { formatBytes, formatDuration, formatMicrosAll, formatRate, plural } from "../tasks/common/units.ts";
import { saneNumbers } from "../tasks/common/output.ts";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { runtimeCommand } from "./helpers/spawn-runtime.ts";
import { startChild } from "../tasks/common/run-pair.ts";
import { HOST_PCI, uniqueName } from "./helpers/sim-env.ts";

describe("numbers for people", () => {
  test("a rate below 1 KiB/s is rounded like the others", () => {
    assert.equal(formatRate(21.36763551087345, 1), "21.4 B/s");
    assert.equal(formatBytes(5), "5 B");
    assert.equal(formatBytes(0.5), "0.50 B");
    assert.equal(formatBytes(5 * 1024 * 1024), "5.00 MiB");
  });

  test("plurals", () => {
    assert.equal(plural(1, "chunk"), "1 chunk");
    assert.equal(plural(3, "chunk"), "3 chunks");
  });

  test("latencies of one line share one unit and three significant digits", () => {
    assert.deepEqual(formatMicrosAll([816.2, 900, 25856]), ["0.82 ms", "0.90 ms", "25.9 ms"]);
    // one rule for every duration (issue 32 #9): ms from 1 ms, so rdma-ping's p99 is "4.03 ms", never "4032 µs"
    assert.deepEqual(formatMicrosAll([428, 744, 1021, 4032]), ["0.43 ms", "0.74 ms", "1.02 ms", "4.03 ms"]);
    assert.deepEqual(formatMicrosAll([12.34, 816.2, 999]), ["12.3 µs", "816 µs", "999 µs"]);
    assert.deepEqual([0.0000123, 0.042, 0.0503, 1.2456, 250].map(formatDuration), ["12.3 µs", "42.0 ms", "50.3 ms", "1.25 s", "250 s"]);
  });

  test("JSON numbers: fractions rounded to three decimals, integers and strings untouched", () => {
    assert.deepEqual(saneNumbers({ seconds: 0.5800618760000001, bytes: 123, nested: [1.23456, "0.5800618760000001"] }), {
      seconds: 0.58,
      bytes: 123,
      nested: [1.235, "0.5800618760000001"],
    });
    assert.equal(JSON.stringify(saneNumbers({ s: 0.5800618760000001 })), '{"s":0.58}');
  });

  test("JSON numbers: byte counts and rates (bytes, messages per second) are whole numbers in every task's JSON", () => {
    assert.deepEqual(
      saneNumbers({ bytesPerSecond: 104857600.12345679, messagesPerSecond: 1234.5678, inputBytes: 10.5, seconds: 1.23456, peakRssBytes: 5 }),
      { bytesPerSecond: 104857600, messagesPerSecond: 1235, inputBytes: 11, seconds: 1.235, peakRssBytes: 5 },
    );
    assert.deepEqual(saneNumbers({ sides: [{ bytesPerSecond: 0.7 }] }), { sides: [{ bytesPerSecond: 1 }] }, "nested too");
  });
});

describe("every line a task prints for a person begins with the task's name (tasks/README.md)", () => {
  const dir = mkdtempSync(join(tmpdir(), "prefix-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const at = (name: string) => join(dir, name);
  const taskPath = (name: string) => join(repoRoot, "tasks", `${name}.ts`);
  /** Runs the task to a good end; every line of its stdout and stderr must begin with "NAME: ". */
  async function named(name: string, args: string[], env: Record<string, string> = {}) {
    const r = await startChild(taskPath(name), args, env, 100_000).done;
    assert.equal(r.code, 0, `${name} ${args.join(" ")}: exit ${r.code ?? r.signal}\n${r.stderr}`);
    const lines = (r.stdout + r.stderr).split("\n").filter((line) => line !== "");
    assert.ok(lines.length > 0, `${name} printed something`);
    for (const line of lines) assert.ok(line.startsWith(`${name}: `), `${name} ${args.join(" ")}: a line without the task's name: ${JSON.stringify(line)}`);
    // one arrow for "from → to" in every task (compress and decompress printed "->", issue 32 n1 item 6)
    for (const line of lines) assert.ok(!line.includes("->"), `${name}: ASCII arrow: ${JSON.stringify(line)}`);
  }

  test("the accelerator tasks, the local copy and the steps", { timeout: 400_000 }, async () => {
    writeFileSync(at("in.bin"), "some text to compress, encrypt and spread over blocks ".repeat(2000));
    await named("compress", [at("in.bin"), "-o", at("in.bin.gz")]);
    await named("decompress", [at("in.bin.gz"), "-o", at("back.bin")]);
    await named("encrypt", ["--generate-key", at("key")]);
    await named("encrypt", ["-i", at("in.bin"), "-o", at("in.enc"), "-k", at("key")]);
    await named("decrypt", ["-i", at("in.enc"), "-o", at("dec.bin"), "-k", at("key")]);
    await named("ec-encode", ["-i", at("in.bin"), "-o", at("blocks")]);
    await named("ec-recover", ["-i", at("blocks"), "-o", at("rebuilt.bin")]);
    await named("dma-local-copy", []);
    await named("dma-local-copy", ["--size", "4096"]);
  });

  test("comch-stream: both sides' lines begin with comch-stream, the side in words", { timeout: 200_000 }, async () => {
    const name = uniqueName("prefix-stream");
    const dpu = startChild(taskPath("comch-stream"), ["--side", "dpu", "-r", HOST_PCI, "-s", name, "--timeout", "60"], { DOCA_SIM_SIDE: "dpu" }, 150_000);
    await dpu.waitForStderr("waiting for the host", 100_000);
    await named("comch-stream", ["-s", name, "--count", "200", "--size", "64", "--timeout", "60"], { DOCA_SIM_SIDE: "host" });
    const d = await dpu.done;
    assert.equal(d.code, 0, d.stderr);
    for (const line of (d.stdout + d.stderr).split("\n").filter((l) => l !== "")) assert.match(line, /^comch-stream: /);
    assert.match(d.stdout, /^comch-stream: the DPU received 200 messages/m);
  });
});

describe("the software device's build", () => {
  test("a warm build prints no 'up to date' lines (--verbose does)", { timeout: 120_000 }, () => {
    const run = (args: string[]) => {
      const cmd = runtimeCommand(join(repoRoot, "scripts", "build-sim.ts"), args);
      return spawnSync(cmd.command, cmd.args, { cwd: repoRoot, encoding: "utf8", timeout: 110_000 });
    };
    run([]); // make sure it is warm
    const warm = run([]);
    assert.equal(warm.status, 0, warm.stderr);
    assert.equal(warm.stdout, "", "nothing to say when nothing was built");
    const verbose = run(["--verbose"]);
    assert.match(verbose.stdout, /up to date {2}build\/sim\/lib\/libdoca_common\.so\.3/);
  });
});

describe("output through npm, as the README shows it", () => {
  test("npm run -s deno -- task doctor --json: stdout is one JSON document, stderr has no colour codes when piped", {
    timeout: 180_000,
  }, () => {
    const r = spawnSync("npm", ["run", "-s", "deno", "--", "task", "doctor", "--json"], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 170_000,
      env: { ...process.env, NO_COLOR: "" },
    });
    assert.ok(r.status === 0 || r.status === 1, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.ok(report.libraries, "the doctor's report");
    assert.doesNotMatch(r.stderr, new RegExp(String.fromCharCode(27)), "no colour codes in deno task's line when piped");
    assert.match(r.stderr, /Task doctor/);
  });
});
