/**
 * The software device's layout (issue 19 §4): no circle between the files of sim/src other than DOCA's own
 * (ctx ↔ pe: a context runs on a progress engine, and the engine drives its contexts). A file depends on another when
 * it calls a function or uses data defined there: each file is compiled alone and `nm` lists what it defines and what
 * it needs, so the check sees calls, not just includes. Header includes (sim/src/*.h) must not form a circle either.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "./fault-helpers/common.ts";
import { circles } from "./helpers/circles.ts";

const src = join(repoRoot, "sim", "src");
/** Circles DOCA itself has; each entry is a sorted list of file stems */
const ALLOWED = new Set(["ctx,pe"]);


describe("software device layout", () => {
  // Compiling every file takes seconds on a loaded machine: past bun test's 5-s default
  test("the files of sim/src call each other without a circle (DOCA's ctx ↔ pe aside)", { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), "doca-sim-layout-"));
    try {
      const files = readdirSync(src).filter((f) => f.endsWith(".c")).sort();
      const cc = spawnSync(process.env.CC ?? "cc", ["-std=c11", "-O0", "-g0", "-fPIC", "-fvisibility=hidden", "-I", join(repoRoot, "sim", "include"), "-c", ...files.map((f) => join(src, f))], { cwd: dir, encoding: "utf8" });
      assert.equal(cc.status, 0, cc.stderr);
      const nm = spawnSync("nm", ["-A", ...files.map((f) => f.replace(/\.c$/, ".o"))], { cwd: dir, encoding: "utf8", maxBuffer: 64 << 20 });
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
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the headers of sim/src include each other without a circle", () => {
    const headers = readdirSync(src).filter((f) => f.endsWith(".h"));
    const graph = new Map<string, Set<string>>();
    for (const h of headers) {
      const includes = [...readFileSync(join(src, h), "utf8").matchAll(/^#include "([^"]+)"/gm)].map((m) => m[1]);
      graph.set(h, new Set(includes.filter((i) => headers.includes(i))));
    }
    assert.deepEqual(circles(graph), []);
  });
});
