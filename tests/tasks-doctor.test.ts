/**
 * `doctor --json` on the software device, run as a child of this test's runtime: the libraries and how they were
 * found, sonames, the renamed Comch function's spelling (the DOCA 2.7 one when the suite runs against the 2.7
 * flavour), devices, side, the remote-DMA probes, the local DMA self-test, and a Comch round trip with a server
 * (and the problem + fix when the peer is absent).
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { OPTIONAL_DOCA_LIBRARIES } from "../ffi/load/types.ts";
import { HOST_PCI, type Workspace, workspace } from "./helpers/tasks/workspace.ts";

const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const task = (name: string) => fileURLToPath(new URL(`../tasks/${name}`, import.meta.url));
const RENAMED = "doca_comch_server_event_connection_status_changed_register";

async function doctor(args: string[], env: Record<string, string>) {
  const r = await startChild(task("doctor.ts"), ["--json", ...args], env, 90_000).done;
  return { code: r.code, stderr: r.stderr, report: JSON.parse(r.stdout) };
}

describe("doctor", () => {
  test("--help tells what it reports and how it exits", { timeout: 60_000 }, async () => {
    const r = await startChild(task("doctor.ts"), ["--help"], {}, 60_000).done;
    assert.equal(r.code, 0, r.stderr);
    for (const word of ["--json", "--peer NAME", "ptrace_scope", "Exit status"]) assert.ok(r.stdout.includes(word), word);
  });

  test("--json on the host side: libraries, sonames, spellings, devices, side, DMA probes, self-test", { timeout: 120_000 }, async () => {
    const w = workspace("doctor");
    spaces.push(w);
    const { code, stderr, report } = await doctor([], { ...w.env, DOCA_SIM_SIDE: "host" });
    assert.equal(code, 0, `${stderr}\n${JSON.stringify(report.problems)}`);
    const lib = report.libraries;
    assert.equal(lib.isSoftwareDevice, true);
    assert.match(lib.version, /^(3\.\d+\.\d+|2\.7\.\d+)-sim$/);
    const major = lib.version.startsWith("2.") ? "2" : "3";
    // the optional libraries this build has, in the order they are looked for (the 2.7 flavour builds none)
    const optional = OPTIONAL_DOCA_LIBRARIES.map((name) => `libdoca_${name}`).filter((name) => existsSync(join(lib.dir, `${name}.so`)));
    assert.deepEqual(lib.files.map((f: { lib: string }) => f.lib), ["libdoca_common", "libdoca_dma", "libdoca_comch", ...optional]);
    for (const f of lib.files) assert.equal(f.soname, `${f.lib}.so.${major}`);
    const used = lib.candidates.filter((c: { rejected?: string }) => !c.rejected);
    assert.equal(used.length, 1);
    assert.equal(used[0].dir, lib.dir);
    for (const c of lib.candidates.slice(0, -1)) assert.ok(c.rejected, `every earlier candidate says why: ${JSON.stringify(c)}`);
    const renamed = report.symbols.renamed.find((s: { name: string }) => s.name === RENAMED);
    assert.equal(renamed.resolvedAs, major === "2" ? "doca_comch_server_event_connection_register" : RENAMED);
    assert.ok(Array.isArray(report.symbols.optionalMissing));
    const host = report.devices.list.find((d: { pciAddr: string }) => d.pciAddr === HOST_PCI);
    assert.equal(host.caps.dmaMemcpy, true);
    assert.equal(host.caps.comchClient, true);
    assert.equal(report.side.side, "host");
    assert.match(report.remoteDma.mechanism, /software device/);
    assert.equal(typeof report.remoteDma.processVmReadv.ok, "boolean");
    assert.equal(report.selfTests.localDma.ok, true);
    assert.equal(report.selfTests.localDma.bytes, 1 << 20);
    assert.ok(report.selfTests.localDma.seconds > 0 && report.libraries.seconds > 0 && report.devices.seconds >= 0, "durations in seconds (tasks/README.md)");
    assert.ok(!("ms" in report.libraries) && !("ms" in report.devices) && !("ms" in report.selfTests.localDma));
    if (optional.includes("libdoca_compress")) {
      assert.equal(report.accelerators.compress.compressDeflate, true);
      assert.deepEqual(report.accelerators.sha.hash, ["sha1", "sha256", "sha512"]);
    }
    if (optional.includes("libdoca_aes_gcm")) assert.equal(report.accelerators.aesGcm.encrypt, true);
    if (optional.includes("libdoca_erasure_coding")) assert.equal(report.accelerators.erasureCoding.recover, true);
    assert.deepEqual(report.problems, []);
  });

  test("the software device's folder: a usable one is reported ok, a refused one is a problem with its fix", { timeout: 180_000 }, async () => {
    // A mode-0777 DOCA_SIM_DIR said "no problems found" although every Comch task then failed on it.
    const w = workspace("doctor-sim-dir");
    spaces.push(w);
    const good = await doctor([], { ...w.env, DOCA_SIM_SIDE: "host" });
    assert.deepEqual(good.report.libraries.softwareDeviceFolder, { path: w.env.DOCA_SIM_DIR, note: `DOCA_SIM_DIR=${w.env.DOCA_SIM_DIR}` });
    const open = join(w.root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const aFile = join(w.root, "a-file");
    writeFileSync(aFile, "");
    for (const [dir, why] of [[open, /writable by others/], [aFile, /not a directory/], [join(w.root, "no", "sim"), /cannot create it/]] as const) {
      const { code, report } = await doctor([], { ...w.env, DOCA_SIM_SIDE: "host", DOCA_SIM_DIR: dir });
      assert.equal(code, 1, JSON.stringify(report.problems));
      assert.match(report.libraries.softwareDeviceFolder.problem, why);
      const problem = report.problems.find((p: { problem: string }) => p.problem.startsWith(`DOCA_SIM_DIR=${dir} cannot be used`));
      assert.ok(problem, JSON.stringify(report.problems));
      assert.match(problem.problem, why);
      assert.match(problem.fix, /DOCA_SIM_DIR/);
    }
  });

  test("a backing library the software device lacks is a problem naming its Debian package", { timeout: 120_000 }, async () => {
    const w = workspace("doctor");
    spaces.push(w);
    const { report } = await doctor([], { ...w.env, DOCA_SIM_SIDE: "host", DOCA_SIM_ACCEL_OFF: "lz4,crypto", DOCA_SIM_LIBCRYPTO: "/nonexistent/libcrypto.so.3" });
    // a DOCA without libdoca_compress (the 2.7 flavour) has no backing library to miss: nothing to report
    if (!report.libraries.files?.some((f: { lib: string }) => f.lib === "libdoca_compress")) return;
    assert.equal(report.accelerators.compress.decompressLz4Stream, false);
    assert.equal(report.accelerators.compress.compressDeflate, true);
    assert.deepEqual(report.accelerators.sha.hash, []);
    const problems = report.problems.map((p: { problem: string; fix: string }) => `${p.problem} | ${p.fix}`).join("\n");
    assert.match(problems, /DOCA Compress: liblz4\.so\.1 not loaded .*\| apt-get install liblz4-1/);
    assert.match(problems, /DOCA SHA: libcrypto\.so\.3 not loaded .*\| apt-get install libssl3/);
    if (report.libraries.files.some((f: { lib: string }) => f.lib === "libdoca_aes_gcm")) {
      assert.equal(report.accelerators.aesGcm.encrypt, false);
      assert.match(problems, /DOCA AES-GCM: .*libcrypto\.so\.3.*\| apt-get install libssl3/);
    }
  });

  test("the text report: every accelerator, sizes in the units of `devices`, no rename that maps a function to itself", { timeout: 120_000 }, async () => {
    const w = workspace("doctor");
    spaces.push(w);
    const r = await startChild(task("doctor.ts"), [], { ...w.env, DOCA_SIM_SIDE: "host" }, 90_000).done;
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\d B\b/, "sizes as `devices` prints them (2.00 MiB), never a count of bytes");
    assert.match(r.stdout, /dma max 2\.00 MiB/);
    assert.match(r.stdout, /self-test local DMA 1\.00 MiB: ok/);
    for (const line of r.stdout.split("\n")) {
      assert.doesNotMatch(line, /->/, "words, not arrows");
      const rename = /^\s+(\w+): called (\w+) in this DOCA$/.exec(line);
      assert.ok(!rename || rename[1] !== rename[2], `a rename to itself: ${line}`);
    }
    const libs = /^libraries[^]*?^devices/m.exec(r.stdout)![0];
    if (libs.includes("libdoca_aes_gcm")) assert.match(r.stdout, /^ {2}aes-gcm encrypt, decrypt \(max /m);
    if (libs.includes("libdoca_erasure_coding")) assert.match(r.stdout, /^ {2}erasure coding create, recover \(block max /m);
  });

  // First use from the package: no repository build, the software device built into the user cache by this very run
  // (about 5 s of compiling; once, under Deno)
  test("first use: the user cache is reported as built now, not as a rejected folder", {
    timeout: 300_000,
    skip: typeof (globalThis as Record<string, unknown>).Deno === "undefined" && "run once, under Deno",
  }, async () => {
    const copy = mkdtempSync(join(tmpdir(), "doca-ts-doctor-first-"));
    try {
      for (const part of ["mod.ts", "deno.json", "package.json", "ffi", "tasks", "sim"]) cpSync(join(repoRoot, part), join(copy, part), { recursive: true });
      const w = workspace("doctor");
      spaces.push(w);
      const r = await startChild(join(copy, "tasks", "doctor.ts"), [], { ...w.env, DOCA_SIM_SIDE: "host", DOCA_LIB_DIR: "", XDG_CACHE_HOME: join(copy, "cache") }, 280_000).done;
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(r.stderr, /building the software DOCA device into/, "the run built the device");
      assert.match(r.stdout, /^ {2}used {6}\S+\/cache\/doca-ts\/\S+ {2}\[user cache\] \(built now\)$/m);
      assert.doesNotMatch(r.stdout, /rejected .*\[user cache\]/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test("DPU side: representors listed, side dpu", { timeout: 120_000 }, async () => {
    const w = workspace("doctor");
    spaces.push(w);
    const { code, report } = await doctor([], { ...w.env, DOCA_SIM_SIDE: "dpu" });
    assert.equal(code, 0, JSON.stringify(report.problems));
    assert.equal(report.side.side, "dpu");
    const withRep = report.devices.list.find((d: { representors: unknown[] }) => d.representors.length > 0);
    assert.equal(withRep.representors[0].pciAddr, HOST_PCI);
    assert.equal(withRep.caps.comchServer, true);
  });

  test("--peer: a Comch round trip with a server; an absent peer is a problem with a fix", { timeout: 240_000 }, async () => {
    const w = workspace("doctor");
    spaces.push(w);
    const name = `doctor-${process.pid}`;
    const server = startChild(task("comch-server.ts"), ["-r", HOST_PCI, "-s", name, "-t", "pong:{}", "--timeout", "60"], {
      ...w.env,
      DOCA_SIM_SIDE: "dpu",
    }, 90_000);
    await server.waitForStderr("waiting for a client", 60_000);
    const ok = await doctor(["--peer", name, "--timeout", "30"], { ...w.env, DOCA_SIM_SIDE: "host" });
    assert.equal(ok.code, 0, `${ok.stderr}\n${JSON.stringify(ok.report.problems)}`);
    assert.equal(ok.report.selfTests.comch.ok, true);
    assert.equal(ok.report.selfTests.comch.answer, "pong:doca-ts doctor");
    assert.equal((await server.done).code, 0);

    const absent = await doctor(["--peer", `${name}-absent`, "--timeout", "1"], { ...w.env, DOCA_SIM_SIDE: "host" });
    assert.equal(absent.code, 1);
    assert.equal(absent.report.selfTests.comch.ok, false);
    assert.match(absent.report.problems[0].fix, /comch-server/);
  });
});

describe("doctor prints each check as it finishes", () => {
  test("while --peer waits, the report so far is on stdout; Ctrl-C keeps it", { timeout: 120_000 }, async () => {
    const w = workspace("doctor-stream");
    spaces.push(w);
    const child = startChild(task("doctor.ts"), ["--peer", "nobody-answers", "--timeout", "60"], { ...w.env, DOCA_SIM_SIDE: "host" }, 110_000);
    const out = () => child.stdout?.() ?? "";
    const deadline = Date.now() + 90_000;
    let exited = false;
    void child.done.then(() => (exited = true));
    while (!/waiting up to 60 s/.test(out()) && Date.now() < deadline && !exited) await new Promise((r) => setTimeout(r, 50));
    assert.equal(exited, false, "still waiting for the peer");
    assert.match(out(), /^runtime .*\nlibraries \(/m, "the libraries were printed before the wait ended");
    assert.match(out(), /self-test local DMA .*: ok/);
    child.signal!("SIGINT");
    const r = await child.done;
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stdout, /devices \(/, "what was checked stays on the screen");
    assert.match(r.stderr, /^doctor: interrupted \(SIGINT\)/m, "the stop line names the task");
  });
});
