#!/usr/bin/env -S deno run --allow-all
/**
 * Runs the one test suite (tests/**\/*.test.ts, written with node:test + node:assert/strict) under Deno, Bun and
 * Node, and closes with a single "N passed, N failed" line summed over the runtimes.
 *
 * Each runtime runs its own native runner (deno test, bun test, node --test with tsx) so that what passes here passes
 * for a user who runs that runner by hand. Counts come from each runner's JUnit report; pass/fail comes from the
 * runner's exit status, so a crash that writes no report still fails the run.
 *
 * Usage: deno task test [--runtime deno,bun,node] [--slow] [--shuffle SEED] [--no-strict] [--busy] [--jobs N]
 *                       [--timeout MINUTES] [FILTER...]
 *   --slow     also run the slow group (DOCA_TS_SLOW=1: 1 GiB copies, soak runs) under Deno
 *   --jobs     run up to N runtimes' runners at once (each runner's output is printed whole when it ends)
 *   --shuffle  DOCA_SIM_SHUFFLE=SEED: the software device delivers completions in a seeded random order
 *   --busy     run two CPU-bound loops beside the suite (a busy 2-core laptop): timeouts must hold under load
 *   FILTER     only test files whose path contains one of these strings
 *
 * The software device runs in strict mode (DOCA_SIM_STRICT=1: uses DOCA leaves undefined are reported on stderr)
 * unless --no-strict is given or DOCA_SIM_STRICT is already set.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { openRunScope } from "./test-run-scope.ts";
import { dotRows } from "./dot-rows.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/** The flags; a bad one ends the run the way the tasks end one: a line naming it and exit 2, not a stack trace. */
function flags() {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        runtime: { type: "string", default: "deno,bun,node" },
        slow: { type: "boolean", default: false },
        shuffle: { type: "string" },
        "no-strict": { type: "boolean", default: false },
        busy: { type: "boolean", default: false },
        jobs: { type: "string", default: "1" },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    // "Unknown option '--bogus'. To specify a positional argument …": its first sentence says it all
    const message = (error as Error).message.split(/(?<=\.)\s|\n/)[0].replace(/\.$/, "");
    console.error(`test: ${message} (see --help)`);
    process.exit(2);
  }
}
const { values, positionals } = flags();

if (values.help) {
  console.log(
    `Usage: deno task test [--runtime deno,bun,node] [--slow] [--shuffle SEED] [--no-strict] [--busy] [--jobs N]
                      [--timeout MINUTES] [FILTER...]

Runs tests/**/*.test.ts under each runtime's own test runner and prints "N passed, N failed" at the end.
  --runtime   comma-separated subset of deno,bun,node (default: all three)
  --slow      also run the slow group (DOCA_TS_SLOW=1) under Deno
  --shuffle   run with DOCA_SIM_SHUFFLE=SEED: completions delivered in a seeded random order (reproducible)
  --no-strict do not turn on the software device's strict mode (DOCA_SIM_STRICT=1 is the default)
  --busy      run two CPU-bound loops beside the suite, as on a busy 2-core machine (they stop with the suite)
  --jobs      run up to N runtimes at once (default 1); each runner's output is printed whole when it ends, and
              lines say when each starts and ends (CI uses 2: the runners wait on child processes much of the time)
  --timeout   minutes allowed per runtime before its runner is killed (default 45: a hung runner must not hang CI,
              and a slow one on a busy machine must finish: Node took over 20 minutes beside --busy's loops)
  FILTER      only test files whose path contains one of these strings`,
  );
  process.exit(0);
}

function findTestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTestFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  }).sort();
}

if (!/^[1-9]\d*$/.test(values.jobs)) {
  console.error(`test: --jobs needs a positive whole number, got "${values.jobs}"`);
  process.exit(2);
}
const jobs = Number(values.jobs);
if (values.timeout !== undefined && !(Number(values.timeout) > 0)) {
  console.error(`test: --timeout needs a positive number of minutes, got "${values.timeout}"`);
  process.exit(2);
}
const timeoutMinutes = Number(values.timeout ?? 45);

if (values.shuffle !== undefined && !/^\d+$/.test(values.shuffle)) {
  console.error(`test: --shuffle needs a decimal seed, got "${values.shuffle}"`);
  process.exit(2);
}

/** Software-device settings every runtime's runner (and the processes the tests spawn) inherits. */
const deviceEnv: Record<string, string> = {};
if (!values["no-strict"] && process.env.DOCA_SIM_STRICT === undefined) deviceEnv.DOCA_SIM_STRICT = "1";
if (values.shuffle !== undefined) deviceEnv.DOCA_SIM_SHUFFLE = values.shuffle;

const files = findTestFiles(join(root, "tests"))
  .map((path) => relative(root, path))
  .filter((path) => positionals.length === 0 || positionals.some((filter) => path.includes(filter)));

if (files.length === 0) {
  console.error("test: no test files matched");
  process.exit(1);
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * Counts leaf test cases in a JUnit report. Runners differ in how they nest describe() groups: Deno lists a group
 * as a test case and its children again as "group > child" cases, so a case whose name prefixes another's is a
 * group, not a test.
 */
function countJunit(xml: string): Counts {
  const cases = [...xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)].map((match) => ({
    name: /name="([^"]*)"/.exec(match[1])?.[1] ?? "",
    body: match[3] ?? "",
    attrs: match[1],
  }));
  const names = cases.map((c) => c.name);
  const leaves = cases.filter((c) => !names.some((other) => other.startsWith(`${c.name} &gt; `)));
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const leaf of leaves) {
    if (/<failure|<error|failure="/.test(leaf.body + leaf.attrs)) counts.failed++;
    else if (/<skipped/.test(leaf.body)) counts.skipped++;
    else counts.passed++;
  }
  return counts;
}

interface RuntimeRun {
  name: string;
  command: string;
  args: (junitPath: string) => string[];
  env?: Record<string, string>;
  /** Its reporter writes one line per dot: join them into rows (scripts/dot-rows.ts). */
  dotPerLine?: true;
}

/** Bun's per-test and per-hook budget where a test names none (Bun's own default of 5 s fails on a loaded machine). */
const BUN_DEFAULT_TIMEOUT_MS = 180_000;

const runtimes: Record<string, RuntimeRun> = {
  deno: {
    name: "Deno",
    // The deno running this script (deno task test); node_modules/.bin holds no deno link (see bootstrap.mjs).
    command: currentRuntime() === "deno" ? process.execPath : join(root, "node_modules", "deno", "deno"),
    args: (junit) => ["test", "--allow-all", "--reporter=dot", `--junit-path=${junit}`, ...files],
    env: values.slow ? { DOCA_TS_SLOW: "1" } : {},
    dotPerLine: true,
  },
  bun: {
    name: "Bun",
    command: bin("bun"),
    // Bun reads relative paths as name filters unless they start with ".". Bun gives every test and hook 5 s unless
    // told otherwise, and ignores node:test's timeout options of hooks and describe() groups below that default
    // (Deno and Node give none): a hook starting processes on a busy machine ran out. --timeout raises the default
    // for tests and hooks; a test's own { timeout } still applies.
    args: (junit) => [
      "test",
      `--timeout=${BUN_DEFAULT_TIMEOUT_MS}`,
      "--reporter=junit",
      `--reporter-outfile=${junit}`,
      ...files.map((f) => `./${f}`),
    ],
  },
  node: {
    name: "Node",
    command: process.platform === "win32" ? "node.exe" : "node",
    args: (junit) => [
      "--import",
      "tsx",
      "--test",
      "--test-reporter=dot",
      "--test-reporter-destination=stdout",
      "--test-reporter=junit",
      `--test-reporter-destination=${junit}`,
      ...files,
    ],
  },
};

/** This run's marker and temporary folder, swept however the run ends (scripts/test-run-scope.ts). */
const scope = openRunScope();

/** The process groups of the runners now running, killed with them when this script is stopped (they run detached). */
const runnerGroups = new Set<number>();

interface RunResult {
  code: number;
  counts: Counts;
  seconds: number;
  /** The test files that took longest, e.g. "tests/tasks-dma-copy.test.ts 95.2 s" (where the report names files). */
  slowest: string[];
}

/**
 * Seconds per test file from a JUnit report, where the runner says which file a case comes from: Bun puts a `file`
 * attribute on each case, Deno names the file as the classname of its top-level cases (their times include the
 * nested ones). Node's report names no files: it gives nothing here.
 */
function secondsPerFile(xml: string): Map<string, number> {
  const perFile = new Map<string, number>();
  for (const match of xml.matchAll(/<testcase\b([^>]*)>/g)) {
    const attrs = match[1];
    const time = Number(/\btime="([\d.]+)"/.exec(attrs)?.[1] ?? "0");
    const bunFile = /\bfile="([^"]+)"/.exec(attrs)?.[1];
    const denoFile = /\bclassname="\.\/(tests\/[^"]+\.test\.ts)"/.exec(attrs)?.[1];
    const file = bunFile ?? denoFile;
    if (file) perFile.set(file, (perFile.get(file) ?? 0) + time);
  }
  return perFile;
}

function slowestFiles(xml: string, count = 6): string[] {
  return [...secondsPerFile(xml)].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([file, seconds]) => `${file} ${seconds.toFixed(1)} s`);
}

/** Runs one runtime's runner; with `logPath` its output goes there (printed by the caller) instead of to ours. */
function run(runtime: RuntimeRun, timeoutMinutes: number, logPath?: string): Promise<RunResult> {
  // Inside the run's folder, so a stop (whose handler exits without this promise settling) removes it with the rest.
  const scratch = mkdtempSync(join(scope.env.TMPDIR, "doca-ts-test-"));
  const junit = join(scratch, "junit.xml");
  const started = performance.now();
  const log = logPath === undefined ? undefined : openSync(logPath, "w");
  return new Promise((done) => {
    const child = spawn(runtime.command, runtime.args(junit), {
      cwd: root,
      stdio: ["ignore", runtime.dotPerLine ? "pipe" : log ?? "inherit", runtime.dotPerLine ? "pipe" : log ?? "inherit"],
      env: { ...process.env, ...deviceEnv, ...runtime.env, ...scope.env, DOCA_TS_TEST_RUNTIME: runtime.name.toLowerCase() },
      detached: true,
    });
    const rows = runtime.dotPerLine
      ? dotRows((text) => (log === undefined ? process.stdout.write(text) : writeSync(log, text)))
      : undefined;
    if (rows) {
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => rows.push(chunk));
      // its stderr (the software device's strict reports, say) starts on a line of its own, never after a row's dots
      child.stderr!.on("data", (chunk: Uint8Array) => {
        rows.breakRow();
        if (log === undefined) process.stderr.write(chunk);
        else writeSync(log, chunk);
      });
    }
    if (child.pid !== undefined) runnerGroups.add(child.pid);
    // A hung runner must not hang CI: kill its whole process group when the budget runs out.
    const timer = setTimeout(() => {
      const line = `\ntest: ${runtime.name} exceeded ${timeoutMinutes} minutes; killing it\n`;
      if (log !== undefined) writeSync(log, line);
      else console.error(line);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* already gone */ }
    }, timeoutMinutes * 60_000);
    child.on("error", (error) => {
      console.error(`test: cannot start ${runtime.command}: ${error.message} (run \`npm install\` first)`);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      rows?.end();
      if (child.pid !== undefined) runnerGroups.delete(child.pid);
      if (log !== undefined) closeSync(log);
      const xml = existsSync(junit) ? readFileSync(junit, "utf8") : "";
      const counts = xml ? countJunit(xml) : { passed: 0, failed: 0, skipped: 0 };
      rmSync(scratch, { recursive: true, force: true });
      done({
        code: code ?? (signal ? 128 : 1),
        counts,
        seconds: (performance.now() - started) / 1000,
        slowest: slowestFiles(xml),
      });
    });
  });
}

const selected = values.runtime.split(",").map((name) => name.trim()).filter(Boolean);
const unknown = selected.filter((name) => !(name in runtimes));
if (unknown.length > 0) {
  console.error(`test: unknown runtime(s) ${unknown.join(", ")}; choose from deno, bun, node`);
  scope.sweep(); // its temporary folder, made above, is still empty
  process.exit(2);
}

/**
 * Two CPU-bound child processes for --busy, each spinning one core until the suite ends: the machine a person with
 * a busy laptop has. They are killed on every way out (exit, Ctrl-C, SIGTERM).
 */
function startBusyLoops(): () => void {
  const loops = [0, 1].map(() =>
    spawn(process.execPath, currentRuntime() === "deno" ? ["eval", "for (;;) {}"] : ["-e", "for (;;) {}"], {
      stdio: "ignore",
    })
  );
  const stop = () => loops.forEach((loop) => loop.kill("SIGKILL"));
  process.on("exit", stop);
  return stop;
}

// The runner runs in its own process group (so a timeout can kill all it started): a stop of this script stops it,
// then whatever its tests started (in groups or sessions of their own too), and removes the run's temporary folder.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    for (const group of runnerGroups) {
      try {
        process.kill(-group, "SIGKILL");
      } catch { /* already gone */ }
    }
    const stopped = scope.sweep();
    console.error(
      `\ntest: interrupted (${signal}): stopped the runner${stopped ? ` and ${stopped} process(es) its tests had started` : ""}; ` +
        "removed the run's temporary folder",
    );
    process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const)[signal]);
  });
}

const stopBusyLoops = values.busy ? startBusyLoops() : () => {};
if (values.busy) console.log("test: --busy: two CPU-bound loops run beside the suite");

const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const lines: string[] = [];
let failedRuntimes = 0;
const device = Object.entries(deviceEnv).map(([key, value]) => `${key}=${value}`).join(" ");
const heading = (runtime: RuntimeRun) => `=== ${runtime.name}: ${files.length} test files${device ? ` (${device})` : ""} ===`;
const logs = jobs > 1 ? mkdtempSync(join(scope.env.TMPDIR, "doca-ts-test-logs-")) : undefined;
const results = new Map<string, RunResult>();

/** Runs one runtime: in the foreground alone, or (with --jobs above 1) beside others with its output kept for later. */
async function runLane(name: string): Promise<void> {
  const runtime = runtimes[name];
  if (logs === undefined) {
    console.log(`\n${heading(runtime)}`);
    results.set(name, await run(runtime, timeoutMinutes));
    return;
  }
  console.log(`test: ${runtime.name} started (${files.length} test files; its output follows when it ends)`);
  const logPath = join(logs, `${name}.log`);
  const result = await run(runtime, timeoutMinutes, logPath);
  results.set(name, result);
  console.log(`\n${heading(runtime)}\n${readFileSync(logPath, "utf8").trimEnd()}`);
  console.log(`test: ${runtime.name} ended (${result.seconds.toFixed(1)} s, exit ${result.code})`);
}

// Up to `jobs` lanes at once, started in the order given (a free lane takes the next runtime).
const queue = [...selected];
await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, async () => {
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) await runLane(name);
}));
if (logs !== undefined) rmSync(logs, { recursive: true, force: true });

for (const name of selected) {
  const runtime = runtimes[name];
  const { code, counts, seconds, slowest } = results.get(name)!;
  // A runner that exits non-zero without reporting a failing case (a crash, a load error) still counts as a failure.
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  if (code !== 0) failedRuntimes++;
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
  lines.push(
    `${runtime.name.padEnd(5)} ${code === 0 ? "ok  " : "FAIL"} ${counts.passed} passed, ${counts.failed} failed, ` +
      `${counts.skipped} skipped (${seconds.toFixed(1)} s)` +
      (slowest.length > 0 ? `\n      slowest files: ${slowest.join(", ")}` : ""),
  );
}

stopBusyLoops();
// Processes the tests left running would hold ports, sockets and CPU after the suite: stop them and say so.
const leftBehind = scope.sweep();
if (leftBehind > 0) console.log(`test: stopped ${leftBehind} process(es) the tests left running`);
console.log(`\n=== summary ===\n${lines.join("\n")}${values.busy ? "\n(with two CPU-bound loops beside it)" : ""}`);
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(failedRuntimes === 0 ? 0 : 1);
