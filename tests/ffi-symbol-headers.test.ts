/**
 * The symbol table against C: every DOCA_SYMBOLS entry is checked against its prototype in the software device's
 * headers (sim/include/*.h, DOCA's prototypes): the number of parameters, each integer's width and signedness, which
 * parameters (and result) are pointers, and for "ptr<doca_X>" that the C type is `struct doca_X *` ("ptr<void>":
 * `void *`). The prototype written beside each entry in ffi/native/symbols.ts must agree with the header too, so the
 * comment a reader trusts is the one the table was written from. The headers are read through the C preprocessor, so
 * the prototypes a macro declares (one macro for all of a library's task kinds) are checked like the others.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ACCEL_EA_SYMBOLS, COMPRESS_SYMBOLS, DOCA_SYMBOLS as CORE_SYMBOLS, SHA_SYMBOLS } from "../ffi/native/symbols.ts";

/** The core table and the accelerators' blocks (their prototypes are in sim/include too). */
const DOCA_SYMBOLS = { ...CORE_SYMBOLS, ...COMPRESS_SYMBOLS, ...SHA_SYMBOLS, ...ACCEL_EA_SYMBOLS };
import type { TableType } from "../ffi/load/types.ts";
import { headerOwnText } from "../scripts/library-table.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const include = join(root, "sim", "include");

interface Prototype {
  result: string;
  params: string[];
}

/** `result name(params);` declarations of a C text (comments, macros and typedefs left out). */
function prototypes(text: string): Map<string, Prototype> {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/.*$/gm, " ").replace(/^\s*#.*$/gm, " ")
    .replace(/\bDOCA_(STABLE|EXPERIMENTAL|DEPRECATED|EXPORTED)\b/g, " ")
    // sim/include's flavour switches (doca_flavour.h): `const` in the 3.x headers this table follows
    .replace(/\bDOCA_SIM_(TASK|IMM)_CONST\b/g, "const");
  const found = new Map<string, Prototype>();
  for (const statement of code.split(/[;{}]/)) {
    const s = statement.replace(/\s+/g, " ").trim();
    if (s.startsWith("typedef")) continue;
    const m = /^(.*?)\b(doca_\w+)\s*\(([^()]*)\)$/.exec(s);
    // A call inside an inline function body ("return doca_x(a, b)") is not a declaration.
    if (!m || /\breturn\b|=/.test(m[1]) || m[1].trim() === "") continue;
    const params = m[3].trim() === "void" || m[3].trim() === "" ? [] : m[3].split(",").map((p) => p.trim());
    found.set(m[2], { result: m[1].trim(), params });
  }
  return found;
}

const SCALARS: Record<string, TableType> = {
  doca_error_t: "i32",
  int: "i32",
  uint8_t: "u8",
  uint16_t: "u16",
  uint32_t: "u32",
  uint64_t: "u64",
  size_t: "usize",
  "union doca_data": "u64",
  doca_notification_handle_t: "i32", // an int fd on Linux
  void: "void",
};

/** The table kind a C type (parameter name removed) must have. */
function kindOf(cType: string): TableType | undefined {
  const t = cType.replace(/\bconst\b/g, " ").replace(/\s+/g, " ").trim();
  if (/^enum \w+$/.test(t)) return "i32";
  if (/_cb_t$|_callback_t$/.test(t)) return "ptr"; // function pointer typedefs
  const pointer = /^(.*?)\s*(\*+)$/.exec(t.replace(/\s*\*/g, "*").replace(/\*/g, " *").replace(/ \*/g, "*").replace(/(\S)\*/, "$1 *"));
  if (pointer) {
    const target = pointer[1].trim(), stars = pointer[2].length;
    if (stars === 1 && /^struct doca_\w+$/.test(target)) return `ptr<${target.slice(7)}>`;
    if (stars === 1 && target === "void") return "ptr<void>";
    return "ptr";
  }
  return SCALARS[t];
}

/** A parameter declaration without its name: "const struct doca_buf *src" → "const struct doca_buf *". */
function typeOfParam(param: string): string {
  const p = param.trim();
  // An array parameter (`uint32_t missing_indices[]`) is a pointer in C
  if (/\w+\[\]$/.test(p)) return p.replace(/\s*\w+\[\]$/, " *");
  if (/_cb_t$|_callback_t$/.test(p.split(/\s+/).pop()!)) return p; // a bare callback type
  const m = /^(.*?[\s*])(\w+)$/.exec(p);
  return m && !/^(const\s+)?(struct|union|enum)\s+\w+$/.test(p) && !(p in SCALARS) ? m[1].trim() : p;
}

/** Whether a table kind fits the kind the C type demands: an untyped "ptr" is allowed where C names the object. */
function fits(table: TableType, c: TableType | undefined): boolean {
  if (c === undefined) return false;
  if (table === c) return true;
  return table === "ptr" && c.startsWith("ptr");
}

/** What a header itself declares, macros expanded (`cc -E`; line markers drop what it includes). */
function preprocessed(file: string): string {
  return headerOwnText(include, file).replace(/__attribute__\(\((visibility\("default"\)|deprecated)\)\)/g, " ");
}

const headers = new Map<string, Prototype>();
for (const file of readdirSync(include).filter((f) => f.endsWith(".h"))) {
  for (const [name, proto] of prototypes(preprocessed(file))) headers.set(name, proto);
}
/** The prototypes commented in ffi/native/symbols.ts, one comment line each (prose lines around them match nothing). */
const commented = new Map<string, Prototype>();
for (const line of readFileSync(join(root, "ffi", "native", "symbols.ts"), "utf8").split("\n")) {
  const comment = /^\s*\/\/ (.*)$/.exec(line);
  if (comment) for (const [name, proto] of prototypes(comment[1])) commented.set(name, proto);
}

describe("ffi/native/symbols.ts against sim/include", () => {
  test("the header parser finds the prototypes (guards the checks below from passing vacuously)", () => {
    assert.ok(headers.size >= 100, `only ${headers.size} prototypes parsed from sim/include`);
    assert.deepEqual(headers.get("doca_mmap_set_memrange"), { result: "doca_error_t", params: ["struct doca_mmap *mmap", "void *addr", "size_t len"] });
    assert.equal(kindOf(typeOfParam("struct doca_devinfo_rep ***dev_list_rep")), "ptr");
    assert.equal(kindOf(typeOfParam("const struct doca_buf *src")), "ptr<doca_buf>");
    assert.equal(kindOf(typeOfParam("union doca_data user_data")), "u64");
  });

  const entries = Object.entries(DOCA_SYMBOLS) as [string, { params: readonly TableType[]; result: TableType; aliases?: readonly string[]; optional?: true }][];
  test("every entry: arity, integer widths, pointer-ness and pointer types as in its header prototype", () => {
    const problems: string[] = [];
    let checked = 0;
    for (const [name, def] of entries) {
      const spelling = [name, ...(def.aliases ?? [])].find((n) => headers.has(n));
      if (!spelling) {
        // The software device leaves out a few newer/optional functions; a required one must be there.
        if (!def.optional) problems.push(`${name}: required, but no prototype in sim/include`);
        continue;
      }
      checked++;
      const proto = headers.get(spelling)!;
      if (proto.params.length !== def.params.length) {
        problems.push(`${name}: ${def.params.length} parameters in the table, ${proto.params.length} in C`);
        continue;
      }
      const result = kindOf(proto.result);
      if (!fits(def.result, result)) problems.push(`${name}: result "${def.result}", C says ${proto.result} (${result})`);
      def.params.forEach((kind, i) => {
        const c = kindOf(typeOfParam(proto.params[i]));
        if (!fits(kind, c)) problems.push(`${name}: parameter ${i + 1} "${kind}", C says "${proto.params[i]}" (${c})`);
      });
    }
    assert.deepEqual(problems, []);
    assert.ok(checked >= entries.length - 15, `only ${checked} of ${entries.length} entries had a header prototype`);
  });

  test("the prototype commented beside each entry agrees with the header", () => {
    const problems: string[] = [];
    const norm = (p: Prototype) => `${kindOf(p.result)}(${p.params.map((x) => kindOf(typeOfParam(x))).join(", ")})`;
    for (const [name] of entries) {
      const mine = commented.get(name), theirs = headers.get(name);
      if (!mine) {
        problems.push(`${name}: no C prototype commented beside it`);
        continue;
      }
      if (theirs && norm(mine) !== norm(theirs)) problems.push(`${name}: comment ${norm(mine)} vs header ${norm(theirs)}`);
    }
    assert.deepEqual(problems, []);
  });
});
