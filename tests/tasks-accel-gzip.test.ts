/**
 * compress's gzip members say which one is last (issue 30): a file cut at a member boundary fails to decompress and
 * leaves nothing, gunzip still reads the format; a header CRC (FHCRC) that does not match fails; zero padding after
 * the last member (compress's or a plain single-member gzip's) is accepted as gunzip does, other trailing bytes are
 * named as such; a plain multi-member gzip is refused with the documented message; an
 * LZ4 skippable frame before a frame is skipped as the lz4 tool does.
 */
import "./helpers/sim-env.ts";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { gunzipSync, gzipSync } from "node:zlib";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { pattern } from "./helpers/sim-env.ts";
import { crc32 } from "../tasks/accel/gzip.ts";

const task = (name: string) => join(repoRoot, "tasks", `${name}.ts`);
const dir = mkdtempSync(join(tmpdir(), "doca-ts-accel-gzip-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);

async function run(name: string, args: string[]) {
  return await startChild(task(name), args, { INIT_CWD: dir }, 120_000).done;
}

/** The end offset of each member of one of compress's files (its "DC" subfield holds the compressed length). */
function memberEnds(bytes: Uint8Array): number[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends: number[] = [];
  for (let p = 0; p < bytes.length;) {
    const xlen = v.getUint16(p + 10, true);
    p += 12 + xlen + v.getUint32(p + 16, true) + 8;
    ends.push(p);
  }
  return ends;
}

describe("compress / decompress: the last member, padding, header CRC, skippable frames", () => {
  const input = pattern(3 * 65536 + 100, 7);
  writeFileSync(at("in"), input);

  test("a file cut at a member boundary fails (exit 1, nothing left); the whole file gunzips and decompresses", { timeout: 180_000 }, async () => {
    const c = await run("compress", ["--chunk-size", "65536", "in"]);
    assert.equal(c.code, 0, c.stderr);
    const gz = readFileSync(at("in.gz"));
    assert.deepEqual(new Uint8Array(gunzipSync(gz)), new Uint8Array(input), "gunzip reads it");
    const ends = memberEnds(gz);
    assert.equal(ends.length, 4);
    writeFileSync(at("cut.gz"), gz.subarray(0, ends[2]));
    const r = await run("decompress", ["-o", "cut.out", "cut.gz"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the last member is missing/);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes("cut.out")), []);
    // zero padding after the last member is accepted, as gunzip does
    writeFileSync(at("pad.gz"), Buffer.concat([gz, new Uint8Array(4096)]));
    const p = await run("decompress", ["-o", "pad.out", "pad.gz"]);
    assert.equal(p.code, 0, p.stderr);
    assert.deepEqual(new Uint8Array(readFileSync(at("pad.out"))), new Uint8Array(input));
  });

  test("a plain single-member gzip followed by zero padding is read as gunzip does; trailing garbage is named as such", { timeout: 180_000 }, async () => {
    // Sizes whose ISIZE ends in zero bytes too (under 16 MiB): the trailer's own zeros must not be taken for padding
    const data = pattern(70_000, 5);
    const gz = gzipSync(data);
    for (const [name, padding] of [["pad10", 10], ["pad1", 1], ["pad5000", 5000]] as const) {
      writeFileSync(at(`${name}.gz`), Buffer.concat([gz, new Uint8Array(padding)]));
      const r = await run("decompress", ["-o", `${name}.out`, `${name}.gz`]);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.deepEqual(new Uint8Array(readFileSync(at(`${name}.out`))), new Uint8Array(data), name);
    }
    writeFileSync(at("emptypad.gz"), Buffer.concat([gzipSync(new Uint8Array(0)), new Uint8Array(20)]));
    const e = await run("decompress", ["-o", "emptypad.out", "emptypad.gz"]);
    assert.equal(e.code, 0, e.stderr);
    assert.equal(readFileSync(at("emptypad.out")).length, 0);
    writeFileSync(at("garbage.gz"), Buffer.concat([gz, Buffer.from("garbage!!!xyz")]));
    const g = await run("decompress", ["-o", "garbage.out", "garbage.gz"]);
    assert.equal(g.code, 1, g.stderr);
    assert.match(g.stderr, /garbage\.gz at byte 0: its last 8 bytes are no gzip trailer \(their size field says \d+ bytes, more than \d+ bytes of deflate data can hold\): trailing bytes after the last member/);
    assert.doesNotMatch(g.stderr, /claims|larger than one device task/);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes("garbage.out")), []);
    // A whole member under a trailer whose size field (ISIZE) alone was raised: said as what it is (attack s7)
    const big = Buffer.from(gz);
    big.writeUInt32LE(0xfffffff0, big.length - 4);
    writeFileSync(at("isize.gz"), big);
    const s = await run("decompress", ["-o", "isize.out", "isize.gz"]);
    assert.equal(s.code, 1, s.stderr);
    assert.match(s.stderr, /isize\.gz at byte 0: the trailer's size field does not match the data: it says 4294967280 bytes, the data inflates to 70000 \(its CRC-32 matches the trailer's\)$/m, s.stderr);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes("isize.out")), []);
  });

  test("FHCRC: a matching header CRC is accepted, a wrong one fails", { timeout: 180_000 }, async () => {
    const plain = gzipSync(pattern(5000, 3));
    const header = Buffer.from(plain.subarray(0, 10));
    header[3] |= 2;
    const hcrc = (value: number) => Buffer.from([value & 0xff, (value >> 8) & 0xff]);
    writeFileSync(at("good.gz"), Buffer.concat([header, hcrc(crc32(header)), plain.subarray(10)]));
    writeFileSync(at("bad.gz"), Buffer.concat([header, hcrc(crc32(header) ^ 1), plain.subarray(10)]));
    const good = await run("decompress", ["-o", "good.out", "good.gz"]);
    assert.equal(good.code, 0, good.stderr);
    const bad = await run("decompress", ["-o", "bad.out", "bad.gz"]);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /header CRC mismatch/);
  });

  test("a plain multi-member gzip is refused with the documented message", { timeout: 180_000 }, async () => {
    writeFileSync(at("multi.gz"), Buffer.concat([gzipSync(pattern(5000, 1)), gzipSync(pattern(5000, 2))]));
    const r = await run("decompress", ["-o", "multi.out", "multi.gz"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /multi-member gzip files other than compress's are not supported/);
  });

  test("an LZ4 skippable frame before a frame is skipped, as the lz4 tool does", { timeout: 180_000 }, async (t) => {
    if (spawnSync("lz4", ["--version"]).status !== 0) return t.skip("the lz4 tool is not installed");
    assert.equal(spawnSync("lz4", ["-q", "-f", at("in"), at("in.lz4")]).status, 0);
    const skippable = Buffer.alloc(8 + 5);
    skippable.writeUInt32LE(0x184d2a5a, 0);
    skippable.writeUInt32LE(5, 4);
    writeFileSync(at("skip.lz4"), Buffer.concat([skippable, readFileSync(at("in.lz4"))]));
    const r = await run("decompress", ["-o", "skip.out", "skip.lz4"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(new Uint8Array(readFileSync(at("skip.out"))), new Uint8Array(input));
  });
});
