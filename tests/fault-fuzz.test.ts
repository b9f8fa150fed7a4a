/**
 * Fuzzing, bounded and deterministic (seeded) so CI can run it every time:
 *   - sim/fuzz/fuzz_export_desc.c: random and mutated descriptors into doca_mmap_create_from_export,
 *   - sim/fuzz/fuzz_comch_frames.c: random and mutated raw frames into a Comch server's socket,
 *   - sim/fuzz/fuzz_json.c: random and mutated DOCA_SIM_CONFIG documents into the JSON reader,
 *     both built from sim/src with ASan+UBSan by sim/fuzz/build-fuzz.ts (plain -O1 if the sanitizers are missing),
 *   - the TypeScript DMA Copy decoder (tasks/wire/protocol.ts): random and mutated bytes must decode or throw
 *     ProtocolError, never read outside the bytes given, never hang.
 * DOCA_TS_SLOW=1 runs more inputs and seeds. Longer campaigns (libFuzzer, AFL++): sim/fuzz/README.md.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildFuzzers } from "../sim/fuzz/build-fuzz.ts";
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
import { FaultCounters, rng, SLOW } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-fuzz");
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  counters.print();
});

function runHarness(path: string, args: string[], env: Record<string, string>, timeoutMs: number) {
  const sim = mkdtempSync(join(tmpdir(), "doca-ts-fuzz-"));
  dirs.push(sim);
  const r = spawnSync(path, args, {
    encoding: "utf8",
    timeout: timeoutMs,
    env: {
      ...process.env,
      DOCA_SIM_DIR: sim,
      DOCA_SIM_LOG: "0",
      ASAN_OPTIONS: "detect_leaks=0:abort_on_error=0",
      ...env,
    },
  });
  return r;
}

/** The harness neither crashed (ASan/UBSan abort, signal) nor failed; its output is in the message otherwise. */
function assertHarnessPassed(r: ReturnType<typeof runHarness>): void {
  assert.equal(r.signal, null, `harness crashed (${r.signal}); stdout:\n${r.stdout}\nstderr:\n${r.stderr.slice(0, 4000)}`);
  assert.equal(r.status, 0, `stdout:\n${r.stdout}\nstderr:\n${r.stderr.slice(0, 4000)}`);
}

describe("C fuzz harnesses against the software device (ASan+UBSan)", () => {
  const built = buildFuzzers();
  const exe = Object.fromEntries(built.map((b) => [b.name, b]));
  const seeds = SLOW ? [1, 2, 3, 4] : [1];

  for (const seed of seeds) {
    test(`export descriptors into doca_mmap_create_from_export (seed ${seed})`, { timeout: 120_000 }, () => {
      const n = SLOW ? 500_000 : 20_000;
      const r = runHarness(exe.fuzz_export_desc.path, [String(n), String(seed)], { DOCA_SIM_SIDE: "host" }, 100_000);
      assertHarnessPassed(r);
      const m = /FUZZ export-desc inputs (\d+) accepted (\d+) rejected (\d+)/.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Number(m[2]) >= 2, "the real descriptors are accepted (the harness reaches the deep checks)");
      counters.inputs += Number(m[1]);
      counters.faults += Number(m[3]);
      // Bounded by the harness itself (it fails after its own deadlines) and by runHarness's 100-s kill: no wall-clock
      // threshold here (a loaded machine is slower, not wrong)
    });

    test(`raw frames into a Comch server (seed ${seed})`, { timeout: 120_000 }, () => {
      const n = SLOW ? 200_000 : 20_000;
      const r = runHarness(exe.fuzz_comch_frames.path, [String(n), String(seed)], { DOCA_SIM_SIDE: "dpu" }, 100_000);
      assertHarnessPassed(r);
      const m = /FUZZ comch-frames inputs (\d+) frames (\d+) delivered (\d+)/.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Number(m[3]) > 0, "well-formed messages were delivered");
      counters.inputs += Number(m[1]);
      counters.faults += Number(m[2]) - Number(m[3]);
      // Bounded by the harness itself (it fails after its own deadlines) and by runHarness's 100-s kill: no wall-clock
      // threshold here (a loaded machine is slower, not wrong)
    });
  }

  for (const seed of seeds) {
    test(`DOCA_SIM_CONFIG JSON documents into the reader (seed ${seed})`, { timeout: 120_000 }, () => {
      const n = SLOW ? 500_000 : 20_000;
      const r = runHarness(exe.fuzz_json.path, [String(n), String(seed)], {}, 100_000);
      assertHarnessPassed(r);
      const m = /FUZZ json inputs (\d+) accepted (\d+) rejected (\d+)/.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Number(m[2]) > 0 && Number(m[3]) > 0, "both accepted and refused documents were read");
      counters.inputs += Number(m[1]);
      counters.faults += Number(m[3]);
    });
  }

  for (const seed of seeds) {
    test(`raw frames from the network into an RDMA responder (seed ${seed})`, { timeout: 120_000 }, () => {
      const n = SLOW ? 10_000 : 1_500;
      const r = runHarness(exe.fuzz_rdma_frames.path, [String(n), String(seed)], {}, 100_000);
      assertHarnessPassed(r);
      const m = /FUZZ rdma-frames inputs (\d+) frames (\d+) writes (\d+) accepted (\d+)/.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Number(m[4]) > 0, "CM requests were accepted (the harness reaches the frame checks)");
      assert.ok(Number(m[3]) > 0, "writes aimed at the export were sent");
      counters.inputs += Number(m[1]);
      counters.faults += Number(m[2]);
      // Bounded by the harness itself (it fails after its own deadlines) and by runHarness's 100-s kill: no wall-clock
      // threshold here (a loaded machine is slower, not wrong)
    });
  }

  test("the harnesses report their sanitizer build (informational)", () => {
    for (const b of built) {
      console.log(`fuzz harness ${b.name}: ${b.sanitized ? "ASan+UBSan" : "no sanitizers available"}`);
    }
  });
});

describe("TypeScript DMA Copy decoder", () => {
  const valid = (): Uint8Array[] => [
    encodeDirection({ fileInHost: true, fileSize: 123456789n, docaTs: true }),
    encodeDirection({ fileInHost: false }),
    encodeExportDescriptor(0x7f00_0000_1000, new Uint8Array(80).fill(3)),
    encodeStatus(true),
    encodeStatus(false),
    encodeExtParams(64, 2 * 1024 * 1024),
    encodeWindow(8, 65536),
    encodeChunk(MsgType.CHUNK_READY, 3, 4096, 4096),
    encodeChunk(MsgType.CHUNK_DONE, 0, 0, 1),
    encodeChecksum(1000, new Uint8Array(32).fill(9)),
    encodeFailureReason("disk full: /tmp/x"),
  ];

  /**
   * Decodes `bytes` placed inside a larger buffer full of sentinel bytes. The outcome must be a message or a
   * ProtocolError, and must equal the outcome of decoding an exact copy (so nothing outside the view was read).
   */
  function checkedDecode(bytes: Uint8Array, rand: () => number): "ok" | "rejected" {
    const pad = 1 + Math.floor(rand() * 16);
    const big = new Uint8Array(bytes.length + 2 * pad).fill(0xee);
    big.set(bytes, pad);
    const view = big.subarray(pad, pad + bytes.length);
    const outcome = (b: Uint8Array) => {
      try {
        return {
          ok: true,
          v: JSON.stringify(
            decodeMessage(b),
            (_k, x) => (typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? Array.from(x) : x),
          ),
        };
      } catch (e) {
        if (!(e instanceof ProtocolError)) {
          throw new Error(
            `decodeMessage threw ${(e as Error)?.name}: ${(e as Error)?.message} for bytes [${Array.from(bytes)}]`,
          );
        }
        return { ok: false, v: e.message };
      }
    };
    const a = outcome(view);
    const b = outcome(bytes.slice());
    assert.deepEqual(a, b, `decoding depends on bytes outside the message: [${Array.from(bytes)}]`);
    return a.ok ? "ok" : "rejected";
  }

  // Bun's default 5 s per test is too short on a loaded 2-core machine
  test("random bytes: decode or ProtocolError, nothing read outside the message", { timeout: 120_000 }, () => {
    const rand = rng(0xd0ca);
    const n = SLOW ? 400_000 : 40_000;
    let ok = 0;
    const t0 = Date.now();
    for (let i = 0; i < n; i++) {
      const len = rand() < 0.5 ? Math.floor(rand() * 64) : Math.floor(rand() * 5000);
      const bytes = new Uint8Array(len);
      for (let k = 0; k < len; k++) bytes[k] = rand() * 256;
      // half the time a plausible type, so every decoder branch is reached
      if (len >= 4 && rand() < 0.5) {
        const types = [1, 2, 3, 0x100, 0x101, 0x102, 0x103, 0x104, 0x105];
        new DataView(bytes.buffer).setUint32(0, types[Math.floor(rand() * types.length)], true);
      }
      if (checkedDecode(bytes, rand) === "ok") ok++;
      else counters.faults++;
    }
    counters.inputs += n;
    assert.ok(ok > 0, "some random inputs are valid messages (the fuzzer reaches the success paths)");
    assert.ok(Date.now() - t0 < 60_000, "no input makes the decoder slow");
  });

  // Bun's default 5 s per test is too short on a loaded 2-core machine
  test("mutated valid messages: decode or ProtocolError; a decoded EXPORT_DESCRIPTOR is self-consistent", { timeout: 120_000 }, () => {
    const rand = rng(0xbeef);
    const seeds = valid();
    const n = SLOW ? 400_000 : 40_000;
    for (let i = 0; i < n; i++) {
      const base = seeds[Math.floor(rand() * seeds.length)];
      let bytes = base.slice();
      const muts = 1 + Math.floor(rand() * 4);
      for (let m = 0; m < muts; m++) {
        const op = Math.floor(rand() * 5);
        if (op === 0 && bytes.length) bytes[Math.floor(rand() * bytes.length)] ^= 1 << Math.floor(rand() * 8);
        else if (op === 1 && bytes.length) bytes[Math.floor(rand() * bytes.length)] = rand() * 256;
        else if (op === 2) bytes = bytes.slice(0, Math.floor(rand() * (bytes.length + 1)));
        else if (op === 3) {
          const grown = new Uint8Array(bytes.length + Math.floor(rand() * 40));
          grown.set(bytes);
          bytes = grown;
        } else if (bytes.length >= 24) {
          // a 64-bit field (sizes, addresses, the descriptor length) set to an edge value
          const edges = [0n, 1n, 79n, 80n, 81n, 1n << 53n, 1n << 63n, (1n << 64n) - 1n];
          new DataView(bytes.buffer).setBigUint64(
            8 * (1 + Math.floor(rand() * 2)),
            edges[Math.floor(rand() * edges.length)],
            false,
          );
        }
      }
      const r = checkedDecode(bytes, rand);
      if (r === "rejected") counters.faults++;
      else {
        const msg = decodeMessage(bytes);
        if (msg.type === MsgType.EXPORT_DESCRIPTOR) {
          const declared = new DataView(bytes.buffer).getBigUint64(16, false);
          assert.equal(BigInt(msg.descriptor.length), declared, "descriptor length is what the header declares");
          assert.equal(msg.descriptor.length, bytes.length - 24, "and exactly the bytes after the 24-byte header");
        }
      }
    }
    counters.inputs += n;
  });

  test("every valid message round-trips", () => {
    for (const bytes of valid()) {
      counters.inputs++;
      assert.equal(checkedDecode(bytes, rng(1)), "ok", `[${Array.from(bytes)}]`);
    }
  });
});
