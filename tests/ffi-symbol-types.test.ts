// The symbol table types every FFI call: `deno check` must reject a call with the wrong arity or argument types,
// and an optional symbol is typed as possibly undefined. The bad calls are written to a temporary file inside the
// repository (so it resolves ffi/ and deno.json) and type-checked with the project's own Deno.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const denoBin = join(root, "node_modules", "deno", "bin.cjs");
const skip = existsSync(denoBin) ? false : `the Deno binary ${denoBin} is not installed (npm install)`;

function check(source: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(root, "tests", ".typecheck-"));
  try {
    const file = join(dir, "probe.ts");
    writeFileSync(file, source);
    // The npm-installed Deno is started through its Node shim on every runtime.
    const r = spawnSync("node", [denoBin, "check", "--quiet", file], { cwd: root, encoding: "utf8", timeout: 240_000 });
    // deno-lint-ignore no-control-regex
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, "") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const header = `import { doca } from "../../ffi/native/library.ts";\nconst f = doca().fns;\n`;

test("deno check accepts well-typed FFI calls and rejects wrong ones, line by line", { skip, timeout: 300_000 }, () => {
  const good = check(header + `export const rc: number = f.doca_mmap_create(0);\nexport const n: number | undefined = f.doca_sim_live_objects?.();\n`);
  assert.ok(good.ok, good.output);
  const bad = check(
    header +
      `f.doca_mmap_create("x", 1, 2, 3);\n` + // line 3: wrong arity
      `f.doca_mmap_create("x");\n` + // line 4: a string where a pointer goes
      `f.doca_sim_live_objects();\n` + // line 5: optional symbol used as if always present
      `const s: string = f.doca_pe_progress(0);\n`, // line 6: the result is a number
  );
  assert.equal(bad.ok, false, "the bad calls type-checked");
  for (const [line, code] of [[3, "TS2554"], [4, "TS2345"], [5, "TS2722"], [6, "TS2322"]] as const) {
    assert.match(bad.output, new RegExp(`${code}[\\s\\S]*?probe\\.ts:${line}:`), `no ${code} on line ${line}:\n${bad.output}`);
  }
});

test("deno check tells DOCA handles apart: a swapped handle or a swapped address/length fails", { skip, timeout: 300_000 }, () => {
  const handles = header +
    `import type { Handle } from "../../ffi/load/types.ts";\n` +
    `declare const dev: Handle<"doca_dev">, mmap: Handle<"doca_mmap">, buf: Handle<"doca_buf">, addr: Handle<"void">;\n`;
  const good = check(
    handles +
      `f.doca_mmap_add_dev(mmap, dev);\n` +
      `f.doca_mmap_set_memrange(mmap, addr, 4096);\n` +
      `f.doca_mmap_set_memrange(0, 0, 4096);\n` + // untyped numbers stay accepted (plain "ptr" / not yet branded)
      `const ctx = f.doca_dma_as_ctx(0);\nf.doca_ctx_start(ctx);\n` + // a result carries its type
      `export const n: number = ctx + 1;\n`, // and is still a number
  );
  assert.ok(good.ok, good.output);
  const bad = check(
    handles +
      `f.doca_mmap_add_dev(dev, mmap);\n` + // line 5: the two handles swapped
      `f.doca_mmap_set_memrange(mmap, 4096, addr);\n` + // line 6: address and length swapped
      `f.doca_buf_reset_data_len(mmap);\n` + // line 7: an mmap where a buf goes
      `f.doca_task_submit(f.doca_dma_as_ctx(0));\n` + // line 8: a ctx where a task goes
      `f.doca_buf_get_data_len(buf, 0);\nf.doca_pe_progress(buf);\n`, // line 9 fine, line 10: a buf where a pe goes
  );
  assert.equal(bad.ok, false, "the swapped calls type-checked");
  for (const line of [5, 6, 7, 8, 10]) {
    assert.match(bad.output, new RegExp(`TS2345[\\s\\S]*?probe\\.ts:${line}:`), `no TS2345 on line ${line}:\n${bad.output}`);
  }
  assert.doesNotMatch(bad.output, /probe\.ts:9:/, "a well-typed call was refused");
});
