/**
 * README.md's API example ("## The API"), taken from README.md itself, so the README cannot drift from what runs: the
 * block is written to a scratch module with only its import path pointed at this repository's mod.ts, and run by the
 * runtime running this test (Deno, Bun, or Node with tsx) as a user would run it. It prints 7.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { simDir } from "./helpers/sim-env.ts";
import { repoRoot, spawnRuntime } from "./helpers/spawn-runtime.ts";

/** The first ```ts block after a heading. */
function exampleAfter(markdown: string, heading: string): string {
  const at = markdown.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README.md has a "${heading}" section`);
  const block = /```ts\n([\s\S]*?)```/.exec(markdown.slice(at));
  assert.ok(block, `a ts block under "${heading}"`);
  return block[1];
}

test("README.md's API example, as written there, copies 4096 bytes and prints 7", { timeout: 120_000 }, async () => {
  const example = exampleAfter(readFileSync(join(repoRoot, "README.md"), "utf8"), "## The API");
  assert.match(example, /from "\.\/mod\.ts"/, "the example imports ./mod.ts");
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-readme-"));
  try {
    const script = join(dir, "readme-example.mts");
    writeFileSync(script, example.replaceAll(`from "./mod.ts"`, `from "${pathToFileURL(join(repoRoot, "mod.ts")).href}"`));
    const child = spawnRuntime(script, { env: { DOCA_SIM_DIR: simDir } });
    assert.equal(await child.readLine(90_000), "7", child.stderr);
    assert.equal(await child.exited, 0, child.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
