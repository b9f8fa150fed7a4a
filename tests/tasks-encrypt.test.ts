/**
 * encrypt / decrypt as child processes of this test's runtime on the software device: round trips (empty, one
 * short chunk, a whole number of chunks, several chunks), the file format checked independently with node:crypto
 * (header, per-chunk IV and AAD as tasks/crypt/format.ts documents), and what must fail with exit status 1 and no
 * output file: a flipped byte, two chunks swapped, a file cut at a record boundary, the wrong key. A key file group
 * or others can read is refused (exit 2); --generate-key writes mode 0600 and never replaces a file.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import crypto from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startChild } from "../tasks/common/run-pair.ts";
import { untilItStays, workspaces } from "./helpers/tasks/workspace.ts";
import { ok, run, task } from "./helpers/tasks/run-task.ts";

const space = workspaces(after);
const TIMEOUT = 120_000;

/** Decrypts the format with node:crypto alone: the format as documented, not as our code reads it. */
function nodeDecrypt(file: Uint8Array, key: Uint8Array): Uint8Array {
  const header = file.subarray(0, 28);
  assert.equal(Buffer.from(header.subarray(0, 8)).toString(), "DOCATSGC");
  const chunk = new DataView(header.buffer, header.byteOffset).getUint32(12);
  const ivBase = header.subarray(16, 28);
  const out: Uint8Array[] = [];
  const body = file.subarray(28);
  const records = Math.floor(body.length / (chunk + 16)) + 1;
  for (let i = 0; i < records; i++) {
    const rec = body.subarray(i * (chunk + 16), Math.min(body.length, (i + 1) * (chunk + 16)));
    const iv = Buffer.from(ivBase);
    iv.writeBigUInt64BE(iv.readBigUInt64BE(4) ^ BigInt(i), 4);
    const aad = Buffer.alloc(37);
    Buffer.from(header).copy(aad);
    aad.writeBigUInt64BE(BigInt(i), 28);
    aad[36] = i === records - 1 ? 1 : 0;
    const d = crypto.createDecipheriv(key.length === 16 ? "aes-128-gcm" : "aes-256-gcm", key, iv);
    d.setAAD(aad);
    d.setAuthTag(rec.subarray(rec.length - 16));
    out.push(d.update(rec.subarray(0, rec.length - 16)), d.final());
  }
  return Buffer.concat(out);
}

describe("encrypt / decrypt", { timeout: TIMEOUT }, () => {
  test("--generate-key: mode 0600, 256 or 128 bits, never replaces a file", { timeout: TIMEOUT }, async () => {
    const w = space("crypt");
    const key = join(w.root, "k");
    await ok("encrypt.ts", ["--generate-key", key], w.env);
    assert.equal(statSync(key).mode & 0o777, 0o600);
    assert.match(readFileSync(key, "utf8"), /^[0-9a-f]{64}\n$/);
    const again = await run("encrypt.ts", ["--generate-key", key], w.env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /never overwritten/);
    const k128 = join(w.root, "k128");
    await ok("encrypt.ts", ["--generate-key", k128, "--key-bits", "128"], w.env);
    assert.match(readFileSync(k128, "utf8"), /^[0-9a-f]{32}\n$/);
    const bad = await run("encrypt.ts", ["--generate-key", join(w.root, "k3"), "--key-bits", "192"], w.env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--key-bits/);
  });

  test("round trips at chunk boundaries, and node:crypto reads the format as documented", { timeout: TIMEOUT }, async () => {
    const w = space("crypt");
    const key = join(w.root, "k");
    await ok("encrypt.ts", ["--generate-key", key], w.env);
    const raw = Buffer.from(readFileSync(key, "utf8").trim(), "hex");
    for (const size of [0, 1, 4096, 3 * 4096, 3 * 4096 + 77]) {
      const plain = crypto.randomBytes(size);
      const input = join(w.root, `p${size}`), enc = join(w.root, `e${size}`), back = join(w.root, `b${size}`);
      writeFileSync(input, plain);
      const report = JSON.parse(await ok("encrypt.ts", ["-i", input, "-o", enc, "-k", key, "--chunk-size", "4096", "--json"], w.env));
      assert.equal(report.chunks, Math.floor(size / 4096) + 1);
      const sealed = readFileSync(enc);
      assert.equal(sealed.length, 28 + size + 16 * report.chunks);
      assert.deepEqual(Buffer.from(nodeDecrypt(sealed, raw)), plain, `node:crypto opens ${size} bytes`);
      await ok("decrypt.ts", ["-i", enc, "-o", back, "-k", key], w.env);
      assert.deepEqual(readFileSync(back), plain);
    }
  });

  test("a flipped byte, swapped chunks, a cut file, the wrong key, no magic, a short file: exit 1 naming the file, no output file", { timeout: TIMEOUT }, async () => {
    const w = space("crypt");
    const key = join(w.root, "k"), other = join(w.root, "other");
    await ok("encrypt.ts", ["--generate-key", key], w.env);
    await ok("encrypt.ts", ["--generate-key", other], w.env);
    const input = join(w.root, "plain"), enc = join(w.root, "enc");
    writeFileSync(input, crypto.randomBytes(4 * 4096 + 100));
    await ok("encrypt.ts", ["-i", input, "-o", enc, "-k", key, "--chunk-size", "4096"], w.env);
    const good = readFileSync(enc);
    const rec = 4096 + 16;
    const flipped = Buffer.from(good);
    flipped[28 + rec + 10] ^= 1;
    const swapped = Buffer.from(good);
    good.copy(swapped, 28, 28 + rec, 28 + 2 * rec);
    good.copy(swapped, 28 + rec, 28, 28 + rec);
    const cut = good.subarray(0, 28 + 2 * rec);
    const header = Buffer.from(good);
    header[15] ^= 0x10; // chunk size field changed: still a valid size, but authenticated
    const magic = Buffer.from(good);
    magic[5] ^= 1;
    const cases = [
      ["flipped", flipped, key],
      ["swapped", swapped, key],
      ["cut", cut, key],
      ["header", header, key],
      ["wrong key", good, other],
      ["magic", magic, key],
      ["short", good.subarray(0, 10), key],
    ] as const;
    for (const [what, bytes, keyFile] of cases) {
      const file = join(w.root, `bad-${what}`), out = join(w.root, `out-${what}`);
      writeFileSync(file, bytes);
      const r = await run("decrypt.ts", ["-i", file, "-o", out, "-k", keyFile], w.env);
      assert.equal(r.code, 1, `${what}: exit ${r.code}\n${r.stderr}`);
      assert.match(r.stderr, /^decrypt: error: /m);
      assert.ok(r.stderr.includes(file), `${what}: the error names the input file\n${r.stderr}`);
      assert.equal(existsSync(out), false, `${what}: no output file`);
      assert.deepEqual(w.list(w.root).filter((n) => n.startsWith(".")), [], `${what}: no temporary file left`);
    }
  });

  test("SIGINT while encrypting: exit 130, neither the output nor its temporary file is left", { timeout: TIMEOUT }, async () => {
    const w = space("crypt");
    const key = join(w.root, "k");
    await ok("encrypt.ts", ["--generate-key", key], w.env);
    const input = join(w.root, "big");
    writeFileSync(input, new Uint8Array(96 * 1024 * 1024));
    const child = startChild(task("encrypt.ts"), ["-i", input, "-o", join(w.root, "enc"), "-k", key, "--chunk-size", "4096"], w.env, 60_000);
    // the temporary file exists from the start of the work: interrupt as soon as it shows
    const deadline = Date.now() + 30_000;
    await untilItStays(() => readdirSync(w.root).some((n) => n.startsWith(".enc.")), { timeoutMs: Math.max(0, deadline - Date.now()), pollMs: 5 });
    child.signal!("SIGINT");
    const r = await child.done;
    assert.equal(r.code, 130, r.stderr);
    assert.deepEqual(w.list(w.root).filter((n) => n !== "k" && n !== "big" && n !== "sim" && n !== "host" && n !== "dpu"), []);
  });

  test("a key file group or others can read is refused with exit 2; missing flags name themselves", { timeout: TIMEOUT }, async () => {
    const w = space("crypt");
    const key = join(w.root, "k");
    await ok("encrypt.ts", ["--generate-key", key], w.env);
    writeFileSync(join(w.root, "plain"), "hello");
    chmodSync(key, 0o644);
    const r = await run("encrypt.ts", ["-i", join(w.root, "plain"), "-o", join(w.root, "enc"), "-k", key], w.env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--key: .* readable or writable by others \(mode 644\)/);
    assert.equal(existsSync(join(w.root, "enc")), false);
    chmodSync(key, 0o600);
    const missing = await run("decrypt.ts", ["-i", join(w.root, "plain"), "-k", key], w.env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--output is required/);
  });
});
