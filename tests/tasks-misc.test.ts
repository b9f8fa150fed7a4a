/**
 * The smaller tasks, each run as a child process of this test's runtime on the software device: devices (both
 * sides), dma-local-copy, comch-server + comch-client, comch-stream, the export/exchange/transfer steps (every
 * task's --help: tests/tasks-help.test.ts).
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { repoRoot, runtimeCommand, startChild } from "../tasks/common/run-pair.ts";
import { DPU_PCI, HOST_PCI, type Workspace, workspace } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const task = (name: string) => fileURLToPath(new URL(`../tasks/${name}`, import.meta.url));

function space(): Workspace {
  const w = workspace("misc");
  spaces.push(w);
  return w;
}

async function run(name: string, args: string[], env: Record<string, string>) {
  const r = await startChild(task(name), args, env, 60_000).done;
  assert.equal(r.code, 0, `${name} ${args.join(" ")} exited ${r.code ?? r.signal}:\n${r.stderr}`);
  return r.stdout;
}

describe("devices", () => {
  test("host and DPU views (JSON)", async () => {
    const w = space();
    const host = JSON.parse(await run("devices.ts", ["--json"], { ...w.env, DOCA_SIM_SIDE: "host" }));
    const dpu = JSON.parse(await run("devices.ts", ["--json"], { ...w.env, DOCA_SIM_SIDE: "dpu" }));
    assert.equal(host.library.softwareDevice, true);
    assert.deepEqual(host.devices.map((d: { pciAddr: string }) => d.pciAddr), [HOST_PCI]);
    assert.equal(host.devices[0].caps.comchClient, true);
    assert.equal(dpu.devices[0].pciAddr, DPU_PCI);
    assert.equal(dpu.devices[0].caps.comchServer, true);
    assert.ok(dpu.devices[0].representors.some((r: { pciAddr: string }) => r.pciAddr === HOST_PCI), "DPU sees the host function's representor");
  });
  test("table", async () => {
    const out = await run("devices.ts", [], { ...space().env, DOCA_SIM_SIDE: "dpu" });
    assert.match(out, /PCI\s+IBDEV/);
    assert.match(out, new RegExp(DPU_PCI.replaceAll(".", "\\.")));
  });
});

describe("dma-local-copy", () => {
  test("text and pattern copies are byte-identical", async () => {
    const w = space();
    const text = await run("dma-local-copy.ts", ["-t", "hello DOCA"], w.env);
    assert.match(text, /destination text: hello DOCA/);
    assert.match(text, /buffers are equal/);
    const r = JSON.parse(await run("dma-local-copy.ts", ["--size", "65536", "--json"], w.env));
    const expected = createHash("sha256").update(new Uint8Array(65536).map((_, i) => (i * 31 + 7) & 0xff)).digest("hex");
    assert.equal(r.sourceSha256, expected);
    assert.equal(r.destinationSha256, expected);
    // durations in seconds, a latency in µs only as the documented exception (tasks/README.md, issue 32 #9)
    assert.ok(r.seconds > 0 && r.latencyUs > 0 && !("microseconds" in r), JSON.stringify(r));
    assert.match(text, /DMA memcpy of 10 bytes in \d+(\.\d+)? (µs|ms|s)$/m);
  });
});

describe("comch control path and stream", () => {
  test("server and client exchange text both ways", async () => {
    const w = space();
    const server = startChild(task("comch-server.ts"), ["-r", HOST_PCI, "-t", "pong:{}", "--count", "2", "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 60_000);
    await server.waitForStderr("waiting for a client", 30_000);
    const client = await run("comch-client.ts", ["-t", "ping", "--count", "2", "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "host" });
    const s = await server.done;
    assert.equal(s.code, 0, s.stderr);
    assert.equal((client.match(/server answered "pong:ping"/g) ?? []).length, 2);
    assert.equal((s.stdout.match(/received "ping"/g) ?? []).length, 2);
  });

  test("stream of N fast-path messages, in order, rate on both sides", async () => {
    const w = space();
    const dpu = startChild(task("comch-stream.ts"), ["--side", "dpu", "-r", HOST_PCI, "--json", "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 60_000);
    await dpu.waitForStderr("waiting for the host", 30_000);
    const both = JSON.parse(await run("comch-stream.ts", ["--count", "2000", "--size", "256", "--json", "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "host" }));
    const d = await dpu.done;
    assert.equal(d.code, 0, d.stderr);
    assert.equal(both.host.messages, 2000);
    assert.equal(both.dpu.messages, 2000);
    assert.equal(both.dpu.bytes, 2000 * 256);
    assert.ok(both.dpu.messagesPerSecond > 0);
    // bytes/s as --help promises, on both sides (issue 32 #9)
    assert.ok(both.host.bytesPerSecond > 0 && both.dpu.bytesPerSecond > 0, JSON.stringify(both));
  });
});

describe("steps: export-mmap → exchange-descriptor → dma-transfer", () => {
  test("the DPU reads the host's exported bytes and writes new ones into it", async () => {
    const w = space();
    const input = join(w.host, "in.bin");
    const data = new Uint8Array(10_000).map((_, i) => (i * 13) & 0xff);
    writeFileSync(input, data);
    // export-mmap keeps the map alive until its stdin closes: run it with a stdin pipe.
    const cmd = runtimeCommand(task("steps/export-mmap.ts"), ["--in", input, "--writable", "--out", join(w.host, "desc.json")]);
    const exporter = spawn(cmd.command, cmd.args, { cwd: repoRoot, env: { ...process.env, ...w.env, DOCA_SIM_SIDE: "host" }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    exporter.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    exporter.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => exporter.on("close", r));
    for (let i = 0; i < 3000 && !out.includes("\n"); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(out.includes("descriptor"), `export-mmap printed no descriptor: ${err}`);

    // Hand the descriptor over Comch (host client → DPU server), as dma-copy does.
    const receiver = startChild(task("steps/exchange-descriptor.ts"), ["--receive", join(w.dpu, "desc.json"), "-r", HOST_PCI, "--length", "10000", "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "dpu" }, 60_000);
    await receiver.waitForStderr("waiting for a descriptor", 30_000);
    await run("steps/exchange-descriptor.ts", ["--send", join(w.host, "desc.json"), "--timeout", "20"], { ...w.env, DOCA_SIM_SIDE: "host" });
    assert.equal((await receiver.done).code, 0);
    const got = JSON.parse(readFileSync(join(w.dpu, "desc.json"), "utf8"));
    const sent = JSON.parse(readFileSync(join(w.host, "desc.json"), "utf8"));
    assert.equal(got.descriptor, sent.descriptor);
    assert.equal(got.address, sent.address);

    await run("steps/dma-transfer.ts", ["--descriptor", join(w.dpu, "desc.json"), "--read", join(w.dpu, "read.bin")], { ...w.env, DOCA_SIM_SIDE: "dpu" });
    assert.deepEqual(new Uint8Array(readFileSync(join(w.dpu, "read.bin"))), data);
    writeFileSync(join(w.dpu, "patch.bin"), Uint8Array.of(0xde, 0xad, 0xbe, 0xef));
    await run("steps/dma-transfer.ts", ["--descriptor", join(w.dpu, "desc.json"), "--write", join(w.dpu, "patch.bin"), "--offset", "0"], { ...w.env, DOCA_SIM_SIDE: "dpu" });
    exporter.stdin.end();
    assert.equal(await exited, 0, err);
    // After stdin closes export-mmap prints its first 32 bytes: the DPU's write must be there.
    assert.match(out.trim().split("\n").pop()!, /^deadbeef/);
  });
});
