/**
 * ffi/ is the library's core and imports nothing outside ffi/ (issue 19 §4): not tasks/, not scripts/. Every
 * relative import and re-export of every ffi/ file must resolve inside ffi/.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ffi = fileURLToPath(new URL("../ffi", import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  );
}

test("no file in ffi/ imports from outside ffi/", () => {
  const outside: string[] = [];
  const files = tsFiles(ffi);
  assert.ok(files.length > 20, `only ${files.length} files found`);
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec);
      if (relative(ffi, target).startsWith("..")) outside.push(`${relative(ffi, file)} → ${spec}`);
    }
  }
  assert.deepEqual(outside, []);
});
