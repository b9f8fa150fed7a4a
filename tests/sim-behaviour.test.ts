/**
 * The software device behaves as DOCA documents (sim/behaviour.tsv, sim/tests/behaviour.c), its strict mode reports
 * what DOCA leaves undefined once per kind with a count (sim/tests/strict_report.c), DOCA_SIM_SHUFFLE reorders
 * completions reproducibly, and a user's C program builds against sim/include and runs (sim/examples/local_dma.c).
 * Every library of every flavour is held to a row (scripts/library-table.ts reads them). Build first: `deno task sim:build`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  declaredIn,
  exportsByFlavour,
  exportsOf,
  libraryTablePath,
  librariesIn,
  readBehaviourTable,
  renderLibraryTable,
} from "../scripts/library-table.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const binDir = join(root, "build", "sim", "bin");
const libDir = join(root, "build", "sim", "lib");

interface Run {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program with a private DOCA_SIM_DIR and exactly the device settings given. Strict mode and shuffling are set
 * explicitly (off unless given): Deno's child_process adds `env` to the inherited environment instead of replacing it.
 */
function run(program: string, args: string[], env: Record<string, string> = {}): Run {
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const dir = mkdtempSync(join(tmpdir(), "doca-sim-behaviour-"));
  try {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith("DOCA_SIM_")),
    ) as Record<string, string>;
    const result = spawnSync(program, args, {
      env: { ...clean, DOCA_SIM_DIR: dir, DOCA_SIM_STRICT: "0", DOCA_SIM_SHUFFLE: "", ...env },
      encoding: "utf8",
      timeout: 60_000,
    });
    return {
      status: result.status,
      signal: result.signal,
      stdout: result.stdout ?? "",
      stderr: result.stderr ?? "",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every flavour's libraries and their exports (the 2.7 flavour is built here when its sources are newer). */
const byFlavour = exportsByFlavour();
const readTable = readBehaviourTable;

describe("software device: behaviour as DOCA documents", () => {
  test("sim/behaviour.tsv lists every function every built library of every flavour exports, each once", () => {
    const rows = readTable();
    const listed = rows.map((row) => row.fn);
    assert.equal(new Set(listed).size, listed.length, "a function is listed twice");
    assert.ok(librariesIn(libDir).length >= 4, `the libraries of ${libDir}: run \`deno task sim:build\` first`);
    const exported = new Set<string>();
    for (const [flavour, libraries] of byFlavour) {
      for (const [library, functions] of libraries) {
        const missing = functions.filter((fn) => !listed.includes(fn));
        assert.deepEqual(missing, [], `${library} (flavour ${flavour}) exports functions with no row in sim/behaviour.tsv`);
        functions.forEach((fn) => exported.add(fn));
      }
    }
    assert.deepEqual(listed.filter((fn) => !exported.has(fn)), [], "rows for functions no library exports");
    for (const row of rows) assert.ok(row.doca.length > 0 && row.sim.length > 0, `${row.fn}: empty cell`);
  });

  test("the behaviour test reads every library of the lib folder, including one added later", () => {
    // A library the build makes from a new sim/src folder is listed by librariesIn, so its exports are held to rows
    // with no change to this test: a copy of a built library under a new name is found and read.
    const dir = mkdtempSync(join(tmpdir(), "doca-sim-libs-"));
    try {
      copyFileSync(join(libDir, "libdoca_dma.so"), join(dir, "libdoca_newaccel.so"));
      assert.ok(librariesIn(dir).includes("libdoca_newaccel"));
      assert.ok(exportsOf(dir, "libdoca_newaccel").includes("doca_dma_create"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a row says 2.7 exactly when only the 2.7 flavour exports its function", () => {
    const of = (flavour: string) => new Set([...(byFlavour.get(flavour as "3") ?? new Map()).values()].flat());
    const three = of("3");
    for (const row of readTable().filter((r) => !r.fn.startsWith("doca_sim_"))) {
      assert.equal(/^[\w./]+ 2\.\d+: /.test(row.doca), !three.has(row.fn), `${row.fn}: its version does not say who exports it`);
    }
  });

  test("docs/LIBRARIES.md is the table the built libraries give (deno task docs:libraries)", () => {
    assert.equal(readFileSync(libraryTablePath, "utf8"), renderLibraryTable(), "run `deno task docs:libraries`");
  });

  test("no row claims DOCA documentation for a function DOCA does not have (the doca_sim_* diagnostics)", () => {
    const ours = readTable().filter((row) => row.fn.startsWith("doca_sim_"));
    assert.ok(ours.length >= 2, "the diagnostics are listed");
    for (const row of ours) assert.match(row.doca, /^not a DOCA function/, `${row.fn}: ${row.doca}`);
    for (const row of readTable().filter((r) => !r.fn.startsWith("doca_sim_"))) {
      assert.doesNotMatch(row.doca, /^not a DOCA function/, `${row.fn} is DOCA's`);
    }
  });

  test("every row says which DOCA header documents it, and that header declares the function", () => {
    // Declarations as the C preprocessor sees them (doca_rdma.h declares each task kind's set_conf with a macro)
    const headers = new Map<string, string[]>();
    const header = (name: string) => {
      if (!headers.has(name)) headers.set(name, declaredIn(name).declared);
      return headers.get(name)!;
    };
    for (const row of readTable().filter((r) => !r.fn.startsWith("doca_sim_"))) {
      const m = /^((?:doca_[a-z_0-9]+\.h\/?)+) (3\.x|2\.\d+): /.exec(row.doca);
      assert.ok(m, `${row.fn}: the DOCA column must start with "<header> <version>: ", got "${row.doca.slice(0, 40)}"`);
      const named = m[1].split("/");
      const declared = named.some((h) => header(h).includes(row.fn));
      assert.ok(declared, `${row.fn}: not declared in ${named.join(" or ")}`);
    }
  });

  test("every behaviour check the table names passes (behaviour.c, with a DPU-side comch server)", () => {
    const result = run(join(binDir, "behaviour"), [], { DOCA_SIM_STRICT: "1" });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /^PASS behaviour$/m);
    const ids = new Set(readTable().flatMap((row) => row.checks).filter((id) => !id.startsWith("strict:")));
    assert.ok(ids.size >= 8);
    for (const id of ids) assert.match(result.stdout, new RegExp(`^ok ${id}: `, "m"), `check ${id} did not pass`);
  });
});

/** First-report lines and summary counts of strict mode, keyed "rule function(object)". */
function parseStrict(stderr: string): { first: string[]; counts: Map<string, number> } {
  const first = [...stderr.matchAll(/strict: ([a-z-]+): (\w+)\(([\w ]+?) (?:0x[0-9a-f]+|\(nil\))\): /g)]
    .map((m) => `${m[1]} ${m[2]}(${m[3]})`);
  const counts = new Map<string, number>();
  for (const m of stderr.matchAll(/strict: {3}(\d+) x ([a-z-]+): (\w+)\(([\w ]+)\): /g)) {
    counts.set(`${m[2]} ${m[3]}(${m[4]})`, Number(m[1]));
  }
  return { first, counts };
}

describe("software device: strict mode (DOCA_SIM_STRICT)", () => {
  test("each kind of report is printed once, then counted in the exit summary", () => {
    const result = run(join(binDir, "strict_report"), [], { DOCA_SIM_STRICT: "1" });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /^PASS strict_report$/m);
    const { first, counts } = parseStrict(result.stderr);
    const expected: [string, number][] = [
      ["data-outside-buffer doca_buf_set_data(buf)", 2],
      ["data-outside-buffer doca_buf_set_data_len(buf)", 1],
      ["destroy-with-children doca_mmap_destroy(mmap)", 1],
      ["destroy-with-children doca_buf_inventory_destroy(buf_inventory)", 1],
      ["destroy-with-children doca_pe_destroy(pe)", 1],
      ["export-not-started doca_mmap_export_pci(mmap)", 1],
      ["use-after-destroy doca_mmap_set_memrange(mmap)", 1],
      ["use-after-destroy doca_mmap_start(mmap)", 1],
      ["use-after-destroy doca_pe_progress(pe)", 1],
      ["use-after-destroy doca_ctx_start(ctx)", 1],
      // 5 plus: one freed twice in flight then resubmitted, one whose callback destroys another context, one of two
      // tasks reading a buf released in flight (each misuse once: strict_report.c)
      ["free-inflight-task doca_task_free(dma_memcpy)", 8],
      ["submit-not-running doca_task_submit(dma_memcpy)", 2],
      ["progress-reentered doca_pe_progress(pe)", 1],
      ["release-held-buf doca_buf_dec_refcount(buf)", 2],
      // an RDMA receive freed in flight, flushed, then freed again, and a DMA task freed twice: both refused
      ["free-inflight-task doca_task_free(rdma_receive)", 1],
      ["use-after-destroy doca_task_free(task)", 2],
    ];
    for (const [kind, count] of expected) {
      assert.equal(first.filter((line) => line === kind).length, 1, `"${kind}" printed once:\n${result.stderr}`);
      assert.equal(counts.get(kind), count, `"${kind}" counted ${count} times:\n${result.stderr}`);
    }
    // Found at exit: tasks completed but never freed, and every kind of object left alive
    assert.equal(counts.get("task-not-freed doca_task_free(task)"), 5);
    for (const [object, count] of [["pe", 2], ["ctx", 2], ["mmap", 1], ["buf_inventory", 1], ["buf", 3], ["dev", 1]]) {
      assert.equal(counts.get(`leak exit(${object})`), count, `leaked ${object}s:\n${result.stderr}`);
    }
    const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
    assert.match(result.stderr, new RegExp(`strict: summary: ${total} reports of ${counts.size} kinds`));
    // Never one line per occurrence: 8 freed in-flight tasks are one line plus the summary's
    assert.equal(result.stderr.split("\n").filter((line) => line.includes("free-inflight-task: doca_task_free(dma_memcpy")).length, 2);
  });

  test("every strict rule the behaviour table cites is one strict_report triggers", () => {
    const result = run(join(binDir, "strict_report"), [], { DOCA_SIM_STRICT: "1" });
    for (const rule of new Set(readTable().flatMap((row) => row.checks).filter((id) => id.startsWith("strict:")))) {
      assert.ok(result.stderr.includes(`x ${rule.slice("strict:".length)}: `), `${rule} not reported`);
    }
  });

  test("DOCA_SIM_STRICT=abort stops at the first report", () => {
    const result = run(join(binDir, "strict_report"), [], { DOCA_SIM_STRICT: "abort" });
    assert.equal(result.signal, "SIGABRT", `${result.stdout}\n${result.stderr}`);
    assert.doesNotMatch(result.stdout, /PASS/);
    assert.match(result.stderr, /strict: data-outside-buffer: doca_buf_set_data\(buf 0x[0-9a-f]+\)/);
    assert.match(result.stderr, /aborting \(DOCA_SIM_STRICT=abort\)/);
    assert.equal(result.stderr.match(/strict: [a-z-]+: doca_/g)?.length, 1);
  });

  test("without strict mode nothing is reported, and 5 in-flight frees give one log line", () => {
    const result = run(join(binDir, "strict_report"), []);
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /strict:/);
    assert.equal(result.stderr.match(/doca_task_free of a dma_memcpy task still in flight/g)?.length, 1);
  });
});

describe("software device: completion order randomisation (DOCA_SIM_SHUFFLE)", () => {
  const order = (env: Record<string, string>) => {
    const result = run(join(binDir, "behaviour"), ["order", "12"], env);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const ids = /^order (.*)$/m.exec(result.stdout)![1].split(" ").map(Number);
    const calls = Number(/^calls (\d+)$/m.exec(result.stdout)![1]);
    assert.deepEqual([...ids].sort((a, b) => a - b), [...Array(12).keys()], "every task completes once");
    return { ids, calls };
  };

  test("off: completions of one context in submission order, all in one call", () => {
    assert.deepEqual(order({}), { ids: [...Array(12).keys()], calls: 1 });
  });

  test("on: a seed gives the same order every run; seeds reorder and split the completions", () => {
    const runs = ["1", "2", "3", "4", "5"].map((seed) => order({ DOCA_SIM_SHUFFLE: seed }));
    assert.deepEqual(order({ DOCA_SIM_SHUFFLE: "3" }), runs[2], "reproducible");
    assert.ok(runs.some((r) => r.ids.some((id, at) => id !== at)), "some seed reorders");
    assert.ok(runs.some((r) => r.calls > 1), "some seed spreads completions over several progress calls");
  });
});

describe("software device: a user's C program", () => {
  test("sim/examples/local_dma.c builds with cc against sim/include and runs clean in strict mode", () => {
    const scratch = mkdtempSync(join(tmpdir(), "doca-sim-example-"));
    try {
      const program = join(scratch, "local_dma");
      const cc = spawnSync(process.env.CC ?? "cc", [
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-I",
        join(root, "sim", "include"),
        join(root, "sim", "examples", "local_dma.c"),
        "-L",
        libDir,
        `-Wl,-rpath,${libDir}`,
        "-ldoca_common",
        "-ldoca_dma",
        "-ldoca_comch",
        "-o",
        program,
      ], { encoding: "utf8" });
      assert.equal(cc.status, 0, cc.stderr);
      const result = run(program, [], { DOCA_SIM_STRICT: "1", DOCA_SIM_SIDE: "host" });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout, "copied: hello from a DOCA DMA task\n");
      assert.equal(result.stderr, "", "strict mode has nothing to report");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
