/**
 * The import graph of the library: ffi/ imports nothing outside ffi/ (no upward import into tasks/, scripts/,
 * tests/, benchmarks/ or mod.ts), tasks/ imports only tasks/, ffi/ and mod.ts (downward), and ffi/ has no import
 * circle except DOCA's own ctx ↔ pe pair. Inside ffi/ the folders are the layers of docs/ARCHITECTURE.md, lowest
 * first: load/ (runtimes, loaders, finding and building the libraries), native/ (the symbol table, bound functions,
 * machine code), engine/ (ownership tree, callback bridge, task path, progress engine, contexts), doca/<library>/
 * (one folder per DOCA library; each may use doca/common/, none another library's folder), then ffi/diagnostics.ts.
 * A file imports only its own layer or lower ones. Type-only imports (`import type`, erased before running) do not
 * count towards circles; they do count as imports for the direction rules.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { circles } from "./helpers/circles.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** DOCA's own circle: a context connects to its progress engine, the engine's stop drives its contexts. */
const ALLOWED_CIRCLES = [["ffi/engine/ctx.ts", "ffi/engine/pe.ts"]];

/** The layers of ffi/, lowest first; a file not under one of these folders is out of place. */
const LAYERS = ["ffi/load/", "ffi/native/", "ffi/engine/", "ffi/doca/", "ffi/diagnostics.ts"];
const layerOf = (file: string) => LAYERS.findIndex((prefix) => file.startsWith(prefix));
/** doca/<library>/ of a file, or undefined outside doca/. */
const libraryOf = (file: string) => /^ffi\/doca\/([^/]+)\//.exec(file)?.[1];

/**
 * The .ts files below `dir`. Hidden entries are not part of the layout: a test's temporary folder (ffi-symbol-types
 * type-checks a probe in tests/.typecheck-*) may come and go while another runtime's runner scans the tree; so do
 * the .d.ts declarations an npm pack in another runtime's lane writes beside the sources for a moment.
 */
function files(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    if (name.startsWith(".")) return [];
    const path = join(dir, name);
    if (statSync(join(root, path), { throwIfNoEntry: false })?.isDirectory()) return files(path);
    return /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

interface Edge {
  to: string;
  typeOnly: boolean;
}

/** Relative imports of a file (static and dynamic), resolved to repository paths. */
function importsOf(file: string): Edge[] {
  const text = readFileSync(join(root, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const edges: Edge[] = [];
  const re = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;
  for (const m of text.matchAll(re)) {
    const spec = m[4] ?? m[5];
    // `import { type A, type B }` is type-only too.
    const names = m[3] ?? "";
    const allTypes = /^\{[^}]*\}$/.test(names.trim()) && names.replace(/[{}\s]/g, "").split(",").filter(Boolean).every((n) => n.startsWith("type"));
    edges.push({ to: relative(root, resolve(root, dirname(file), spec)), typeOnly: m[2] !== undefined || allTypes });
  }
  return edges;
}

const ffiFiles = files("ffi");
const graph = new Map(ffiFiles.map((f) => [f, importsOf(f)]));

describe("library layout", () => {
  test("ffi/ imports nothing outside ffi/", () => {
    const upward = [...graph].flatMap(([from, edges]) =>
      edges.filter((e) => !e.to.startsWith("ffi/")).map((e) => `${from} → ${e.to}`)
    );
    assert.deepEqual(upward, [], "ffi/ is the bottom layer: move the code down into ffi/ or invert the dependency");
  });

  test("ffi/ files sit in a layer folder and import only their layer or lower ones", () => {
    const loose = ffiFiles.filter((f) => layerOf(f) < 0);
    assert.deepEqual(loose, [], `every ffi/ file belongs in one of ${LAYERS.join(", ")}`);
    const upward = [...graph].flatMap(([from, edges]) =>
      edges.filter((e) => e.to.startsWith("ffi/") && layerOf(e.to) > layerOf(from)).map((e) => `${from} → ${e.to}`)
    );
    assert.deepEqual(upward, [], "an import reaches a higher layer: move the code down or invert the dependency");
  });

  test("a DOCA library's folder imports doca/common/ and no other library's folder", () => {
    const across = [...graph].flatMap(([from, edges]) =>
      edges.filter((e) => {
        const a = libraryOf(from), b = libraryOf(e.to);
        return a !== undefined && b !== undefined && a !== b && b !== "common";
      }).map((e) => `${from} → ${e.to}`)
    );
    assert.deepEqual(across, []);
    assert.ok(new Set(ffiFiles.map(libraryOf).filter(Boolean)).size >= 4, "the doca/ folders were found");
  });

  test("tasks/ imports only tasks/, ffi/ and mod.ts", () => {
    const bad = files("tasks").flatMap((from) =>
      importsOf(from).filter((e) => !/^(tasks\/|ffi\/|mod\.ts$)/.test(e.to)).map((e) => `${from} → ${e.to}`)
    );
    assert.deepEqual(bad, []);
  });

  test("tools/, benchmarks/ and scripts/ import no test file; tools/ holds what they and the tests share", () => {
    // tools/ is the shared layer of the development side (npm pack, free ports, NVIDIA's samples snapshot and the
    // storage application's harness): it uses the library and the tasks, never the commands or the tests built on it.
    const rules: [string, RegExp][] = [
      ["tools", /^(tools\/|ffi\/|tasks\/|mod\.ts$)/],
      ["benchmarks", /^(benchmarks\/|tools\/|ffi\/|tasks\/|mod\.ts$)/],
      ["scripts", /^(scripts\/|benchmarks\/|tools\/|ffi\/|tasks\/|mod\.ts$)/],
    ];
    const bad = rules.flatMap(([dir, allowed]) =>
      files(dir).flatMap((from) => importsOf(from).filter((e) => !allowed.test(e.to)).map((e) => `${from} → ${e.to}`))
    );
    assert.deepEqual(bad, [], "move what these share with the tests into tools/");
    assert.ok(files("tools").length >= 3 && files("benchmarks").length >= 10, "the folders were found");
  });

  test("every native callback is made in ffi/engine/callbacks.ts, the one bridge (ffi/load makes the trampolines)", () => {
    const makers = ffiFiles.filter((f) => !f.startsWith("ffi/load/") && f !== "ffi/engine/callbacks.ts")
      .filter((f) => /\.callback\(/.test(readFileSync(join(root, f), "utf8")));
    assert.deepEqual(makers, [], "these make native callbacks of their own, outside the bridge's re-entrancy rule");
  });

  test("every wrapper of a native object has a branded handle (Handle<\"doca_...\">)", () => {
    const unbranded = ffiFiles.flatMap((f) =>
      [...readFileSync(join(root, f), "utf8").matchAll(/class (\w+)(?:<[^>]*>)? extends (?:Ctx)?Resource(<[^{]*>)? \{/g)]
        .filter((m) => !/^<Handle<"\w+">>$/.test(m[2] ?? "") && m[2] !== "<H>")
        .map((m) => `${f}: ${m[1]}`)
    );
    assert.deepEqual(unbranded, []);
  });

  test("no DOCA symbol name is assembled at run time (functions are picked from the table by name)", () => {
    const assembled = ffiFiles.filter((f) => !f.startsWith("ffi/load/"))
      .filter((f) => /as unknown as Record<string|\[`doca_[^`]*\$\{/.test(readFileSync(join(root, f), "utf8")));
    assert.deepEqual(assembled, []);
  });

  test("no task imports another task's folder (what two tasks share lives in a shared folder: tasks/transfer/, …)", () => {
    // A task is tasks/NAME.ts with its own folder tasks/NAME/ (dma-copy, rdma-copy, doctor); its files are both.
    const tasks = new Set(
      files("tasks").map((f) => /^tasks\/([^/]+)\//.exec(f)?.[1]).filter((name): name is string =>
        name !== undefined && existsSync(join(root, "tasks", `${name}.ts`))
      ),
    );
    const taskOf = (path: string) => {
      const m = /^tasks\/([^/.]+)(?:\.ts$|\/)/.exec(path);
      return m && tasks.has(m[1]) ? m[1] : undefined;
    };
    // Files of no task (demo.ts drives dma-copy and reads its summary type) are not held to it.
    const bad = files("tasks").flatMap((from) =>
      importsOf(from).filter((e) => {
        const a = taskOf(from), b = taskOf(e.to);
        return a !== undefined && b !== undefined && a !== b && e.to.startsWith(`tasks/${b}/`);
      }).map((e) => `${from} → ${e.to}`)
    );
    assert.deepEqual(bad, []);
    assert.ok(tasks.has("dma-copy") && tasks.has("rdma-copy"), `the task folders were found: ${[...tasks]}`);
  });

  test("tests/ has one helper place: every script that is not a test file lives under tests/helpers/", () => {
    // C fixtures (tests/isal, tests/nvidia-samples) are sources for the compiler, not helpers.
    const loose = files("tests").filter((f) => !f.endsWith(".test.ts") && !f.startsWith("tests/helpers/"));
    assert.deepEqual(loose, []);
    const folders = readdirSync(join(root, "tests")).filter((n) => !n.startsWith(".") && statSync(join(root, "tests", n), { throwIfNoEntry: false })?.isDirectory());
    assert.deepEqual(folders.filter((n) => /help/i.test(n)), ["helpers"], "one folder of helpers");
  });

  test("ffi/ has no import circle but ctx ↔ pe", () => {
    // Value imports only: a type-only import does not run anything.
    const values = new Map([...graph].map(([from, edges]) => [from, edges.filter((e) => !e.typeOnly).map((e) => e.to)]));
    const found = circles(values);
    const allowed = new Set(ALLOWED_CIRCLES.map((c) => c.join(" ↔ ")));
    assert.deepEqual(found.map((c) => c.join(" ↔ ")).filter((c) => !allowed.has(c)), []);
  });

  test("the checker sees the imports (value and type-only, one-line and multi-line)", () => {
    // Guards the parser itself: were it to find nothing, every rule above would pass vacuously.
    const edges = [...graph.values()].flat();
    assert.ok(edges.filter((e) => !e.typeOnly).length >= 100, `only ${edges.length} imports found in ffi/`);
    assert.ok(edges.some((e) => e.typeOnly));
    assert.ok(graph.get("ffi/doca/comch/comch-producer.ts")!.some((e) =>
      e.to === "ffi/doca/comch/comch-fastpath-common.ts" && !e.typeOnly
    ));
  });
});
