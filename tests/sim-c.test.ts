/// <reference lib="deno.ns" />
/**
 * The software DOCA device's own C test programs (build/sim/bin, from sim/tests/*.c) and its exported symbols.
 * Each program prints "ok ..." lines and "PASS <name>" and exits 0; every run gets a private DOCA_SIM_DIR so
 * concurrent suites never share export registries, and runs in strict mode (DOCA_SIM_STRICT=1) unless told
 * otherwise. Build first: `deno task sim:build`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { boundFunctions, coveragePath, exportsOf, librariesIn, renderCoverage } from "../scripts/library-table.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const binDir = join(root, "build", "sim", "bin");
const libDir = join(root, "build", "sim", "lib");

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run one C test program with a fresh DOCA_SIM_DIR (removed afterwards) and the given extra environment. */
function runC(name: string, args: string[], env: Record<string, string> = {}): Run {
  const program = join(binDir, name);
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const dir = mkdtempSync(join(tmpdir(), "doca-sim-c-"));
  try {
    const clean = { ...process.env } as Record<string, string>;
    delete clean.DOCA_SIM_CONFIG;
    delete clean.DOCA_SIM_SIDE;
    delete clean.DOCA_SIM_TRACE;
    const result = spawnSync(program, args, {
      // Strict mode on unless the caller chose (deno task test sets it for the whole suite)
      env: { ...clean, DOCA_SIM_STRICT: process.env.DOCA_SIM_STRICT ?? "1", DOCA_SIM_DIR: dir, ...env },
      encoding: "utf8",
      timeout: 60_000,
    });
    return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertPassed(run: Run, passLine: string): void {
  assert.equal(run.status, 0, `exit status ${run.status}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  assert.match(run.stdout, new RegExp(`^${passLine}$`, "m"));
  assert.doesNotMatch(run.stdout, /^FAIL/m);
}

describe("software device: local DMA", () => {
  test("dma_local_copy follows NVIDIA's sample flow and verifies every byte", () => {
    const run = runC("dma_local_copy", []);
    assertPassed(run, "PASS dma_local_copy");
    assert.match(run.stdout, /ok local copy of 1048589 bytes verified/);
    assert.match(run.stdout, /ok no live objects left/);
    assert.doesNotMatch(run.stderr, /strict:/, "NVIDIA's flow does nothing DOCA leaves undefined");
  });

  test("dma_errors: state rules and exact DOCA errors", () => {
    const run = runC("dma_errors", []);
    assertPassed(run, "PASS dma_errors");
    for (
      const line of [
        "ok mmap state rules",
        "ok inventory: out-of-range INVALID_VALUE, exhausted NO_MEMORY",
        "ok task pool exhausted: DOCA_ERROR_NO_MEMORY",
        "ok copy into LOCAL_READ_ONLY memory: DOCA_ERROR_NOT_PERMITTED",
        "ok notification handle became readable, copy verified",
        "ok buffer lists: gathered from 2 sources, scattered over 2 destinations",
        "ok same-process export/import copies, and fails with DOCA_ERROR_NOT_PERMITTED once revoked",
      ]
    ) assert.ok(run.stdout.includes(line), `missing "${line}" in:\n${run.stdout}`);
    assert.match(run.stdout, /ok stop with a task in flight: DOCA_ERROR_IN_PROGRESS, task flushed with DOCA_ERROR_\w+/);
  });
});

describe("software device: erasure coding and AES-GCM", () => {
  test("erasure_coding_codec: redundancy as DOCA's formulas give, every loss of up to M blocks recovered", () => {
    const run = runC("erasure_coding_codec", []);
    assertPassed(run, "PASS erasure_coding_codec");
    assert.match(run.stdout, /ok cauchy: every loss of up to M blocks, N 1-5, M 1-3: 335 recovered byte for byte, 0 refused/);
    for (
      const line of [
        "ok update of blocks 1 and 3 equals a fresh encode",
        "ok galois_mul with a raw copy of the Cauchy matrix equals create",
        "ok bad block sizes and a short destination: DOCA_ERROR_INVALID_VALUE, nothing written",
        "ok no live objects left",
      ]
    ) assert.ok(run.stdout.includes(line), `missing "${line}" in:\n${run.stdout}`);
  });

  for (const seed of ["1", "2"]) {
    test(`erasure coding fuzz, shuffled completions (seed ${seed})`, () => {
      const run = runC("erasure_coding_codec", ["fuzz", "300", seed], { DOCA_SIM_SHUFFLE: seed });
      assertPassed(run, "PASS erasure_coding_codec fuzz");
      assert.match(run.stdout, /ok fuzz: 300 rounds, \d+ recovered byte for byte/);
    });
  }

  test("aes_gcm_vectors: GCM known answers through DOCA tasks, forged tags rejected", () => {
    const run = runC("aes_gcm_vectors", []);
    assertPassed(run, "PASS aes_gcm_vectors");
    assert.match(run.stdout, /ok GCM test cases 2, 4, 14, 16/);
    assert.match(run.stdout, /ok bad key type, IV over 12 bytes/);
  });

  for (const seed of ["1", "2"]) {
    test(`AES-GCM fuzz, shuffled completions (seed ${seed})`, () => {
      const run = runC("aes_gcm_vectors", ["fuzz", "150", seed], { DOCA_SIM_SHUFFLE: seed });
      assertPassed(run, "PASS aes_gcm_vectors fuzz");
    });
  }

  test("without libcrypto.so.3 AES-GCM answers NOT_SUPPORTED and says which package to install", () => {
    const run = runC("aes_gcm_vectors", ["missing"], { DOCA_SIM_LIBCRYPTO: "/nonexistent/libcrypto.so.3" });
    assertPassed(run, "PASS aes_gcm_vectors missing");
    assert.match(run.stdout, /libssl3/);
  });
});

describe("software device: devices and configuration", () => {
  test("host side sees 0000:b1:00.1 (mlx5_0)", () => {
    const run = runC("sim_devices", ["host"], { DOCA_SIM_SIDE: "host" });
    assertPassed(run, "PASS sim_devices host");
    assert.match(run.stdout, /describe: side=host dev=0000:b1:00\.1\(mlx5_0,reps=0\)/);
  });

  test("DPU side sees 0000:03:00.1 (mlx5_1) and a NET representor of 0000:b1:00.1", () => {
    const run = runC("sim_devices", ["dpu"], { DOCA_SIM_SIDE: "dpu" });
    assertPassed(run, "PASS sim_devices dpu");
    assert.match(run.stdout, /describe: side=dpu dev=0000:03:00\.1\(mlx5_1,reps=1\)/);
  });

  test("a configuration file replaces the defaults", () => {
    const dir = mkdtempSync(join(tmpdir(), "doca-sim-config-"));
    try {
      const config = join(dir, "devices.json");
      writeFileSync(
        config,
        JSON.stringify({
          host: { devices: [{ pci: "0000:b1:00.1", ibdev: "mlx5_0", caps: { dma_max_buf_size: 2097152 } }] },
          dpu: { devices: [{ pci: "0000:03:00.1", ibdev: "mlx5_1", representors: [{ pci: "b1:00.1", vuid: "X" }] }] },
        }),
      );
      assertPassed(
        runC("sim_devices", ["dpu"], { DOCA_SIM_SIDE: "dpu", DOCA_SIM_CONFIG: config }),
        "PASS sim_devices dpu",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (
    const [what, text, complaint] of [
      ["a malformed PCI address", `{"host": {"devices": [{"pci": "zz:00.1"}]}}`, /"pci" is not a PCI address/],
      ["truncated JSON", `{"host": {"devices": [`, /invalid JSON/],
      ["a missing side section", `{"dpu": {"devices": []}}`, /needs an object "host"/],
      [
        "a negative capability",
        `{"host": {"devices": [{"pci": "b1:00.1", "caps": {"dma_max_buf_size": -1}}]}}`,
        /"dma_max_buf_size" must be an integer/,
      ],
    ] as const
  ) {
    test(`a configuration with ${what} fails with DOCA_ERROR_BAD_CONFIG and says why`, () => {
      const dir = mkdtempSync(join(tmpdir(), "doca-sim-config-"));
      try {
        const config = join(dir, "bad.json");
        writeFileSync(config, text);
        const run = runC("sim_devices", ["config-error"], { DOCA_SIM_CONFIG: config });
        assertPassed(run, "PASS sim_devices config-error");
        assert.match(run.stderr, complaint);
        assert.ok(run.stderr.includes(config), "the message names the file");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe("the software device's own log lines", () => {
  test("control characters in a configured path reach the terminal escaped (\\xNN), never raw", () => {
    const dir = mkdtempSync(join(tmpdir(), "doca-sim-config-"));
    try {
      const config = join(dir, "\x1b]0;PWNED\x07\x1b[2J\u009b31m.json"); // a title, a screen clear, a C1 CSI
      const run = runC("sim_devices", ["config-error"], { DOCA_SIM_CONFIG: config });
      assertPassed(run, "PASS sim_devices config-error");
      assert.match(run.stderr, /DOCA_SIM_CONFIG .*\\x1b\]0;PWNED\\x07\\x1b\[2J\\x9b31m\.json/);
      // deno-lint-ignore no-control-regex -- looking for raw control characters is the point
      assert.doesNotMatch(run.stderr, /[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f]/, "no raw control character");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface TraceLine {
  op: string;
  addr: bigint;
  len: bigint;
  rangeBase: bigint;
  rangeLen: bigint;
  verdict: string;
}

function parseTrace(text: string): TraceLine[] {
  return text.trim().split("\n").filter(Boolean).map((line) => {
    const field = (key: string) => {
      const match = line.match(new RegExp(`(?:^| )${key}=(\\S+)`));
      assert.ok(match, `trace line without ${key}: ${line}`);
      return match[1];
    };
    const [base, len] = field("range").split("+");
    return {
      op: field("op"),
      addr: BigInt(field("addr")),
      len: BigInt(field("len")),
      rangeBase: BigInt(base),
      rangeLen: BigInt(len),
      verdict: field("verdict"),
    };
  });
}

describe("software device: DMA between a host process and a DPU process", () => {
  const scenarios: [string, RegExp][] = [
    ["to_host", /ok DPU wrote 262151 bytes into host memory, host verified them/],
    ["from_host", /ok DPU read 262151 bytes of host memory and verified them/],
    ["ro_write", /ok write into a PCI_READ_ONLY export: DOCA_ERROR_NOT_PERMITTED, host bytes unchanged/],
    ["revoked", /ok copy from a revoked export: DOCA_ERROR_NOT_PERMITTED, nothing copied/],
    ["forged", /ok forged key: DOCA_ERROR_NOT_PERMITTED\nok malformed descriptor: DOCA_ERROR_INVALID_VALUE/],
    ["wrong_device", /ok import through a device that cannot reach the exporter's: DOCA_ERROR_NOT_PERMITTED/],
    ["peer_host", /ok import through a device that cannot reach the exporter's: DOCA_ERROR_NOT_PERMITTED/],
    ["host_reads_dpu", /ok host read 262151 bytes of DPU memory and verified them/],
    ["out_of_range", /ok bufs outside the exported range: DOCA_ERROR_INVALID_VALUE/],
    [
      "vanished",
      /ok copy from a vanished host process: DOCA_ERROR_IO_FAILED\nok no registry file in DOCA_SIM_DIR, from the dead host or from an exporter/,
    ],
  ];
  for (const [scenario, expected] of scenarios) {
    test(scenario, () => {
      const run = runC("dma_remote", [scenario]);
      assertPassed(run, `PASS dma_remote ${scenario}`);
      assert.match(run.stdout, expected);
    });
  }

  test("DOCA_SIM_TRACE: allowed accesses stay inside the export, refused writes are logged as refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "doca-sim-trace-"));
    try {
      const readTrace = join(dir, "read.log");
      assertPassed(runC("dma_remote", ["from_host"], { DOCA_SIM_TRACE: readTrace }), "PASS dma_remote from_host");
      const reads = parseTrace(readFileSync(readTrace, "utf8"));
      assert.ok(reads.length >= 1);
      for (const line of reads) {
        assert.equal(line.op, "r");
        assert.equal(line.verdict, "allowed");
        assert.ok(line.addr >= line.rangeBase && line.addr + line.len <= line.rangeBase + line.rangeLen);
      }
      assert.equal(reads.reduce((sum, line) => sum + line.len, 0n), 262151n);

      const writeTrace = join(dir, "write.log");
      assertPassed(runC("dma_remote", ["ro_write"], { DOCA_SIM_TRACE: writeTrace }), "PASS dma_remote ro_write");
      const writes = parseTrace(readFileSync(writeTrace, "utf8"));
      assert.deepEqual(writes.map((line) => [line.op, line.verdict]), [["w", "DOCA_ERROR_NOT_PERMITTED"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("software device: benchmark driver", () => {
  test("dma_bench runs every case on a small size and reports JSON lines", () => {
    const run = runC("dma_bench", ["all", "65536", "5"]);
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
    const lines = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, number | string>);
    assert.deepEqual(lines.map((line) => line.case), ["local", "small", "remote"]);
    assert.ok((lines[0].dma_gbps as number) > 0 && (lines[0].memcpy_gbps as number) > 0);
    assert.ok((lines[1].ops as number) > 0);
    assert.ok((lines[2].dma_gbps as number) > 0 && (lines[2].process_vm_readv_gbps as number) > 0);
  });
});

describe("software device: compress and SHA (zlib, liblz4, libcrypto loaded at run time)", () => {
  const compressLines = [
    "ok capabilities supported",
    "ok compress into a destination too small: DOCA_ERROR_TOO_BIG",
    "ok decompress: small destination TOO_BIG, truncated and corrupt streams INVALID_VALUE",
    "ok lz4 stream: bad block checksum, truncation and a small destination fail with INVALID_VALUE",
    "ok no live objects left",
  ];
  const shaLines = [
    'ok SHA-1, SHA-256 and SHA-512 of "abc" match FIPS 180\'s vectors',
    "ok a destination smaller than the digest: DOCA_ERROR_INVALID_VALUE, nothing written",
    "ok no live objects left",
  ];
  for (const [mode, env] of [["strict", {}], ["shuffled completions", { DOCA_SIM_SHUFFLE: "7" }]] as const) {
    test(`compress_tasks (${mode}): round trips, checksums, exact errors, fuzzed streams never overrun`, () => {
      const run = runC("compress_tasks", [], env);
      assertPassed(run, "PASS compress_tasks");
      for (const line of compressLines) assert.ok(run.stdout.includes(line), `missing "${line}" in:\n${run.stdout}`);
      assert.match(run.stdout, /ok fuzz: 300 corrupted deflate streams, \d+ refused/);
      assert.match(run.stdout, /ok fuzz: 300 corrupted lz4 inputs, \d+ refused/);
      assert.match(run.stdout, /ok stop with 3 tasks in flight: flushed with DOCA_ERROR_\w+, context idle/);
      assert.doesNotMatch(run.stderr, /strict: (leak|task-not-freed|use-after-destroy|release-held-buf)/);
    });

    test(`sha_tasks (${mode}): FIPS vectors, partial sessions equal one-shot digests, state rules`, () => {
      const run = runC("sha_tasks", [], env);
      assertPassed(run, "PASS sha_tasks");
      for (const line of shaLines) assert.ok(run.stdout.includes(line), `missing "${line}" in:\n${run.stdout}`);
      assert.equal(run.stdout.match(/^ok partial SHA-\d+: /gm)?.length, 3);
      assert.doesNotMatch(run.stderr, /strict: (leak|task-not-freed|use-after-destroy|release-held-buf)/);
    });
  }

  test("without the backing libraries every kind is NOT_SUPPORTED and the reason names the Debian package", () => {
    const compress = runC("compress_tasks", ["off"], { DOCA_SIM_ACCEL_OFF: "zlib,lz4" });
    assertPassed(compress, "PASS compress_tasks");
    assert.ok(compress.stdout.includes("ok capabilities NOT_SUPPORTED, with the Debian packages named"));
    assert.ok(compress.stdout.includes("ok start with unsupported kinds configured: DOCA_ERROR_NOT_SUPPORTED"));
    const sha = runC("sha_tasks", ["off"], { DOCA_SIM_ACCEL_OFF: "crypto" });
    assertPassed(sha, "PASS sha_tasks");
    assert.ok(sha.stdout.includes("ok capabilities NOT_SUPPORTED, naming libssl3"));
  });
});

describe("software device: exported symbols", () => {
  /** Every doca_* function every library of build/sim/lib exports (however many libraries the build made). */
  function definedSymbols(): Set<string> {
    return new Set(librariesIn(libDir).flatMap((library) => exportsOf(libDir, library)));
  }

  test("sim/coverage.txt is the list of functions ffi/native/symbols.ts binds (deno task docs:libraries)", () => {
    assert.equal(readFileSync(coveragePath, "utf8"), renderCoverage(), "run `deno task docs:libraries`");
  });

  test("each library of build/sim exports the functions doca-ts binds from it (sim/coverage.txt)", () => {
    for (const [library, names] of boundFunctions()) {
      assert.ok(librariesIn(libDir).includes(library), `${library} is not built`);
      const exported = new Set(exportsOf(libDir, library));
      assert.deepEqual(names.filter((name) => !exported.has(name)), [], `${library} lacks functions doca-ts binds`);
    }
  });

  test("header-inline functions are not exported, the diagnostics are", () => {
    const defined = definedSymbols();
    for (const inline of ["doca_version", "doca_buf_inventory_buf_get_by_addr", "doca_buf_inventory_buf_get_by_data"]) {
      assert.equal(defined.has(inline), false, `${inline} must stay inline`);
    }
    assert.ok(defined.has("doca_sim_live_objects") && defined.has("doca_sim_describe"));
  });
});
