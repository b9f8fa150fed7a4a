/**
 * NVIDIA's DOCA 3.3 compress and SHA programs (NVIDIA-DOCA/doca-samples: samples/doca_compress compress_deflate,
 * decompress_deflate, decompress_lz4_stream; samples/doca_sha sha_create, sha_partial_create; applications
 * file_compression and file_integrity, host and DPU builds) built unmodified against the software device and run;
 * every output is confirmed by an independent tool: node:zlib, the lz4 tool (or a frame made here), node:crypto and
 * the input file itself. Nothing of NVIDIA's is in this repository: the programs come from a local snapshot of their
 * repository (tools/nvidia-snapshot.ts); without one every case skips with a line saying so. doca_argp and
 * doca_log are the stand-ins in tests/nvidia-samples; the applications' zlib fallback needs zlib.h to build.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { deflateSync, inflateRawSync, inflateSync } from "node:zlib";
import { extractSnapshot, findSnapshot, NO_SNAPSHOT } from "../tools/nvidia-snapshot.ts";
import { adler32, crc32, xxh32 } from "./helpers/checksums.ts";
import { textLike } from "./helpers/text-like.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const libDir = join(root, "build", "sim", "lib");
const standIns = join(root, "tests", "nvidia-samples");
const snapshot = findSnapshot();
const skip = snapshot ? false : NO_SNAPSHOT;
if (!snapshot) console.log(`# NVIDIA compress/SHA programs skipped: ${skip}`);
const hasZlibHeader = ["/usr/include/zlib.h", "/usr/local/include/zlib.h"].some((p) => existsSync(p));
const appsSkip = skip || (hasZlibHeader ? false : "zlib.h is not installed (Debian zlib1g-dev): NVIDIA's applications include it");
if (!skip && appsSkip) console.log(`# NVIDIA file_compression / file_integrity skipped: ${appsSkip}`);
const hasLz4Tool = spawnSync("lz4", ["--version"]).status === 0;

const DEADLINE_MS = 60_000;
/** The host device of the default configuration (the compress samples open the device their -p names). */
const HOST_PCI = "0000:b1:00.1";
let work = "";
const bin = (name: string) => join(work, "bin", name);

function run(command: string, args: string[], env: Record<string, string | undefined> = process.env): { code: number | null; out: string } {
  const r = spawnSync(command, args, { env, encoding: "utf8", timeout: 120_000, cwd: work });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

function compile(args: string[]): void {
  const r = run("cc", args);
  assert.equal(r.code, 0, `cc ${args.join(" ")}\n${r.out}`);
}

/** The software device's environment: a private folder, strict mode, the side asked for. */
function simEnv(side: "host" | "dpu" = "host", folder = "sim"): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: join(work, folder), DOCA_SIM_STRICT: "1", DOCA_SIM_SIDE: side };
  delete env.DOCA_SIM_CONFIG;
  return env;
}

/** Extracts what the programs need and compiles them (the applications twice: host and DPU, as NVIDIA's meson). */
function build(): void {
  work = mkdtempSync(join(tmpdir(), "doca-nvidia-compress-"));
  const src = join(work, "src");
  mkdirSync(src);
  mkdirSync(join(work, "bin"));
  const parts = ["samples/doca_compress", "samples/doca_sha", "samples/common.c", "samples/common.h", "samples/common_utils.h", "applications/common"];
  if (!appsSkip) parts.push("applications/file_compression", "applications/file_integrity");
  extractSnapshot(snapshot!, parts, src);
  const flags = ["-std=gnu11", "-O1", "-w", "-DDOCA_ALLOW_EXPERIMENTAL_API", `-I${join(root, "sim", "include")}`, `-I${standIns}`, `-I${src}`, `-I${join(src, "samples")}`, `-I${join(src, "applications", "common")}`];
  const common = [join(src, "samples", "common.c"), join(src, "applications", "common", "utils.c"), join(standIns, "argp_log.c")];
  const link = [`-L${libDir}`, "-ldoca_compress", "-ldoca_sha", "-ldoca_comch", "-ldoca_dma", "-ldoca_common", `-Wl,-rpath,${libDir}`];
  const compressDir = join(src, "samples", "doca_compress");
  for (const name of ["compress_deflate", "decompress_deflate", "decompress_lz4_stream"]) {
    compile([...flags, `-I${compressDir}`, join(compressDir, name, `${name}_main.c`), join(compressDir, name, `${name}_sample.c`), join(compressDir, "compress_common.c"), ...common, ...link, "-o", bin(name)]);
  }
  const shaDir = join(src, "samples", "doca_sha");
  for (const name of ["sha_create", "sha_partial_create"]) {
    compile([...flags, join(shaDir, name, `${name}_main.c`), join(shaDir, name, `${name}_sample.c`), ...common, ...link, "-o", bin(name)]);
  }
  if (appsSkip) return;
  const appCommon = [...common, join(src, "applications", "common", "comch_utils.c"), join(src, "applications", "common", "pack.c"), join(compressDir, "compress_common.c")];
  for (const app of ["file_compression", "file_integrity"]) {
    const dir = join(src, "applications", app);
    for (const [side, define] of [["host", "-DDOCA_ARCH_HOST"], ["dpu", "-DDOCA_ARCH_DPU"]]) {
      compile([...flags, define, `-I${dir}`, `-I${compressDir}`, join(dir, `${app}.c`), join(dir, `${app}_core.c`), ...appCommon, ...link, "-lz", "-o", bin(`${app}_${side}`)]);
    }
  }
}

const WORDS = ["doca ", "sample ", "deflate ", "block ", "frame ", "digest ", "\n"];
/** Text-like bytes (helpers/text-like.ts) over this file's words. */
const text = (length: number, seed = 1): Uint8Array => textLike(WORDS, length, seed);

/** An LZ4 frame of stored (uncompressed) blocks with a content checksum, made here when the lz4 tool is missing. */
function storedFrame(data: Uint8Array): Uint8Array {
  const parts: number[] = [0x04, 0x22, 0x4d, 0x18, 0x64, 0x40];
  parts.push((xxh32(new Uint8Array([0x64, 0x40])) >>> 8) & 0xff);
  const u32 = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
  for (let at = 0; at < data.length; at += 65536) {
    const block = data.subarray(at, Math.min(at + 65536, data.length));
    parts.push(...u32((block.length | 0x80000000) >>> 0), ...block);
  }
  parts.push(...u32(0), ...u32(xxh32(data)));
  return new Uint8Array(parts);
}

const noStrictReports = (log: string) => assert.doesNotMatch(log, /strict:/, "the programs do nothing DOCA leaves undefined");

describe("NVIDIA's compress and SHA programs on the software device", { skip }, () => {
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // A test, not a before hook: hooks cannot be given a timeout on every runtime (Bun keeps its 5 s), and compiling
  // eleven programs on two loaded cores takes longer.
  test("every program builds unmodified against sim/include and build/sim/lib", { timeout: 300_000 }, () => {
    build();
  });

  test("compress_deflate: raw deflate node:zlib inflates; -wf: a zlib stream; its checksum is CRC-32 | Adler-32 << 32", { timeout: 120_000 }, () => {
    const data = text(200_000);
    writeFileSync(join(work, "in.txt"), data);
    let r = run(bin("compress_deflate"), ["-p", HOST_PCI, "-f", "in.txt", "-o", "out.deflate", "-c"], simEnv());
    assert.equal(r.code, 0, r.out);
    noStrictReports(r.out);
    assert.deepEqual(new Uint8Array(inflateRawSync(readFileSync(join(work, "out.deflate")))), data);
    const checksum = BigInt(crc32(data)) | (BigInt(adler32(data)) << 32n);
    assert.match(r.out, new RegExp(`Checksum is ${checksum}\\b`));
    r = run(bin("compress_deflate"), ["-p", HOST_PCI, "-f", "in.txt", "-o", "out.zlib", "-wf"], simEnv());
    assert.equal(r.code, 0, r.out);
    assert.deepEqual(new Uint8Array(inflateSync(readFileSync(join(work, "out.zlib")))), data);
  });

  test("decompress_deflate -wf: what node:zlib deflates (zlib stream) comes back, its Adler-32 checked by the sample", { timeout: 120_000 }, () => {
    const data = text(300_000, 2);
    writeFileSync(join(work, "z.zlib"), deflateSync(data));
    const r = run(bin("decompress_deflate"), ["-p", HOST_PCI, "-f", "z.zlib", "-o", "z.out", "-wf"], simEnv());
    assert.equal(r.code, 0, r.out);
    noStrictReports(r.out);
    assert.deepEqual(new Uint8Array(readFileSync(join(work, "z.out"))), data);
  });

  test(`decompress_lz4_stream -wf: an LZ4 frame ${hasLz4Tool ? "from the lz4 tool" : "made here (no lz4 tool)"}; the sample checks the content checksum`, { timeout: 120_000 }, () => {
    const data = text(250_000, 3);
    writeFileSync(join(work, "l.txt"), data);
    if (hasLz4Tool) assert.equal(spawnSync("lz4", ["-q", "-f", join(work, "l.txt"), join(work, "l.lz4")]).status, 0);
    else writeFileSync(join(work, "l.lz4"), storedFrame(data));
    const r = run(bin("decompress_lz4_stream"), ["-p", HOST_PCI, "-f", "l.lz4", "-o", "l.out", "-wf", "-c"], simEnv());
    assert.equal(r.code, 0, r.out);
    noStrictReports(r.out);
    assert.deepEqual(new Uint8Array(readFileSync(join(work, "l.out"))), data);
  });

  test("sha_create and sha_partial_create print the SHA-256 node:crypto computes", { timeout: 120_000 }, () => {
    const short = "NVIDIA's sample on the software device";
    let r = run(bin("sha_create"), ["-d", short], simEnv());
    assert.equal(r.code, 0, r.out);
    noStrictReports(r.out);
    assert.match(r.out, new RegExp(`SHA256 output is: ${createHash("sha256").update(short).digest("hex")}`));
    const long = new TextDecoder().decode(text(1000, 4)).replaceAll("\n", " ");
    r = run(bin("sha_partial_create"), ["-d", long], simEnv());
    assert.equal(r.code, 0, r.out);
    noStrictReports(r.out);
    assert.match(r.out, new RegExp(`SHA256 output is: ${createHash("sha256").update(long).digest("hex")}`));
  });

  /** Runs an application's DPU server, then its host client; both must end 0 and the DPU's file equal the input. */
  async function runApp(app: string, size: number): Promise<{ dpu: string; host: string }> {
    const folder = `sim-${app}`;
    const data = text(size, 5);
    const input = join(work, `${app}.in`), output = join(work, `${app}.out`);
    writeFileSync(input, data);
    const start = (side: "host" | "dpu", args: string[]) => {
      const child = spawn(bin(`${app}_${side}`), args, { env: simEnv(side, folder), cwd: work, stdio: ["ignore", "pipe", "pipe"] });
      let log = "";
      child.stdout.on("data", (d) => (log += d));
      child.stderr.on("data", (d) => (log += d));
      const killer = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS);
      return { log: () => log, done: new Promise<number | null>((res) => child.on("close", (code) => (clearTimeout(killer), res(code)))) };
    };
    const dpu = start("dpu", ["-p", "03:00.1", "-r", "b1:00.1", "-f", output]);
    // The server listens at once; the client retries its connection for a while, as NVIDIA's comch_utils does.
    await new Promise((res) => setTimeout(res, 300));
    const host = start("host", ["-p", "b1:00.1", "-f", input]);
    const [hostCode, dpuCode] = await Promise.all([host.done, dpu.done]);
    assert.equal(hostCode, 0, `host:\n${host.log()}`);
    assert.equal(dpuCode, 0, `dpu:\n${dpu.log()}`);
    const digest = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
    assert.equal(digest(output), digest(input), "the DPU's file is the host's");
    noStrictReports(host.log() + dpu.log());
    return { dpu: dpu.log(), host: host.log() };
  }

  test("file_compression: the host compresses, the DPU decompresses and checks CRC-32/Adler-32; files equal", { skip: appsSkip, timeout: 180_000 }, async () => {
    const { dpu } = await runApp("file_compression", 500_000);
    assert.match(dpu, /SUCCESS: file was received and decompressed successfully/);
  });

  test("file_integrity: both sides hash with DOCA SHA and agree; files equal", { skip: appsSkip, timeout: 180_000 }, async () => {
    const { dpu } = await runApp("file_integrity", 500_000);
    assert.match(dpu, /SUCCESS: file SHA is identical to received SHA/);
  });
});
