/**
 * Every task's --help tells the truth about its flags (issue 10 §6, issue 12 §3): each task runs with --help as a
 * child of this runtime, and the flags its parser accepts (the task's exported FLAGS) are exactly the flags its
 * help documents — long and short spellings both ways — and the help states the task's waits.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot, startChild } from "../tasks/common/run-pair.ts";
import { declaredFlags } from "./helpers/tasks/task-command.ts";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { FLAGS as dmaCopy } from "../tasks/dma-copy/options.ts";
import { FLAGS as dmaLocalCopy } from "../tasks/dma-local-copy.ts";
import { FLAGS as comchServer } from "../tasks/comch-server.ts";
import { FLAGS as comchClient } from "../tasks/comch-client.ts";
import { FLAGS as comchStream } from "../tasks/comch-stream.ts";
import { FLAGS as devices } from "../tasks/devices.ts";
import { FLAGS as demo } from "../tasks/demo.ts";
import { FLAGS as rdmaCopy } from "../tasks/rdma-copy/options.ts";
import { FLAGS as rdmaPing } from "../tasks/rdma-ping.ts";
import { FLAGS as rdmaDemo } from "../tasks/rdma-demo.ts";
import { FLAGS as exportMmap } from "../tasks/steps/export-mmap.ts";
import { FLAGS as exchangeDescriptor } from "../tasks/steps/exchange-descriptor.ts";
import { FLAGS as dmaTransfer } from "../tasks/steps/dma-transfer.ts";
import { FLAGS as compress } from "../tasks/compress.ts";
import { FLAGS as decompress } from "../tasks/decompress.ts";
import { FLAGS as sha } from "../tasks/sha.ts";
import { FLAGS as encryptFlags } from "../tasks/encrypt.ts";
import { FLAGS as decryptFlags } from "../tasks/decrypt.ts";
import { FLAGS as ecEncodeFlags } from "../tasks/ec-encode.ts";
import { FLAGS as ecRecoverFlags } from "../tasks/ec-recover.ts";
import { FLAGS as storageRelay } from "../tasks/storage-relay.ts";
import { FLAGS as doctor } from "../tasks/doctor.ts";

type Flags = Record<string, { type: string; short?: string }>;
const tasks: [string, Flags][] = [
  ["dma-copy.ts", dmaCopy],
  ["dma-local-copy.ts", dmaLocalCopy],
  ["encrypt.ts", encryptFlags],
  ["decrypt.ts", decryptFlags],
  ["ec-encode.ts", ecEncodeFlags],
  ["ec-recover.ts", ecRecoverFlags],
  ["comch-server.ts", comchServer],
  ["comch-client.ts", comchClient],
  ["comch-stream.ts", comchStream],
  ["devices.ts", devices],
  ["demo.ts", demo],
  ["rdma-copy.ts", rdmaCopy],
  ["rdma-ping.ts", rdmaPing],
  ["rdma-demo.ts", rdmaDemo],
  ["steps/export-mmap.ts", exportMmap],
  ["steps/exchange-descriptor.ts", exchangeDescriptor],
  ["steps/dma-transfer.ts", dmaTransfer],
  ["compress.ts", compress],
  ["decompress.ts", decompress],
  ["sha.ts", sha],
  ["storage-relay.ts", storageRelay],
  ["doctor.ts", doctor],
];
const task = (name: string) => fileURLToPath(new URL(`../tasks/${name}`, import.meta.url));

/** Flags a help text mentions: "--long" words and "-x" letters (not inside words or numbers). */
function mentioned(help: string): { long: Set<string>; short: Set<string> } {
  const long = new Set([...help.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]));
  const short = new Set([...help.matchAll(/(?<![\w-])-([a-zA-Z])(?![\w-])/g)].map((m) => m[1]));
  return { long, short };
}

describe("--help documents exactly the flags each task accepts", () => {
  for (const [name, flags] of tasks) {
    test(name, async () => {
      const r = await startChild(task(name), ["--help"], {}, 60_000).done;
      assert.equal(r.code, 0, r.stderr);
      const help = r.stdout;
      assert.match(help, /^Usage: /);
      const { long, short } = mentioned(help);
      for (const [flag, spec] of Object.entries(flags)) {
        assert.ok(long.has(flag), `--${flag} is accepted but not in --help`);
        if (spec.short) assert.ok(short.has(spec.short), `-${spec.short} (--${flag}) is accepted but not in --help`);
      }
      const shorts = new Set(Object.values(flags).map((s) => s.short).filter(Boolean));
      for (const flag of long) assert.ok(flag in flags, `--help mentions --${flag}, which the parser rejects`);
      for (const s of short) assert.ok(shorts.has(s), `--help mentions -${s}, which the parser rejects`);
      assert.match(help, /wait|Wait|timeout/, "the help states the task's waits (or that it has none)");
      // Every task stops the same way (tasks/common/interrupt.ts): its help says so, with every status
      assert.match(help, /Exit status/, "the help states the exit statuses");
      assert.match(help, /\b2 for bad flags/);
      assert.match(help, /130\/143\/129\/141 when stopped \(SIGINT\/SIGTERM\/SIGHUP\/output closed\)/);
    });
  }
});

test("dma-copy's --help promises nothing it does not do (no 'nothing on failure'), and tells about Ctrl-C", async () => {
  const r = await startChild(task("dma-copy.ts"), ["--help"], {}, 60_000).done;
  assert.doesNotMatch(r.stdout, /nothing on failure/);
  assert.match(r.stdout, /Ctrl-C/);
  assert.match(r.stdout, /the sender exits 0 only after that/);
  // the one setting both sides must share, with its default (issue 32 n1 item 6: only doctor's help named it)
  assert.match(r.stdout, /DOCA_SIM_DIR, by default \$XDG_RUNTIME_DIR\/doca-sim, else\s+\/tmp\/doca-sim-<your uid>/);
});

describe("usage errors exit 2 and name the flag", () => {
  // a descriptor file of a 4 KiB export, for dma-transfer's range flags (no device needed: checked before it opens)
  const scratch = mkdtempSync(join(tmpdir(), "help-"));
  const descriptor = join(scratch, "d.json");
  writeFileSync(descriptor, JSON.stringify({ descriptor: "AAAA", address: 4096, length: 4096 }));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const cases: [string, string[], RegExp][] = [
    ["comch-client.ts", ["--timeout", "abc"], /--timeout: expected a positive number of seconds \(at most 86400\), got "abc"/],
    ["rdma-copy.ts", ["--send", "a", "--send", "b", "--connect", "127.0.0.1:7471"], /--send is given more than once/],
    ["dma-copy.ts", ["-f", "a", "-f", "b"], /--file is given more than once/],
    ["rdma-ping.ts", ["--connect", "256.1.1.1:7000"], /--connect: HOST must be an IPv4 or IPv6 address .*"256\.1\.1\.1"/],
    ["rdma-ping.ts", ["--listen", "localhost:7000"], /--listen: ADDR must be an IPv4 or IPv6 address/],
    ["comch-client.ts", ["-s", ""], /-s\/--name: expected a Comch server name, got ""/],
    ["dma-copy.ts", ["-f", "x", "--server-name", ""], /--server-name: expected a Comch server name/],
    ["comch-client.ts", ["--count", "abc"], /--count: expected a whole number ≥ 1, got "abc"/],
    ["comch-server.ts", ["-r", "0000:b1:00.1", "--count", "0"], /--count: expected a whole number/],
    ["comch-stream.ts", ["--size", "9000"], /--size: 9000 is too large \(at most 4096\)/],
    ["comch-client.ts", ["--count", "99999999999999999999"], /--count: 99999999999999999999 is too large \(at most 9007199254740991\)/],
    ["dma-copy.ts", ["-f", "x", "--timeout", "99999999999"], /--timeout: 99999999999 seconds is too long \(at most 86400, a day\)/],
    ["doctor.ts", ["--bogus"], /bogus/],
    ["doctor.ts", ["--timeout", "99999999999"], /--timeout: 99999999999 seconds is too long \(at most 86400/],
    ["doctor.ts", ["--timeout", "0"], /--timeout: expected a positive number of seconds/],
    ["doctor.ts", ["-p", "zz"], /-p\/--pci-addr: "zz" is not a PCI address/],
    ["doctor.ts", ["--peer"], /--peer/],
    ["dma-copy.ts", ["-f", "x", "--timeout", "NaN"], /--timeout: expected a positive number/],
    ["dma-copy.ts", ["-p", "0000:b1:00.1"], /missing -f\/--file/],
    ["dma-local-copy.ts", ["--size", "1e3"], /--size: expected a whole number/],
    ["demo.ts", ["--size", "-1"], /--size: expected a whole number 1\.\.4294967296, got "-1"/],
    ["demo.ts", ["--size", "0"], /--size: expected a whole number 1\.\.4294967296, got "0"/],
    ["dma-local-copy.ts", ["--size", "3000000"], /--size: 3000000 bytes is more than the device's largest DMA buffer/],
    // far over the limit: the device's limit is checked before anything is allocated (not the runtime's own error)
    ["dma-local-copy.ts", ["--size", "99999999999"], /--size: 99999999999 bytes is more than the device's largest DMA buffer/],
    ["comch-client.ts", ["--count", "-5"], /--count: expected a whole number ≥ 1, got "-5"/],
    ["devices.ts", ["--side", "nic"], /--side: expected host or dpu/],
    ["steps/dma-transfer.ts", ["--descriptor", "d.json", "--read", "o", "--offset", "x"], /--offset/],
    ["steps/exchange-descriptor.ts", ["--send", "d.json", "--timeout", "-3"], /--timeout/],
    ["steps/export-mmap.ts", ["--length", "ten"], /--length: expected a whole number/],
    // more memory than the machine has: checked before anything is allocated (was mmap's own failure, exit 1)
    ["steps/export-mmap.ts", ["--length", "99999999999"], /--length: 99999999999 bytes is more than this machine's memory|--length: cannot allocate 99999999999 bytes/],
    ["steps/dma-transfer.ts", ["--descriptor", descriptor, "--read", join(scratch, "o"), "--length", "99999999999"], /--length: 99999999999 bytes is more than this machine's memory|--offset\/--length: range offset 0 length 99999999999 does not fit the export of 4096 bytes/],
    ["steps/dma-transfer.ts", ["--descriptor", descriptor, "--read", join(scratch, "o"), "--offset", "4000", "--length", "200"], /--offset\/--length: range offset 4000 length 200 does not fit the export of 4096 bytes/],
    ["comch-client.ts", ["--bogus"], /bogus/],
    ["rdma-copy.ts", ["--send", "x", "--connect", "host:1"], /--connect: HOST must be an IPv4 or IPv6 address/],
    ["rdma-copy.ts", ["--receive", "x", "--listen", "7471", "--chunk", "9"], /--chunk: only the sender/],
    ["rdma-ping.ts", ["--connect", "127.0.0.1:7", "--size", "0"], /--size/],
    ["rdma-demo.ts", ["--size", "0"], /--size/],
    // a folder as the file a copy writes: a usage error before any work (issue 32 item 3)
    ["dma-copy.ts", ["-f", "/tmp"], /-f\/--file: \/tmp is a folder: a copy sends or receives a regular file/],
    // the file a copy sends: dma-copy's words (transfer/local-file.ts; rdma-copy said only "not a regular file", exit 1)
    ["rdma-copy.ts", ["--send", "/tmp", "--connect", "127.0.0.1:7471"], /--send: \/tmp is a folder: a copy sends or receives a regular file/],
    ["rdma-copy.ts", ["--receive", "/tmp", "--listen", "127.0.0.1:7471"], /--receive: \/tmp is a folder, not a file: the output must be a file name \(rdma-copy never replaces anything\)/],
    ["rdma-demo.ts", ["--size", "99999999999"], /--size: 99999999999 is too large \(at most 1073741824\)/],
    // an empty text is said as such, not as "0 bytes is more than the device's largest DMA buffer" (issue 32 n1 item 6)
    ["dma-local-copy.ts", ["-t", ""], /-t\/--text: the text is empty; give at least one character to copy/],
  ];
  for (const [name, args, pattern] of cases) {
    test(`${name} ${args.join(" ")}`, async () => {
      const r = await startChild(task(name), args, {}, 60_000).done;
      assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.match(r.stderr, /\(see --help\)/);
      const taskName = name.replace(/^.*\//, "").replace(/\.ts$/, "");
      // dma-copy names its side once it is known ("dma-copy: host side: …")
      assert.ok(r.stderr.startsWith(`${taskName}: `), `the message starts with the task's name: ${r.stderr}`);
    });
  }
});

describe("the scripts deno.json runs answer --help and do nothing else", () => {
  const script = (name: string) => fileURLToPath(new URL(`../scripts/${name}`, import.meta.url));
  // `deno task machine-code --help` rewrote ffi/native/machine-code.ts; sim:build's help named 3 of its libraries
  const scripts: [string, string, string[]][] = [
    ["machine-code.ts", "machine-code", [join(repoRoot, "ffi", "native", "machine-code.ts")]],
    ["library-table.ts", "docs:libraries", [join(repoRoot, "docs", "LIBRARIES.md"), join(repoRoot, "sim", "coverage.txt")]],
    ["build-sim.ts", "sim:build", []],
  ];
  for (const [name, denoTask, outputs] of scripts) {
    // machine-code and docs:libraries are Deno scripts (import.meta.main, which Node 20 lacks: there they do nothing)
    const skip = currentRuntime() === "node" && name !== "build-sim.ts" ? "a Deno script (Bun runs it too)" : false;
    test(`${name} (deno task ${denoTask}) --help and -h: usage on stdout, exit 0, nothing written`, { skip, timeout: 120_000 }, async () => {
      const before = outputs.map((path) => statSync(path).mtimeMs);
      for (const flag of ["--help", "-h"]) {
        const r = await startChild(script(name), [flag], {}, 100_000, declaredFlags(denoTask)).done;
        assert.equal(r.code, 0, `${flag}: ${r.stderr}`);
        assert.match(r.stdout, /^Usage: /, flag);
        assert.match(r.stdout, /-h, --help/, `${flag}: the help lists itself`);
        assert.doesNotMatch(r.stdout, /^(wrote|built|machine-code: wrote)/m, flag);
      }
      assert.deepEqual(outputs.map((path) => statSync(path).mtimeMs), before, "no file rewritten");
      const bad = await startChild(script(name), ["--no-such-flag"], {}, 100_000, declaredFlags(denoTask)).done;
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /no-such-flag/);
      assert.doesNotMatch(bad.stderr, /Uncaught| {4}at /);
    });
  }

  test("sim:build speaks as sim:build: --version, a bad flag, and an --out it cannot create (one line, exit 1, no hang)", {
    timeout: 200_000,
  }, async () => {
    const run = (args: string[]) => startChild(script("build-sim.ts"), args, {}, 100_000, declaredFlags("sim:build")).done;
    const version = await run(["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^doca-ts sim:build \d+\.\d+\.\d+; /);
    const bad = await run(["--bogus"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^sim:build: .*bogus/);
    // Node's recursive mkdir loops forever under /proc; Deno's refusal was an uncaught stack trace
    const out = await run(["--out", "/proc/doca-ts-no-such-folder"]);
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /^sim:build: error: cannot build into \/proc\/doca-ts-no-such-folder: .+\n$/);
  });

  test("sim:build's help names the library of every sim/src folder it builds", { timeout: 120_000 }, async () => {
    const r = await startChild(script("build-sim.ts"), ["--help"], {}, 100_000, declaredFlags("sim:build")).done;
    const folders = readdirSync(join(repoRoot, "sim", "src"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    assert.ok(folders.length >= 8, folders.join(" "));
    const named = /libdoca_\{([^}]*)\}\.so/.exec(r.stdout)?.[1].split(",") ?? [];
    assert.deepEqual([...named].sort(), [...folders].sort(), r.stdout);
  });
});
