/**
 * DMA Copy wire messages: byte-for-byte against hand-built C layouts (x86-64: little-endian enum, u64 on 8-byte
 * boundaries, htonq'd sizes), and strict decoding of everything malformed.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  decodeMessage,
  encodeChecksum,
  encodeChunk,
  encodeDirection,
  encodeExportDescriptor,
  encodeExtParams,
  encodeFailureReason,
  encodeStatus,
  encodeWindow,
  MsgType,
  ProtocolError,
} from "../tasks/wire/protocol.ts";

const hex = (s: string) => Uint8Array.from(s.replace(/\s+/g, "").match(/../g)!.map((b) => parseInt(b, 16)));

describe("NVIDIA DMA Copy messages (DOCA 3.3 layouts)", () => {
  test("direction: 16 bytes, type LE, file_in_host @4, file_size big-endian @8", () => {
    const bytes = encodeDirection({ fileInHost: true, fileSize: 0x0102030405n });
    assert.deepEqual(bytes, hex("01000000 01 000000 0000000102030405"));
    assert.deepEqual(decodeMessage(bytes), { type: 1, fileInHost: true, fileSize: 0x0102030405n, docaTs: false });
  });

  test("direction from doca-ts carries the magic in the padding only", () => {
    const bytes = encodeDirection({ fileInHost: false, docaTs: true });
    assert.deepEqual(bytes, hex("01000000 00 647402 0000000000000000"));
    const m = decodeMessage(bytes);
    assert.equal(m.type, MsgType.DIRECTION);
    assert.equal((m as { docaTs: boolean }).docaTs, true);
  });

  test("a version-1 doca-ts peer (no final receipt from the receiver) is treated like NVIDIA's application", () => {
    const m = decodeMessage(hex("01000000 00 647401 0000000000000000")) as { docaTs: boolean };
    assert.equal(m.docaTs, false);
  });

  test("an NVIDIA direction with garbage padding is not mistaken for doca-ts", () => {
    const m = decodeMessage(hex("01000000 01 aabbcc 0000000000001000")) as { docaTs: boolean; fileSize: bigint };
    assert.equal(m.docaTs, false);
    assert.equal(m.fileSize, 4096n);
  });

  test("export descriptor: 24-byte header, host_addr and length big-endian, descriptor bytes @24", () => {
    const desc = Uint8Array.of(9, 8, 7);
    const bytes = encodeExportDescriptor(0x7f0012345000, desc);
    assert.deepEqual(bytes, hex("02000000 00000000 00007f0012345000 0000000000000003 090807"));
    const m = decodeMessage(bytes);
    assert.deepEqual(m, { type: 2, hostAddr: 0x7f0012345000n, descriptor: desc });
  });

  test("status: 8 bytes, is_success @4", () => {
    assert.deepEqual(encodeStatus(true), hex("03000000 01 000000"));
    assert.deepEqual(encodeStatus(false), hex("03000000 00 000000"));
    assert.deepEqual(decodeMessage(hex("03000000 01 000000")), { type: 3, isSuccess: true });
  });
});

describe("doca-ts extension messages", () => {
  test("layouts", () => {
    assert.deepEqual(encodeExtParams(64, 2 * 1024 * 1024), hex("00010000 00000040 0000000000200000"));
    assert.deepEqual(encodeWindow(8, 4096), hex("01010000 00000008 0000000000001000"));
    assert.deepEqual(
      encodeChunk(MsgType.CHUNK_READY, 3, 0x100000000, 17),
      hex("02010000 00000003 0000000100000000 0000000000000011"),
    );
    assert.deepEqual(encodeChunk(MsgType.CHUNK_DONE, 0, 0, 1), hex("03010000 00000000 0000000000000000 0000000000000001"));
    const digest = new Uint8Array(32).map((_, i) => i);
    const sum = encodeChecksum(5, digest);
    assert.equal(sum.length, 48);
    assert.deepEqual(sum.subarray(0, 16), hex("04010000 00000001 0000000000000005"));
    assert.deepEqual(sum.subarray(16), digest);
    assert.deepEqual(decodeMessage(sum), { type: 0x104, algorithm: 1, totalBytes: 5n, digest });
  });

  test("round trips", () => {
    assert.deepEqual(decodeMessage(encodeExtParams(4, 100)), { type: 0x100, maxSlots: 4, maxChunk: 100n });
    assert.deepEqual(decodeMessage(encodeWindow(2, 10)), { type: 0x101, slotCount: 2, slotSize: 10n });
    assert.deepEqual(decodeMessage(encodeChunk(MsgType.CHUNK_DONE, 1, 2, 3)), { type: 0x103, slot: 1, offset: 2n, length: 3n });
    assert.deepEqual(decodeMessage(encodeFailureReason("disk full ✓")), { type: 0x105, text: "disk full ✓" });
  });

  test("failure reason is cut on a character boundary to fit the max message size", () => {
    const bytes = encodeFailureReason("é".repeat(100), 8 + 11);
    assert.ok(bytes.length <= 19);
    assert.equal((decodeMessage(bytes) as { text: string }).text, "é".repeat(5));
  });
});

describe("strict decoding", () => {
  const bad = (bytes: Uint8Array, pattern: RegExp) => assert.throws(() => decodeMessage(bytes), (e: unknown) => e instanceof ProtocolError && pattern.test((e as Error).message));

  test("too short for a type", () => bad(Uint8Array.of(1, 0, 0), /too short/));
  test("unknown type", () => bad(hex("07000000 00000000"), /unknown message type 7/));
  test("type in the wrong byte order is unknown", () => bad(hex("00000001 01000000 0000000000000000"), /unknown message type/));
  test("direction of 15 or 17 bytes", () => {
    bad(encodeDirection({ fileInHost: true }).subarray(0, 15), /16 bytes, got 15/);
    bad(Uint8Array.of(...encodeDirection({ fileInHost: true }), 0), /16 bytes, got 17/);
  });
  test("status of 4 bytes", () => bad(hex("03000000"), /8 bytes, got 4/));
  test("bool that is neither 0 nor 1", () => bad(hex("03000000 02 000000"), /is_success must be 0 or 1/));
  test("export descriptor with no descriptor bytes", () => bad(encodeExportDescriptor(1, new Uint8Array(0)), /more than 24/));
  test("export descriptor whose length claims more than it carries", () => {
    const bytes = encodeExportDescriptor(1, Uint8Array.of(1, 2, 3, 4));
    new DataView(bytes.buffer).setBigUint64(16, 5n, false);
    bad(bytes, /declares a 5-byte descriptor but carries 4/);
  });
  test("export descriptor whose length claims less than it carries", () => {
    const bytes = encodeExportDescriptor(1, Uint8Array.of(1, 2, 3, 4));
    new DataView(bytes.buffer).setBigUint64(16, 2n, false);
    bad(bytes, /declares a 2-byte descriptor but carries 4/);
  });
  test("huge declared descriptor length does not read past the end", () => {
    const bytes = encodeExportDescriptor(1, Uint8Array.of(1));
    new DataView(bytes.buffer).setBigUint64(16, 0xffffffffffffffffn, false);
    bad(bytes, /declares/);
  });
  test("decodes from a view into a larger buffer without reading outside it", () => {
    const big = new Uint8Array(64).fill(0xee);
    big.set(encodeStatus(true), 8);
    assert.deepEqual(decodeMessage(big.subarray(8, 16)), { type: 3, isSuccess: true });
  });
  test("extension messages with zeros, wrong sizes or algorithms", () => {
    bad(encodeWindow(1, 1).map((b, i) => (i === 7 ? 0 : b)), /zero slots/);
    bad(encodeChunk(MsgType.CHUNK_READY, 0, 0, 1).subarray(0, 20), /24 bytes, got 20/);
    const sum = encodeChecksum(1, new Uint8Array(32));
    sum[7] = 2;
    bad(sum, /unknown algorithm 2/);
    bad(hex("05010000 00000000"), /without text/);
  });
  test("encoders refuse out-of-range values", () => {
    assert.throws(() => encodeDirection({ fileInHost: true, fileSize: -1n }), RangeError);
    assert.throws(() => encodeChunk(MsgType.CHUNK_DONE, 2 ** 32, 0, 0), RangeError);
    assert.throws(() => encodeChecksum(0, new Uint8Array(31)), RangeError);
  });
});
