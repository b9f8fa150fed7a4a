/**
 * The suite must pass on a busy 2-core machine (issue 32: Bun's 5-s default hook budget ran out in fault-input's
 * `before`, which starts every probe child). Two rules, checked on the source:
 * - every hook (before/after/beforeEach/afterEach) that starts or waits for a process names its own timeout;
 * - the runner gives Bun a default budget for tests and hooks (Bun ignores a hook's or a group's node:test timeout
 *   when it is above Bun's own default, and that default is 5 s unless `bun test --timeout` says otherwise).
 * `deno task test --busy FILTER` runs the suite with two CPU-bound loops beside it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Calls that start a process or wait for one to end. */
const STARTS_PROCESS =
  /\b(spawn\w*|startHelper|startDpu|startDmaCopy|startTask|runCopyPair|runTask\w*|exec\w*|execFile\w*)\s*\(|await\s+\w+\??\.close\(\)/;

/** The hooks of a source file, each with its whole call text (from `before(` to its matching `)`). */
export function hooksOf(source: string): { name: string; line: number; text: string }[] {
  const hooks: { name: string; line: number; text: string }[] = [];
  for (const match of source.matchAll(/^\s*(before|after|beforeEach|afterEach)\(/gm)) {
    const open = match.index! + match[0].length - 1;
    let depth = 0;
    let end = open;
    for (; end < source.length; end++) {
      if (source[end] === "(") depth++;
      else if (source[end] === ")" && --depth === 0) break;
    }
    hooks.push({
      name: match[1],
      line: source.slice(0, match.index!).split("\n").length + 1,
      text: source.slice(open, end + 1),
    });
  }
  return hooks;
}

describe("the suite on a busy machine", () => {
  test("every hook that starts or waits for a process has a timeout of its own", () => {
    const missing: string[] = [];
    for (const name of readdirSync(join(root, "tests")).filter((n) => n.endsWith(".test.ts"))) {
      for (const hook of hooksOf(readFileSync(join(root, "tests", name), "utf8"))) {
        if (STARTS_PROCESS.test(hook.text) && !/\{\s*timeout:\s*[\d_]+\s*\}\s*\)$/.test(hook.text)) {
          missing.push(`tests/${name}:${hook.line} ${hook.name}()`);
        }
      }
    }
    assert.deepEqual(missing, [], "hooks starting processes without { timeout }");
  });

  test("the rule sees a hook without a timeout", () => {
    const hooks = hooksOf("before(async () => {\n  await startHelper('x');\n});\nafter(() => rm(), { timeout: 5_000 });\n");
    assert.equal(hooks.length, 2);
    assert.ok(STARTS_PROCESS.test(hooks[0].text));
    assert.doesNotMatch(hooks[0].text, /\{\s*timeout:/);
    assert.match(hooks[1].text, /\{\s*timeout:\s*[\d_]+\s*\}\s*\)$/);
  });

  test("the runner gives Bun a default budget of minutes for tests and hooks, and has --busy", () => {
    const runner = readFileSync(join(root, "scripts", "test.ts"), "utf8");
    const budget = /const BUN_DEFAULT_TIMEOUT_MS = ([\d_]+);/.exec(runner);
    assert.ok(budget, "scripts/test.ts defines BUN_DEFAULT_TIMEOUT_MS");
    assert.ok(Number(budget[1].replaceAll("_", "")) >= 60_000, "at least a minute on a loaded machine");
    assert.match(runner, /`--timeout=\$\{BUN_DEFAULT_TIMEOUT_MS\}`/, "bun test is given --timeout");
    assert.match(runner, /busy: \{ type: "boolean"/, "scripts/test.ts takes --busy");
  });
});
