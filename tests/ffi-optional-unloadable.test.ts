/**
 * An optional DOCA library (libdoca_rdma and the accelerators) that is present but cannot be loaded — truncated,
 * built for another architecture, not ELF at all, or refused by dlopen — counts as absent: the others load, DMA
 * works, the library's functions are missing (has(), optionalMissing), loadDoca's optionalUnloadable and doctor
 * name the file and what is wrong, and its wrappers' NOT_SUPPORTED says so. A truncated file used to crash the whole
 * process inside dlopen (SIGBUS), a non-ELF one to fail the whole load. A broken required library (libdoca_dma) stays
 * an error naming the file and the reason. Each case runs in a child process against a folder of copies of the
 * software device's libraries (DOCA_LIB_DIR).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { simDir } from "./helpers/sim-env.ts";
import { loadDoca } from "../mod.ts";
import { repoRoot, runtimeCommand, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { unloadableReason } from "../ffi/load/elf-check.ts";

const ALL = ["common", "dma", "comch", "rdma", "compress", "sha", "erasure_coding", "aes_gcm"] as const;

/** A folder with a copy of every library this DOCA has; the caller then breaks some. */
function libraryFolder(): string {
  const info = loadDoca();
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-broken-lib-"));
  for (const lib of ALL) if (info.files[lib]) copyFileSync(info.files[lib], join(dir, `libdoca_${lib}.so`));
  return dir;
}

/** The optional libraries the cases below break are not part of every DOCA (CI's DOCA 2.7 lane has none of them). */
const noOptional = ALL.some((lib) => !loadDoca().files[lib]) && "this DOCA lacks an optional library these cases break (DOCA 2.7 has none)";

const truncate = (path: string, bytes: number) => writeFileSync(path, readFileSync(path).subarray(0, bytes));
/** Sets e_machine to aarch64 (183): a library of another architecture. */
function otherArchitecture(path: string): void {
  const data = readFileSync(path);
  data.writeUInt16LE(183, 18);
  writeFileSync(path, data);
}

async function runChild(dir: string) {
  const child = spawnRuntime(new URL("./helpers/optional-unloadable-child.ts", import.meta.url), {
    env: { DOCA_LIB_DIR: dir, DOCA_SIM_DIR: simDir },
  });
  const line = await child.readLine(90_000).catch(async (e) => {
    const code = await child.exited; // a crash inside dlopen (SIGBUS) ends it with no line and no message
    throw new Error(`${e.message}; exit ${code ?? child.process.signalCode}; child stderr: ${child.stderr}`);
  });
  const code = await child.exited;
  return { line, code, stderr: child.stderr };
}

interface DoctorJson {
  symbols: { optionalUnloadable: { library: string; path: string; reason: string }[] };
  problems: { problem: string; fix: string }[];
  selfTests: { localDma: { ok: boolean } };
}

/** A task under this runtime against `dir`: its exit status and stderr. */
function runTask(dir: string, name: string, args: string[]): Promise<{ code: number; stderr: string }> {
  const { command, args: argv } = runtimeCommand(join(repoRoot, "tasks", `${name}.ts`), args);
  return new Promise((resolve) => {
    execFile(command, argv, { cwd: repoRoot, env: { ...process.env, DOCA_LIB_DIR: dir, DOCA_SIM_DIR: simDir, NO_COLOR: "1" }, timeout: 90_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stderr });
    });
  });
}

/** `doctor --json` under this runtime against `dir`: its exit status and report (it exits 1 when it found problems). */
function runDoctor(dir: string): Promise<{ code: number; report: DoctorJson }> {
  const { command, args } = runtimeCommand(join(repoRoot, "tasks/doctor.ts"), ["--json"]);
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: repoRoot, env: { ...process.env, DOCA_LIB_DIR: dir, DOCA_SIM_DIR: simDir }, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      try {
        resolve({ code, report: JSON.parse(stdout) });
      } catch {
        reject(new Error(`doctor exited ${code} without a JSON report; stderr: ${stderr}`));
      }
    });
  });
}

test("ffi: the ELF check names a truncated, foreign or non-ELF library and passes a good one", { timeout: 30_000, skip: noOptional }, () => {
  const dir = libraryFolder();
  try {
    const path = (lib: string) => join(dir, `libdoca_${lib}.so`);
    assert.equal(unloadableReason(path("dma")), undefined);
    truncate(path("rdma"), 1000);
    assert.match(unloadableReason(path("rdma"))!, /^truncated: 1000 bytes, but its loadable segments need \d+$/);
    truncate(path("sha"), 40);
    assert.match(unloadableReason(path("sha"))!, /^truncated: 40 bytes, shorter than an ELF header$/);
    otherArchitecture(path("compress"));
    assert.equal(unloadableReason(path("compress"), "x64"), "built for aarch64, but this process runs on x86-64");
    writeFileSync(path("aes_gcm"), "not a library\n");
    assert.match(unloadableReason(path("aes_gcm"))!, /^not an ELF file/);
    assert.match(unloadableReason(join(dir, "absent.so"))!, /^cannot be opened/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ffi: broken optional libraries count as absent; the load, DMA and doctor go on and name them", { timeout: 180_000, skip: noOptional }, async () => {
  const dir = libraryFolder();
  try {
    truncate(join(dir, "libdoca_rdma.so"), 1000); // SIGBUS inside dlopen before
    otherArchitecture(join(dir, "libdoca_sha.so"));
    writeFileSync(join(dir, "libdoca_compress.so"), "garbage\n");
    // passes the ELF check, refused by dlopen itself: it needs a library that is not there
    const src = join(dir, "needs.c");
    writeFileSync(src, "int doca_ts_gone(void); int f(void) { return doca_ts_gone(); }\n");
    writeFileSync(join(dir, "gone.c"), "int doca_ts_gone(void) { return 1; }\n");
    execFileSync("cc", ["-shared", "-fPIC", "-o", join(dir, "libdocats_gone.so"), join(dir, "gone.c")]);
    execFileSync("cc", ["-shared", "-fPIC", "-o", join(dir, "libdoca_aes_gcm.so"), src, `-L${dir}`, "-ldocats_gone"]);
    rmSync(join(dir, "libdocats_gone.so"));

    const { line, code, stderr } = await runChild(dir);
    assert.equal(code, 0, stderr);
    const r = JSON.parse(line);
    assert.equal(r.loadError, undefined);
    assert.equal(r.copied, true);
    assert.equal(r.files.rdma, undefined);
    assert.equal(r.files.sha, undefined);
    assert.equal(r.files.erasure_coding, join(dir, "libdoca_erasure_coding.so"));
    const reasons = Object.fromEntries(r.unloadable.map((u: { library: string; path: string; reason: string }) => [u.library, u]));
    assert.deepEqual(Object.keys(reasons).sort(), ["aes_gcm", "compress", "rdma", "sha"]);
    assert.equal(reasons.rdma.path, join(dir, "libdoca_rdma.so"));
    assert.match(reasons.rdma.reason, /^truncated: 1000 bytes/);
    assert.match(reasons.sha.reason, /^built for aarch64/);
    assert.match(reasons.compress.reason, /^not an ELF file/);
    assert.match(reasons.aes_gcm.reason, /libdocats_gone\.so: cannot open shared object file/);
    assert.equal(r.hasRdmaCreate, false);
    assert.equal(r.hasShaCreate, false);
    assert.equal(r.rdmaCreateMissing, true);
    assert.match(r.errors[0], /^DOCA_ERROR_NOT_SUPPORTED doca_rdma_\w+ failed: .*libdoca_rdma \(.*\) could not be loaded: truncated/);
    assert.match(r.errors[1], /^DOCA_ERROR_NOT_SUPPORTED /);
    assert.match(r.missingReasons[0], /^libdoca_compress \(.*libdoca_compress\.so\) could not be loaded: not an ELF file/);
    assert.match(r.missingReasons[1], /^libdoca_sha \(.*\) could not be loaded: built for aarch64/);
    assert.match(r.missingReasons[2], /^libdoca_aes_gcm \(.*\) could not be loaded: .*libdocats_gone\.so/);

    const { code: doctorCode, report } = await runDoctor(dir);
    assert.equal(doctorCode, 1); // problems found
    assert.deepEqual(report.symbols.optionalUnloadable.map((u) => u.library).sort(), [
      "libdoca_aes_gcm",
      "libdoca_compress",
      "libdoca_rdma",
      "libdoca_sha",
    ]);
    const problem = report.problems.find((p) => p.problem.startsWith("libdoca_rdma "));
    assert.ok(problem, JSON.stringify(report.problems));
    assert.match(problem.problem, /is present but cannot be loaded: truncated: 1000 bytes/);
    assert.match(problem.fix, /libdoca_rdma\.so with a working copy/);
    assert.equal(report.selfTests.localDma.ok, true);

    // the RDMA tasks name the file and the reason too, not "this DOCA has no libdoca_rdma"
    writeFileSync(join(dir, "send.bin"), "x");
    const rdmaCopy = await runTask(dir, "rdma-copy", ["--send", join(dir, "send.bin"), "--connect", "127.0.0.1:9", "--timeout", "1"]);
    assert.equal(rdmaCopy.code, 1, rdmaCopy.stderr);
    assert.match(rdmaCopy.stderr, /^rdma-copy: error: .*libdoca_rdma\.so could not be loaded \(truncated: 1000 bytes.*\): RDMA tasks need it/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ffi: a broken required library is an error naming the file and what is wrong", { timeout: 120_000 }, async () => {
  const dir = libraryFolder();
  try {
    truncate(join(dir, "libdoca_dma.so"), 5000);
    const { line, code, stderr } = await runChild(dir);
    assert.equal(code, 0, stderr);
    const r = JSON.parse(line);
    assert.match(r.loadError, /^cannot load libdoca_dma from .*libdoca_dma\.so: truncated: 5000 bytes, .*set DOCA_LIB_DIR/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
