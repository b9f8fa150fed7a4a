/**
 * Bad input at every public entry point: dma-copy's flags and --json files, and the TypeScript API (wrong kinds of
 * buffers, negative/NaN/huge lengths, use after close, double close). Each must give a clear error naming the input
 * (non-zero exit for the CLI) and never crash the runtime: API calls run in child processes
 * (tests/helpers/faults/api-probe.ts), one case per child, and the child's exit status is checked.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writePatternFile } from "./helpers/tasks/workspace.ts";
import { type ChildResult, runCopyPair } from "../tasks/common/run-pair.ts";
import {
  DPU_PCI,
  FaultCounters,
  faultSpace,
  HOST_PCI,
  jsonLines,
  removeSpaces,
  startDmaCopy,
  startHelper,
} from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-input");
after(() => {
  removeSpaces();
  counters.print();
});

// ------------------------------------------------------------------ dma-copy command line

const w = faultSpace("cli");
const src = join(w.host, "src.bin");
writePatternFile(src, 1000);
const jsonDir = join(w.root, "json");
mkdirSync(jsonDir);
const json = (name: string, text: string) => {
  const p = join(jsonDir, name);
  writeFileSync(p, text);
  return p;
};
const unreadable = json("unreadable.json", `{"file": "x"}`);
chmodSync(unreadable, 0o000);

interface CliCase {
  name: string;
  side?: "host" | "dpu";
  args: string[];
  /** The message must contain/match this (naming the bad input). */
  error: RegExp;
  /** Expected exit status (2 = usage error), default any non-zero. */
  code?: number;
  skip?: string;
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

const cliCases: CliCase[] = [
  { name: "no -f", args: ["-p", HOST_PCI], error: /-f\/--file/, code: 2 },
  { name: "unknown flag", args: ["-f", src, "--frobnicate"], error: /frobnicate/, code: 2 },
  { name: "-f without a value", args: ["-f"], error: /-f|--file/, code: 2 },
  { name: "--json missing file", args: ["--json", join(jsonDir, "nope.json")], error: /nope\.json/, code: 2 },
  {
    name: "--json a directory",
    args: ["--json", jsonDir],
    error: new RegExp(`${jsonDir.replace(/[/.]/g, "\\$&")} is a folder`), // the tasks' words, not EISDIR
    code: 2,
  },
  {
    name: "--json unreadable file",
    args: ["--json", unreadable],
    error: /unreadable\.json.*(EACCES|permission)/i,
    code: 2,
    skip: isRoot ? "running as root: every file is readable" : undefined,
  },
  {
    name: "--json path through a regular file (ENOTDIR)",
    args: ["--json", join(src, "x.json")],
    error: /src\.bin\/x\.json.*ENOTDIR|not a directory/,
    code: 2,
  },
  { name: "--json not JSON", args: ["--json", json("bad.json", "{ file: ")], error: /bad\.json/, code: 2 },
  { name: "--json an array", args: ["--json", json("arr.json", "[1,2]")], error: /arr\.json.*object/, code: 2 },
  {
    name: "--json unknown key",
    args: ["--json", json("unk.json", `{"file": "${src}", "bogus": 1}`)],
    error: /unknown flag "bogus"/,
    code: 2,
  },
  {
    name: "--json key of wrong type",
    args: ["--json", json("type.json", `{"file": ["a"]}`)],
    error: /"file" must be/,
    code: 2,
  },
  {
    name: "--json boolean flag as string",
    args: ["--json", json("bool.json", `{"file": "${src}", "quiet": "yes"}`)],
    error: /"quiet" must be true or false/,
    code: 2,
  },
  { name: "bad PCI address", args: ["-f", src, "-p", "zz:00.1"], error: /zz:00\.1/, code: 2 },
  { name: "PCI address with junk", args: ["-f", src, "-p", "0000:b1:00.1; rm -rf /"], error: /rm -rf/, code: 2 },
  { name: "unknown PCI address", args: ["-f", src, "-p", "0000:99:00.1", "--timeout", "2"], error: /0000:99:00\.1/ },
  {
    name: "-p and --dev-pci disagree",
    args: ["-f", src, "-p", HOST_PCI, "--dev-pci", "03:00.1"],
    error: /name different devices/,
    code: 2,
  },
  { name: "DPU without -r", side: "dpu", args: ["-f", src, "-p", DPU_PCI], error: /-r\/--rep-pci/, code: 2 },
  { name: "DPU with a bad -r", side: "dpu", args: ["-f", src, "-p", DPU_PCI, "-r", "b1:00"], error: /b1:00/, code: 2 },
  {
    name: "DPU with an unknown representor",
    side: "dpu",
    args: ["-f", src, "-p", DPU_PCI, "-r", "0000:aa:00.0", "--timeout", "2"],
    error: /0000:aa:00\.0/,
  },
  { name: "--side bogus", args: ["-f", src, "--side", "bogus"], error: /bogus/, code: 2 },
  { name: "--timeout negative", args: ["-f", src, "--timeout", "-1"], error: /--timeout/, code: 2 },
  { name: "--timeout=-1", args: ["-f", src, "--timeout=-1"], error: /--timeout.*-1/, code: 2 },
  { name: "--timeout NaN", args: ["-f", src, "--timeout", "NaN"], error: /--timeout.*NaN/, code: 2 },
  { name: "--timeout overflow", args: ["-f", src, "--timeout", "1e400"], error: /--timeout.*1e400/, code: 2 },
  { name: "--slots 0", args: ["-f", src, "--slots", "0"], error: /--slots.*"0"/, code: 2 },
  {
    name: "--slots overflow",
    args: ["-f", src, "--slots", "99999999999999999999"],
    error: /--slots.*99999999999999999999/,
    code: 2,
  },
  { name: "--chunk-size negative", args: ["-f", src, "--chunk-size", "-4096"], error: /--chunk-size/, code: 2 },
  {
    name: "--chunk-size beyond 2^64",
    args: ["-f", src, "--chunk-size", "18446744073709551617"],
    error: /--chunk-size.*18446744073709551617/,
    code: 2,
  },
  { name: "--chunk-size float", args: ["-f", src, "--chunk-size", "1.5"], error: /--chunk-size.*1\.5/, code: 2 },
  { name: "--log-level bogus", args: ["-f", src, "-l", "loud"], error: /loud/, code: 2 },
  // a usage error naming the flag, before any work (issue 32 item 3)
  { name: "-f is a directory", args: ["-f", w.host, "-p", HOST_PCI, "--timeout", "2"], error: /-f\/--file: .* is a folder: a copy sends or receives a regular file/, code: 2 },
];

describe("dma-copy command line: bad input gives a clear error and a non-zero exit", () => {
  for (const c of cliCases) {
    test(c.name, { skip: c.skip, timeout: 60_000 }, async () => {
      const r = await startDmaCopy(c.side ?? "host", c.args, { DOCA_SIM_DIR: w.sim }, 30_000).done;
      counters.inputs++;
      assert.equal(r.signal, null, `must not crash; stderr:\n${r.stderr}`);
      assert.notEqual(r.code, 0, `must fail; stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
      if (c.code !== undefined) assert.equal(r.code, c.code, `exit status; stderr:\n${r.stderr}`);
      assert.match(r.stderr, /error: /);
      assert.match(r.stderr, c.error, "the error names the bad input");
      assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace for a user error");
    });
  }

  test(
    "host target in a folder that does not exist: fails naming it, DPU told, no file anywhere",
    { timeout: 60_000 },
    async () => {
      const s = faultSpace("nodir");
      writePatternFile(join(s.dpu, "f.bin"), 5000);
      const target = join(s.host, "no-such-dir", "f.bin");
      const { host, dpu } = await runCopyPair({
        hostArgs: ["-f", target, "-p", HOST_PCI, "--timeout", "5"],
        dpuArgs: ["-f", join(s.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "5"],
        env: { DOCA_SIM_DIR: s.sim },
        timeoutMs: 60_000,
      });
      counters.inputs++;
      counters.faults++;
      assert.notEqual(host.code, 0, host.stderr);
      assert.notEqual(dpu.code, 0, `the DPU must not report success; stderr:\n${dpu.stderr}`);
      assert.match(host.stderr, /no-such-dir/);
      assert.equal(existsSync(target), false);
      assert.deepEqual(s.list(s.host), []);
    },
  );

  test("a file that is too large for a classic peer is refused before any DMA", { timeout: 60_000 }, async () => {
    // sizes that overflow: a classic (NVIDIA-like) DPU has one 2 MiB buffer
    const s = faultSpace("big");
    writePatternFile(join(s.host, "f.bin"), 2 * 1024 * 1024 + 1);
    const { host, dpu } = await runCopyPair({
      hostArgs: ["-f", join(s.host, "f.bin"), "-p", HOST_PCI, "--timeout", "5"],
      dpuArgs: ["-f", join(s.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", "5", "--classic"],
      env: { DOCA_SIM_DIR: s.sim },
    });
    counters.inputs++;
    assert.notEqual(host.code, 0);
    assert.notEqual(dpu.code, 0);
    assert.match(dpu.stderr, /2097153 bytes/);
    assert.deepEqual(s.list(s.dpu), []);
  });
});

// ------------------------------------------------------------------ TypeScript API, each case in a child

interface ApiExpect {
  /** false: the call may succeed (it must still not crash). */
  throws: boolean;
  error?: RegExp;
}

const api: Record<string, ApiExpect> = {
  "alloc-negative": { throws: true, error: /bad length -1/ },
  "alloc-zero": { throws: true, error: /bad length 0/ },
  "alloc-nan": { throws: true, error: /bad length NaN/ },
  "alloc-fraction": { throws: true, error: /bad length 1\.5/ },
  "alloc-huge": { throws: true, error: /4503599627370496/ },
  "alloc-string": { throws: true, error: /bad length/ },
  // JS-heap memory where native memory is needed: refused in JS, naming what is expected
  "mmap-js-heap-view": { throws: true, error: /NativeMemory/ },
  "mmap-js-arraybuffer": { throws: true, error: /NativeMemory/ },
  "mmap-negative-length": { throws: true, error: /-5/ },
  "mmap-nan-offset": { throws: true, error: /offset|NaN/ },
  "mmap-past-end": { throws: true, error: /4096\+8192 outside memory of 8192/ },
  "buf-outside-map": { throws: true, error: /DOCA_ERROR_INVALID_VALUE.*\+16 in mmap/ },
  "buf-negative-length": { throws: true, error: /-1/ },
  "buf-nan-address": { throws: true, error: /NaN/ },
  "buf-huge-length": { throws: true, error: /9007199254740992/ },
  "inventory-negative": { throws: true, error: /inventory|-1/i },
  "inventory-nan": { throws: true, error: /inventory|NaN/i },
  "from-export-empty": { throws: true, error: /doca_mmap_create_from_export.*INVALID_VALUE|descriptor/ },
  "from-export-short": { throws: true, error: /doca_mmap_create_from_export.*INVALID_VALUE|descriptor/ },
  "from-export-js-array": { throws: true, error: /INVALID_VALUE|Uint8Array|descriptor/ },
  "device-garbage-pci": { throws: true, error: /not-a-pci-address/ },
  "device-unknown-pci": { throws: true, error: /0000:99:00\.7.*available/ },
  // Objects that are not Bufs: refused in JS before a pointer reaches native code
  "memcpy-not-bufs": { throws: true, error: /Buf/ },
  "memcpy-forged-handles": { throws: true, error: /Buf/ },
  "memcpy-dst-too-small": { throws: true, error: /INVALID_VALUE/ },
  "use-after-close-memory": { throws: true, error: /NativeMemory is closed/ },
  "use-after-close-mmap": { throws: true, error: /Mmap is closed/ },
  "use-after-close-device": { throws: true, error: /Device .* is closed/ },
  "use-after-close-dma": { throws: true, error: /Dma is closed/ },
  "use-after-close-pe": { throws: true, error: /ProgressEngine is closed/ },
  "stale-view-write": { throws: false },
  "double-close-everything": { throws: false },
  "parent-closed-first": { throws: true, error: /is closed/ },
  "comch-name-too-long": { throws: true, error: /longer than 119 bytes/ },
  "comch-server-on-host": { throws: true, error: /NOT_SUPPORTED/ },
  "comch-connect-timeout": { throws: true, error: /nobody-listens/ },
  "comch-bad-max-msg": { throws: true, error: /max_msg_size|-1/ },
};

const results = new Map<string, { r: ChildResult; events: Record<string, unknown>[] }>();

describe("TypeScript API: bad input throws a clear error and never crashes the runtime", () => {
  before(async () => {
    const names = Object.keys(api);
    const sim = faultSpace("api").sim;
    // Two children at a time (2 cores): each case alone, so one crash cannot hide the others.
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const name = names[next++];
        const r = await startHelper("api-probe.ts", [name], {
          DOCA_SIM_DIR: sim,
          DOCA_SIM_SIDE: "host",
          DOCA_SIM_LOG: "0",
        }, 30_000).done;
        results.set(name, { r, events: jsonLines(r.stdout) });
      }
    };
    await Promise.all([worker(), worker()]);
    // Every probe child in one hook: up to ~20 children of 30 s at most, two at a time, on a loaded machine.
  }, { timeout: 600_000 });

  for (const [name, expect] of Object.entries(api)) {
    test(name, () => {
      const got = results.get(name);
      assert.ok(got, "the case ran");
      counters.inputs++;
      const { r, events } = got;
      assert.equal(
        r.signal,
        null,
        `the runtime crashed (signal ${r.signal}) in ${name}; stderr:\n${r.stderr.slice(0, 2000)}`,
      );
      assert.equal(r.code, 0, `the runtime died (exit ${r.code}) in ${name}; stderr:\n${r.stderr.slice(0, 2000)}`);
      const outcome = events.find((e) => e.case === name);
      assert.ok(outcome, `no outcome line; stdout:\n${r.stdout}`);
      if (expect.throws) {
        assert.equal(outcome.threw, true, `${name} must throw; it returned ${outcome.result}`);
        assert.match(String(outcome.message), expect.error!, `${name}: the error names the bad input`);
      }
      const live = events.find((e) => "liveAfter" in e);
      assert.equal(live?.liveAfter, live?.liveBefore, `${name} leaked native handles`);
    });
  }
});
