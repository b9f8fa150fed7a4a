/** dma-copy's command line and --json configuration (no DOCA needed). */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDmaCopyArgs, UsageError } from "../tasks/dma-copy/options.ts";
import { parseLogLevel } from "../tasks/common/log-level.ts";
import { readJsonFlagFile, stripJsonComments } from "../tasks/common/json-config.ts";
import { readFlagFile } from "../tasks/common/input-file.ts";
import { SHARED_FLAGS, taskFlags } from "../tasks/common/task-flags.ts";

const noEnv = {};
const run = (argv: string[], env: Record<string, string> = noEnv) => {
  const parsed = parseDmaCopyArgs(argv, env);
  assert.equal(parsed.kind, "run");
  return (parsed as Extract<typeof parsed, { kind: "run" }>).options;
};
const usage = (argv: string[], pattern: RegExp, env: Record<string, string> = noEnv) =>
  assert.throws(() => parseDmaCopyArgs(argv, env), (e: unknown) => e instanceof UsageError && pattern.test((e as Error).message));

describe("dma-copy flags", () => {
  test("short flags as NVIDIA's doca_dma_copy takes them", () => {
    const o = run(["-f", "/tmp/x", "-p", "03:00.1", "-r", "0000:b1:00.1", "-l", "60", "--side", "dpu"]);
    assert.equal(o.file, "/tmp/x");
    assert.equal(o.pciAddr, "03:00.1");
    assert.equal(o.repPci, "0000:b1:00.1");
    assert.equal(o.logLevel, 60);
    assert.equal(o.side, "dpu");
    assert.equal(o.serverName, "dma copy server");
  });

  test("both device flag spellings", () => {
    assert.equal(run(["--file", "a", "--pci-addr", "0000:b1:00.1"]).pciAddr, "0000:b1:00.1");
    assert.equal(run(["--file", "a", "--dev-pci", "0000:b1:00.1"]).pciAddr, "0000:b1:00.1");
    usage(["-f", "a", "--pci-addr", "b1:00.1", "--dev-pci", "03:00.1"], /name different devices/);
  });

  test("missing -f", () => usage(["-p", "03:00.1"], /missing -f\/--file/));
  test("missing -r on the DPU (flag or DOCA_SIM_SIDE)", () => {
    usage(["-f", "a", "--side", "dpu"], /missing -r\/--rep-pci/);
    usage(["-f", "a"], /missing -r\/--rep-pci/, { DOCA_SIM_SIDE: "dpu" });
    assert.equal(run(["-f", "a"], { DOCA_SIM_SIDE: "host" }).side, "host");
    assert.equal(run(["-f", "a"]).side, "host");
    assert.equal(run(["-f", "a", "-r", "b1:00.1"]).side, "dpu", "-r alone means the DPU side, as in NVIDIA's application");
    assert.equal(run(["-f", "a", "-r", "b1:00.1"], { DOCA_SIM_SIDE: "host" }).side, "host");
  });
  test("a relative -f is relative to INIT_CWD (npm run / deno task), else the working folder", () => {
    assert.equal(run(["-f", "./x.bin"], { INIT_CWD: "/home/u/data" }).file, "/home/u/data/x.bin");
    assert.equal(run(["-f", "/abs/x.bin"], { INIT_CWD: "/home/u/data" }).file, "/abs/x.bin");
  });
  test("bad level, bad side, bad PCI address, bad numbers, unknown flag", () => {
    usage(["-f", "a", "-l", "55"], /-l\/--log-level: bad level "55"/);
    usage(["-f", "a", "-l", "loud"], /bad level "loud"/);
    usage(["-f", "a", "--sdk-log-level", "5"], /--sdk-log-level: bad level/);
    usage(["-f", "a", "--side", "nic"], /--side: expected host or dpu, got "nic"/);
    usage(["-f", "a", "-p", "mlx5_0"], /-p\/--pci-addr: "mlx5_0" is not a PCI address/);
    usage(["-f", "a", "--timeout", "0"], /--timeout/);
    usage(["-f", "a", "--slots", "two"], /--slots: expected a whole number/);
    usage(["-f", "a", "--bogus"], /bogus/);
  });
  test("log level names and --quiet", () => {
    assert.equal(run(["-f", "a", "-l", "debug"]).logLevel, 60);
    assert.equal(run(["-f", "a", "--log-level", "TRACE"]).logLevel, 70);
    assert.equal(run(["-f", "a"]).logLevel, 50);
    assert.equal(run(["-f", "a", "--quiet"]).logLevel, 30);
    assert.equal(parseLogLevel(10), 10);
  });
  test("help and version win over everything else", () => {
    assert.deepEqual(parseDmaCopyArgs(["-h"]), { kind: "help" });
    assert.deepEqual(parseDmaCopyArgs(["-v", "-f", "a"]), { kind: "version" });
  });
  test("timeout, slots, chunk size", () => {
    const o = run(["-f", "a", "--timeout", "1.5", "--slots", "4", "--chunk-size", "65536", "--classic"]);
    assert.equal(o.timeoutMs, 1500);
    assert.equal(o.slots, 4);
    assert.equal(o.chunkSize, 65536);
    assert.equal(o.classic, true);
  });
});

describe("dma-copy --json", () => {
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-opts-"));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  test("flat keys are the long flag names; the command line wins", () => {
    const path = write("flat.json", JSON.stringify({ file: "/data/in.bin", "dev-pci": "03:00.1", "rep-pci": "b1:00.1", side: "dpu", "log-level": 40, quiet: true }));
    const o = run(["-j", path]);
    assert.equal(o.file, "/data/in.bin");
    assert.equal(o.pciAddr, "03:00.1");
    assert.equal(o.repPci, "b1:00.1");
    assert.equal(o.side, "dpu");
    assert.equal(o.quiet, true);
    assert.equal(run(["--json", path, "-f", "/other"]).file, "/other");
  });

  test("DOCA argp sections and comments", () => {
    const path = write(
      "doca.json",
      `/* NVIDIA style */\n{\n  "doca_general_flags": { "log-level": "debug" }, // general\n  "doca_program_flags": { "file": "/x//y", "pci-addr": "b1:00.1" }\n}`,
    );
    const o = run(["--json", path]);
    assert.equal(o.logLevel, 60);
    assert.equal(o.file, "/x//y");
    assert.equal(o.pciAddr, "b1:00.1");
  });

  test("errors name the file and the key", () => {
    usage(["-j", write("unknown.json", `{"file": "a", "colour": "red"}`)], /unknown flag "colour"/);
    usage(["-j", write("level.json", `{"file": "a", "log-level": 3}`)], /bad level "3"/);
    usage(["-j", write("nofile.json", `{"pci-addr": "b1:00.1"}`)], /missing -f/);
    assert.throws(() => parseDmaCopyArgs(["-j", write("broken.json", "{")]), /broken\.json/);
    assert.throws(() => parseDmaCopyArgs(["-j", join(dir, "absent.json")]), /absent\.json/);
  });

  test("-j FILE: a relative path is relative to the folder the command ran from (INIT_CWD), as -f is", () => {
    write("relative.json", JSON.stringify({ file: "in.bin" }));
    const o = run(["-j", "relative.json"], { INIT_CWD: dir });
    assert.equal(o.file, join(dir, "in.bin"));
  });

  test("-j FILE errors are the tasks' own words: no raw ENOENT/EISDIR, the parser's text on one line", () => {
    const absent = join(dir, "absent.json");
    usage(["-j", "absent.json"], new RegExp(`^-j/--json: cannot open ${absent.replaceAll(".", "\\.")}: no such file$`), { INIT_CWD: dir });
    usage(["-j", dir], /^-j\/--json: .* is a folder: only a regular file is accepted/);
    const bad = write("bad3.json", "x\u001b[31mRED\r\n");
    usage(["-j", bad], /^-j\/--json .*bad3\.json: not valid JSON: /);
    assert.throws(() => parseDmaCopyArgs(["-j", bad], noEnv), (e: Error) => {
      // deno-lint-ignore no-control-regex -- no control character may reach the terminal
      assert.doesNotMatch(e.message, /[\u0000-\u001f]/, e.message);
      assert.doesNotMatch(e.message, /ENOENT|EISDIR/);
      return true;
    });
  });

  test("a bare --json names the flag and points to --json-output (not parseArgs' raw text)", () => {
    usage(["--json"], /^-j\/--json needs a value \(.*--json-output\)$/);
    usage(["-f", "x", "-j"], /^-j\/--json needs a value /);
    usage(["--json", "--quiet"], /^-j\/--json needs a value, and the word after it starts with "-" .*--json-output/);
    usage(["--quiet=yes"], /^--quiet takes no value$/);
    usage(["--colour", "x"], /^unknown flag "--colour"$/);
    for (const argv of [["--json"], ["--json", "--quiet"], ["--quiet=1"], ["--bogus"]]) {
      assert.throws(() => parseDmaCopyArgs(argv, noEnv), (e: Error) => !/Option '|Unknown option|\n/.test(e.message));
    }
  });

  test("the steps' file flags (--in, --write, --descriptor, --send) resolve and refuse a path in the same words", () => {
    write("in.bin", "abc");
    assert.deepEqual([...readFlagFile("--in", "in.bin", 10, { INIT_CWD: dir }).bytes], [97, 98, 99]);
    assert.throws(() => readFlagFile("--in", "nosuch.bin", 10, { INIT_CWD: dir }), (e: Error) => e.message === `--in: cannot open ${join(dir, "nosuch.bin")}: no such file`);
    assert.throws(() => readFlagFile("--write", dir, 10), (e: Error) => /^--write: .* is a folder: only a regular file is accepted/.test(e.message));
    assert.throws(() => readJsonFlagFile("--descriptor", write("desc.json", "{\n\"a\":\n")), (e: Error) => /^--descriptor .*desc\.json: not valid JSON: /.test(e.message) && !e.message.includes("\n"));
  });

  test("comment stripping leaves strings alone", () => {
    assert.equal(stripJsonComments(`{"a": "http://x/*y*/"} // z`).trim(), `{"a": "http://x/*y*/"}`);
  });
});

describe("the shared flag table (tasks/common/task-flags.ts)", () => {
  test("a task's table is its own flags and the shared ones it names, with the shared letters", () => {
    const flags = taskFlags({ keep: { type: "boolean" } }, "pci-addr", "help");
    assert.deepEqual(Object.keys(flags).sort(), ["help", "keep", "pci-addr"]);
    assert.equal(flags["pci-addr"], SHARED_FLAGS["pci-addr"]);
    assert.equal(flags["pci-addr"].short, "p");
  });

  test("a flag both the task's own and a shared one is refused (one meaning per name)", () => {
    assert.throws(() => taskFlags({ json: { type: "string" } }, "json"), /--json is both the task's own and a shared one/);
  });
});
