/**
 * The software device's layout: one folder per DOCA library (sim/src/common, sim/src/dma, ...; the build makes
 * libdoca_<folder> of each). A library's files include and call only their own folder and common; common reaches
 * no library. No circle between the files of sim/src other than DOCA's own (ctx ↔ pe: a context runs on a progress
 * engine, and the engine drives its contexts). A file depends on another when it calls a function or uses data
 * defined there: each file is compiled alone and `nm` lists what it defines and what it needs, so the check sees
 * calls, not just includes. Header includes must not form a circle either.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "./helpers/faults/common.ts";
import { circles } from "./helpers/circles.ts";
import { libraryFolders } from "../ffi/load/sim-build/builder.ts";

const src = join(repoRoot, "sim", "src");
const folders = libraryFolders(src);
/** Every .c or .h file of sim/src as folder/name. */
const filesOf = (suffix: string) =>
  folders.flatMap((folder) => readdirSync(join(src, folder)).filter((f) => f.endsWith(suffix)).sort().map((f) => `${folder}/${f}`));
const folderOf = (file: string) => file.split("/")[0];
const stem = (file: string) => file.split("/")[1].replace(/\.[ch]$/, "");
/** What a library folder may reach: itself and common (common only itself). */
const mayReach = (from: string, to: string) => from === to || to === "common";
/** Circles DOCA itself has; each entry is a sorted list of file stems */
const ALLOWED = new Set(["ctx,pe"]);


describe("software device layout", () => {
  // Compiling every file takes seconds on a loaded machine: past bun test's 5-s default
  test("the files of sim/src call each other without a circle (DOCA's ctx ↔ pe aside)", { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), "doca-sim-layout-"));
    try {
      const files = filesOf(".c");
      for (const folder of folders) {
        const own = files.filter((f) => folderOf(f) === folder).map((f) => join(src, f));
        const includes = ["-I", join(repoRoot, "sim", "include"), "-I", join(src, "common"), "-I", join(src, folder)];
        const cc = spawnSync(process.env.CC ?? "cc", ["-std=c11", "-O0", "-g0", "-fPIC", "-fvisibility=hidden", ...includes, "-c", ...own], { cwd: dir, encoding: "utf8" });
        assert.equal(cc.status, 0, cc.stderr);
      }
      const fileOfStem = new Map(files.map((f) => [stem(f), f]));
      const nm = spawnSync("nm", ["-A", ...files.map((f) => `${stem(f)}.o`)], { cwd: dir, encoding: "utf8", maxBuffer: 64 << 20 });
      assert.equal(nm.status, 0, nm.stderr);
      const definedIn = new Map<string, string>(), needs = new Map<string, Set<string>>();
      for (const line of nm.stdout.split("\n")) {
        const m = /^(.+)\.o:\s*(?:[0-9a-f]+\s+)?([A-Za-z])\s+(\S+)$/.exec(line);
        if (!m) continue;
        const [, file, kind, symbol] = m;
        if (!needs.has(file)) needs.set(file, new Set());
        if (kind === "U") needs.get(file)!.add(symbol);
        else if ("TDBR".includes(kind)) definedIn.set(symbol, file);
      }
      assert.equal(needs.size, files.length, "nm listed every object");
      const graph = new Map<string, Set<string>>();
      for (const [file, symbols] of needs) {
        graph.set(file, new Set([...symbols].map((s) => definedIn.get(s)).filter((d): d is string => d !== undefined && d !== file)));
      }
      const found = circles(graph).map((c) => c.join(","));
      assert.deepEqual(found.filter((c) => !ALLOWED.has(c)), [], `circles between sim/src files: ${found.join(" | ")}`);
      // The check sees real edges: comch_send.c calls into comch_connection.c
      assert.ok(graph.get("comch_send")!.has("comch_connection"));
      // Calls cross folders only into common
      const crossing: string[] = [];
      for (const [from, tos] of graph) {
        for (const to of tos) {
          const a = folderOf(fileOfStem.get(from)!), b = folderOf(fileOfStem.get(to)!);
          if (!mayReach(a, b)) crossing.push(`${from}.c (${a}) -> ${to}.c (${b})`);
        }
      }
      assert.deepEqual(crossing, [], "a library's files call only their own folder and common");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the headers of sim/src include each other without a circle", () => {
    const headers = filesOf(".h").map((f) => f.split("/")[1]);
    const graph = new Map<string, Set<string>>();
    for (const h of filesOf(".h")) {
      const includes = [...readFileSync(join(src, h), "utf8").matchAll(/^#include "([^"]+)"/gm)].map((m) => m[1]);
      graph.set(h.split("/")[1], new Set(includes.filter((i) => headers.includes(i))));
    }
    assert.deepEqual(circles(graph), []);
  });

  test("every file of sim/src sits in a library folder and includes only its folder's and common's headers", () => {
    assert.ok(folders.includes("common") && folders.includes("dma"), `library folders: ${folders.join(", ")}`);
    const loose = readdirSync(src).filter((f) => /\.[ch]$/.test(f));
    assert.deepEqual(loose, [], "sources directly in sim/src (the folder decides the library, so each file needs one)");
    const ownerOf = new Map(filesOf(".h").map((f) => [f.split("/")[1], folderOf(f)]));
    const wrong: string[] = [];
    for (const file of [...filesOf(".c"), ...filesOf(".h")]) {
      for (const m of readFileSync(join(src, file), "utf8").matchAll(/^#include "([^"]+)"/gm)) {
        const owner = ownerOf.get(m[1]);
        if (owner !== undefined && !mayReach(folderOf(file), owner)) wrong.push(`${file} includes ${owner}/${m[1]}`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
