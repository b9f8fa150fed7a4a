/**
 * tasks/ and ffi/ decide on error classes and DOCA error codes, never on message text: a reworded message must not
 * change what a task or the library does. This scans every file of tasks/ and ffi/ for the shapes such decisions took (a name compared with a
 * string, a message searched, a message matched by a regular expression).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Each shape, with what it looks like in code. */
const BY_TEXT: [string, RegExp][] = [
  // (`this.name` is an object's own name, e.g. a task kind's, not an error's)
  ["an error's name compared with a string", /(?<!\bthis)\??\.name\s*[!=]==?\s*["'`]/],
  ["an error's message searched", /\.message\??\.(?:includes|startsWith|endsWith|match|search|indexOf)\(/],
  ["an error's message matched by a regular expression", /\/[gimsuy]*\.test\(\s*(?:String\()?\(?\s*\w+(?:\s+as\s+\w+)?\s*\)?\??\.message/],
];

test("tasks/ and ffi/ never branch on an error's message text or name string (error classes and DOCA codes only)", () => {
  const found: string[] = [];
  for (const file of [...sources(join(root, "tasks")), ...sources(join(root, "ffi"))]) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (/^\s*(?:\/\/|\*)/.test(line)) return;
      for (const [what, re] of BY_TEXT) if (re.test(line)) found.push(`${relative(root, file)}:${i + 1}: ${what}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});

test("the scan recognises each shape (a guard against a scan that can never fail)", () => {
  const samples = [
    `if (e.name === "TimeoutError") return;`,
    `if (err?.name !== 'InterruptedError') throw err;`,
    `if (message.message.includes("still open")) retry();`,
    `if (stop?.message?.includes(" stopped: ")) return stop;`,
    `if (!/timed out|timeout/i.test(e.message)) throw e;`,
    `if (/--allow-[a-z]+/.test(String(err.message))) return true;`,
  ];
  for (const sample of samples) assert.ok(BY_TEXT.some(([, re]) => re.test(sample)), sample);
  assert.ok(!BY_TEXT.some(([, re]) => re.test(`if (e instanceof TimeoutError) return;`)));
  assert.ok(!BY_TEXT.some(([, re]) => re.test(`const rc = this.name === "decompress_lz4_stream";`)));
});
