/**
 * NVIDIA's DOCA 3.3 AES-GCM and erasure coding samples (NVIDIA-DOCA/doca-samples: samples/doca_aes_gcm
 * aes_gcm_encrypt and aes_gcm_decrypt, samples/doca_erasure_coding erasure_coding_recover), built unmodified against
 * the software device's headers and libraries, run, and their output confirmed independently: node:crypto decrypts
 * what aes_gcm_encrypt wrote and encrypts what aes_gcm_decrypt must open; the file erasure_coding_recover rebuilds
 * equals the original. Also: everything NVIDIA's storage application (applications/storage) uses of
 * doca_erasure_coding.h is declared by ours. Nothing of NVIDIA's is in this repository: the samples come from a
 * local snapshot (tools/nvidia-snapshot.ts); without one every case is skipped with a line saying so.
 * doca_argp and doca_log are the stand-ins of tests/nvidia-samples.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import crypto from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { extractSnapshot, findSnapshot, NO_SNAPSHOT } from "../tools/nvidia-snapshot.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const libDir = join(root, "build", "sim", "lib");
const standIns = join(root, "tests", "nvidia-samples");
const snapshot = findSnapshot();
const skip = snapshot ? false : NO_SNAPSHOT;
if (!snapshot) console.log(`# NVIDIA AES-GCM and erasure coding samples skipped: ${skip}`);

let work = "";
const bin = (name: string) => join(work, "bin", name);

function cc(args: string[]): void {
  const r = spawnSync("cc", args, { encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, `cc ${args.join(" ")}\n${r.stdout}\n${r.stderr}`);
}

/** Runs a sample with a private DOCA_SIM_DIR in strict mode; its exit status, output and what strict mode said. */
function sample(name: string, args: string[]): { status: number | null; log: string } {
  const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: join(work, "sim"), DOCA_SIM_STRICT: "1" };
  delete env.DOCA_SIM_CONFIG;
  delete env.DOCA_SIM_SIDE;
  const r = spawnSync(bin(name), ["-p", "b1:00.1", ...args], { cwd: work, env, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, log: `${r.stdout}${r.stderr}` };
}

describe("NVIDIA's AES-GCM and erasure coding samples on the software device", { skip }, () => {
  before(() => {
    work = mkdtempSync(join(tmpdir(), "doca-nvidia-accel-"));
    const src = join(work, "src");
    mkdirSync(src);
    mkdirSync(join(work, "bin"));
    mkdirSync(join(work, "sim"));
    extractSnapshot(snapshot!, [
      "samples/doca_aes_gcm",
      "samples/doca_erasure_coding",
      "samples/common.c",
      "samples/common.h",
      "samples/common_utils.h",
      "applications/common/utils.c",
      "applications/common/utils.h",
      "applications/storage",
    ], src);
    // -std=gnu11 as NVIDIA's meson builds them; their warnings are theirs, ours (-Werror) are in the device build
    const flags = ["-std=gnu11", "-O1", "-w", "-DDOCA_ALLOW_EXPERIMENTAL_API", `-I${join(root, "sim", "include")}`, `-I${standIns}`,
      `-I${join(src, "samples")}`, `-I${join(src, "applications", "common")}`];
    const common = [join(src, "samples", "common.c"), join(src, "applications", "common", "utils.c"), join(standIns, "argp_log.c")];
    const link = (lib: string) => [`-L${libDir}`, `-l${lib}`, "-ldoca_common", `-Wl,-rpath,${libDir}`];
    const aes = join(src, "samples", "doca_aes_gcm");
    for (const name of ["aes_gcm_encrypt", "aes_gcm_decrypt"]) {
      cc([...flags, `-I${aes}`, join(aes, name, `${name}_main.c`), join(aes, name, `${name}_sample.c`), join(aes, "aes_gcm_common.c"), ...common,
        ...link("doca_aes_gcm"), "-o", bin(name)]);
    }
    const ec = join(src, "samples", "doca_erasure_coding", "erasure_coding_recover");
    cc([...flags, join(ec, "erasure_coding_recover_main.c"), join(ec, "erasure_coding_recover_sample.c"), ...common, ...link("doca_erasure_coding"),
      "-o", bin("erasure_coding_recover")]);
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  const IV = "cafebabefacedbaddecaf888";
  for (const [keyHex, tag, aadSize] of [[KEY, 16, 0], [KEY.slice(0, 32), 12, 0], [KEY, 16, 24]] as const) {
    test(`aes_gcm_encrypt / aes_gcm_decrypt: AES-${keyHex.length * 4}, ${tag}-byte tag, AAD ${aadSize}: node:crypto agrees both ways`, () => {
      const key = Buffer.from(keyHex, "hex"), iv = Buffer.from(IV, "hex");
      const algo = key.length === 16 ? "aes-128-gcm" : "aes-256-gcm";
      const plain = crypto.randomBytes(10_000 + aadSize);
      const tagName = `${keyHex.length}-${tag}-${aadSize}`;
      const input = join(work, `plain-${tagName}`), enc = join(work, `enc-${tagName}`), dec = join(work, `dec-${tagName}`);
      writeFileSync(input, plain);
      const args = ["-k", keyHex, "-i", IV, "-t", String(tag), "-a", String(aadSize)];
      const e = sample("aes_gcm_encrypt", ["-f", input, "-o", enc, ...args]);
      assert.equal(e.status, 0, e.log);
      assert.match(e.log, /Sample finished successfully/);
      assert.doesNotMatch(e.log, /strict:/);
      // node:crypto alone: the AAD (the first aadSize bytes) passes through, then ciphertext and tag
      const sealed = readFileSync(enc);
      assert.equal(sealed.length, plain.length + tag);
      assert.deepEqual(sealed.subarray(0, aadSize), plain.subarray(0, aadSize));
      const d = crypto.createDecipheriv(algo, key, iv, { authTagLength: tag });
      if (aadSize) d.setAAD(plain.subarray(0, aadSize));
      d.setAuthTag(sealed.subarray(sealed.length - tag));
      assert.deepEqual(Buffer.concat([d.update(sealed.subarray(aadSize, sealed.length - tag)), d.final()]), plain.subarray(aadSize));
      // and the other way: node:crypto seals, NVIDIA's decrypt sample opens
      const c = crypto.createCipheriv(algo, key, iv, { authTagLength: tag });
      if (aadSize) c.setAAD(plain.subarray(0, aadSize));
      const theirs = Buffer.concat([plain.subarray(0, aadSize), c.update(plain.subarray(aadSize)), c.final(), c.getAuthTag()]);
      writeFileSync(enc, theirs);
      const x = sample("aes_gcm_decrypt", ["-f", enc, "-o", dec, ...args]);
      assert.equal(x.status, 0, x.log);
      assert.deepEqual(readFileSync(dec), plain);
      // a forged tag: the sample reports the failure
      theirs[theirs.length - 1] ^= 1;
      writeFileSync(enc, theirs);
      const f = sample("aes_gcm_decrypt", ["-f", enc, "-o", dec, ...args]);
      assert.notEqual(f.status, 0, f.log);
      assert.match(f.log, /Decrypt task failed/);
    });
  }

  for (const [matrix, data, rdnc, lost] of [["cauchy", 4, 2, "1,3"], ["vandermonde", 3, 2, "0"], ["cauchy", 5, 3, "0,2,4"]] as const) {
    test(`erasure_coding_recover -b (${matrix}, ${data}+${rdnc}, data blocks ${lost} deleted): the rebuilt file equals the original`, () => {
      const dir = join(work, `ec-${matrix}-${data}-${rdnc}`);
      mkdirSync(dir);
      const input = join(work, `ec-in-${matrix}-${data}-${rdnc}`);
      const plain = crypto.randomBytes(123_457);
      writeFileSync(input, plain);
      const r = sample("erasure_coding_recover", ["-i", input, "-o", dir, "-b", "-x", matrix, "-t", String(data), "-r", String(rdnc), "-d", lost]);
      assert.equal(r.status, 0, r.log);
      assert.match(r.log, /Success, data was recovered/);
      assert.doesNotMatch(r.log, /strict:/);
      assert.deepEqual(readFileSync(`${input}_recovered`), plain);
      assert.equal(readdirSync(dir).filter((n) => n.startsWith("rdnc_block_")).length, rdnc);
    });
  }

  test("erasure_coding_recover decodes a folder with a redundancy block lost too", () => {
    const dir = join(work, "ec-decode");
    mkdirSync(dir);
    const input = join(work, "ec-decode-in");
    const plain = crypto.randomBytes(40_000);
    writeFileSync(input, plain);
    assert.equal(sample("erasure_coding_recover", ["-i", input, "-o", dir, "-t", "3", "-r", "2"]).status, 0);
    rmSync(join(dir, "data_block_1"));
    rmSync(join(dir, "rdnc_block_0"));
    const out = join(work, "ec-decode-out");
    const r = sample("erasure_coding_recover", ["-i", dir, "-o", out, "-t", "3", "-r", "2"]);
    assert.equal(r.status, 0, r.log);
    assert.deepEqual(readFileSync(out), plain);
  });

  test("everything applications/storage uses of doca_erasure_coding.h is declared by ours", () => {
    const storage = join(work, "src", "applications", "storage");
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (/\.(c|cpp|h|hpp)$/.test(e.name)) files.push(join(d, e.name));
      }
    };
    walk(storage);
    const text = files.map((f) => readFileSync(f, "utf8")).join("\n");
    assert.match(text, /#include <doca_erasure_coding\.h>/);
    const ownDefinitions = new Set([...text.matchAll(/^\s*(?:static\s+)?(?:void|doca_error_t)\s+(doca_ec_\w+)\s*\(/gm)].map((m) => m[1]));
    const used = new Set([...text.matchAll(/\b(doca_ec_\w+|DOCA_EC_\w+)\b/g)].map((m) => m[1]).filter((n) => !ownDefinitions.has(n)));
    // Through the preprocessor: the header declares its task kinds' functions with one macro
    const include = join(root, "sim", "include");
    const cpp = spawnSync(process.env.CC ?? "cc", ["-E", `-I${include}`, "-x", "c", join(include, "doca_erasure_coding.h")], {
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(cpp.status, 0, cpp.stderr);
    const header = cpp.stdout;
    assert.ok(used.size >= 15, `only ${used.size} names found`);
    const missing = [...used].filter((name) => !new RegExp(`\\b${name}\\b`).test(header));
    assert.deepEqual(missing, []);
    assert.ok(existsSync(storage));
  });
});
