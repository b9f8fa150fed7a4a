#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-run --allow-env
/**
 * What each library of the software device exports, against the DOCA headers it implements: read from the built
 * libraries (`nm -D`), sim/behaviour.tsv (which header documents each function) and sim/include (DOCA's prototypes).
 * tests/sim-behaviour.test.ts uses the same reading to hold every export to a behaviour row, and checks that
 * docs/LIBRARIES.md is what `deno task docs:libraries` (this file run as a program) writes.
 *
 *   deno task docs:libraries            rewrite docs/LIBRARIES.md (from the libraries built in build/sim*) and
 *                                       sim/coverage.txt (from ffi/native/symbols.ts)
 *   deno task docs:libraries --check    exit 1 when either is not what it would write
 *
 * Every library of every flavour counts: the lib folder of a flavour is read whole, so a library added later
 * (a new sim/src folder) is covered without a change here.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { buildSoftwareDevice, FLAVOURS, type Flavour } from "../ffi/load/sim-build/builder.ts";
import { DOCA_SYMBOLS } from "../ffi/native/symbols.ts";

export const repoRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Where `deno task sim:build --flavour F` puts a flavour's libraries. */
export function flavourLibDir(flavour: Flavour, root = repoRoot): string {
  return join(root, "build", flavour === "3" ? "sim" : `sim-${flavour}`, "lib");
}

/**
 * Builds a flavour's libraries when a source is newer (the builder skips what is up to date); the default flavour
 * is expected built already (`deno task sim:build`, which also builds the C test programs).
 */
export function ensureFlavourBuilt(flavour: Flavour, root = repoRoot): string {
  if (flavour === "3") return flavourLibDir(flavour, root);
  return buildSoftwareDevice({ outDir: dirname(flavourLibDir(flavour, root)), flavour, root });
}

/** The libraries of a lib folder ("libdoca_rdma"), in name order: every one the build made. */
export function librariesIn(libDir: string): string[] {
  if (!existsSync(libDir)) return [];
  return readdirSync(libDir).filter((name) => /^libdoca_\w+\.so$/.test(name)).map((name) => name.slice(0, -3)).sort();
}

/** The doca_* functions a library defines and exports. */
export function exportsOf(libDir: string, library: string): string[] {
  const result = spawnSync("nm", ["-D", "--defined-only", join(libDir, `${library}.so`)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`nm ${library}.so: ${result.stderr || result.error}`);
  const names = new Set<string>();
  for (const line of result.stdout.split("\n")) {
    const name = line.trim().split(/\s+/)[2]?.replace(/@.*/, "");
    if (name?.startsWith("doca_")) names.add(name);
  }
  return [...names].sort();
}

/** Every flavour's libraries and their exports: flavour -> library -> functions. */
export function exportsByFlavour(root = repoRoot): Map<Flavour, Map<string, string[]>> {
  const out = new Map<Flavour, Map<string, string[]>>();
  for (const flavour of Object.keys(FLAVOURS) as Flavour[]) {
    const libDir = ensureFlavourBuilt(flavour, root);
    out.set(flavour, new Map(librariesIn(libDir).map((library) => [library, exportsOf(libDir, library)])));
  }
  return out;
}

export interface BehaviourRow {
  fn: string;
  doca: string;
  sim: string;
  checks: string[];
}

/** sim/behaviour.tsv without its comments and header row. */
export function readBehaviourTable(root = repoRoot): BehaviourRow[] {
  return readFileSync(join(root, "sim", "behaviour.tsv"), "utf8").split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#")).slice(1)
    .map((line) => {
      const cells = line.split("\t");
      if (cells.length !== 4) throw new Error(`behaviour.tsv: a row needs 4 tab-separated cells: ${line}`);
      const [fn, doca, sim, check] = cells;
      return { fn, doca, sim, checks: check === "-" ? [] : check.split(" ") };
    });
}

/** The headers a row names ("doca_pe.h/doca_ctx.h 3.x: ..." gives both), or [] for the doca_sim_* diagnostics. */
export function headersOfRow(row: BehaviourRow): string[] {
  const m = /^((?:doca_[a-z_0-9]+\.h\/?)+) (?:3\.x|2\.\d+): /.exec(row.doca);
  return m ? m[1].split("/") : [];
}

/**
 * What `header` (in the folder `include`) itself says after the C preprocessor (`cc -E`, `extra` arguments first):
 * macros expanded, and by the line markers only its own lines, not those of the headers it includes.
 */
export function headerOwnText(include: string, header: string, extra: string[] = []): string {
  const cpp = spawnSync(process.env.CC ?? "cc", ["-E", ...extra, `-I${include}`, "-x", "c", join(include, header)], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (cpp.status !== 0) throw new Error(`cc -E ${header}: ${cpp.stderr || cpp.error}`);
  let own = false;
  const text: string[] = [];
  for (const line of cpp.stdout.split("\n")) {
    const marker = /^# \d+ "(.*)"/.exec(line);
    if (marker) own = marker[1].endsWith(`/${header}`);
    else if (own) text.push(line);
  }
  return text.join("\n");
}

/**
 * The functions a sim/include header declares (exported prototypes, DOCA_STABLE/DOCA_EXPERIMENTAL, and header-inline
 * definitions), in either flavour's spelling. The header goes through the C preprocessor, so declarations a macro
 * writes (doca_rdma.h declares each task kind's set_conf and as_task with one) count, and line markers keep only what
 * the header itself declares, not what it includes.
 */
export function declaredIn(header: string, root = repoRoot): { declared: string[]; inline: string[] } {
  const declared = new Set<string>(), inline = new Set<string>();
  const include = join(root, "sim", "include");
  const flavourIncludes = readdirSync(join(root, "sim", "flavours"), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, "sim", "flavours", e.name, "include")))
    .map((e) => join(root, "sim", "flavours", e.name, "include"));
  for (const extra of [[], ...flavourIncludes.map((dir) => [`-I${dir}`])]) {
    const body = headerOwnText(include, header, extra);
    for (const m of body.matchAll(/visibility\("default"\)\)\)\s*(?:__attribute__\(\(deprecated\)\)\s*)?[\w\s*]*?\b(doca_\w+)\s*\(/g)) declared.add(m[1]);
    for (const m of body.matchAll(/static inline\b[\w\s*]*?\b(doca_\w+)\s*\(/g)) {
      declared.add(m[1]);
      inline.add(m[1]);
    }
  }
  return { declared: [...declared].sort(), inline: [...inline].sort() };
}

/** docs/LIBRARIES.md: one row per library of the software device. */
export function renderLibraryTable(root = repoRoot): string {
  const byFlavour = exportsByFlavour(root);
  const rows = new Map(readBehaviourTable(root).map((row) => [row.fn, row]));
  const flavours = [...byFlavour.keys()];
  const libraries = [...new Set(flavours.flatMap((f) => [...byFlavour.get(f)!.keys()]))].sort();
  const lines = [
    "# The libraries of the software device",
    "",
    "Generated by `deno task docs:libraries` (scripts/library-table.ts) from the built libraries, sim/behaviour.tsv",
    "and sim/include; tests/sim-behaviour.test.ts fails when it is out of date. Each exported function has a row in",
    "sim/behaviour.tsv saying what DOCA's header documents and what the device does. \"Declared\" counts the",
    "functions the library's headers in sim/include declare (DOCA's own prototypes, the part the device implements);",
    "a declared function no flavour exports is header-inline in DOCA too, or named below.",
    "",
    `| library | DOCA headers | ${flavours.map((f) => `exports (${f === "3" ? "3.x" : f})`).join(" | ")} | declared | declared, not exported |`,
    `|---|---|${flavours.map(() => "---:").join("|")}|---:|---|`,
  ];
  for (const library of libraries) {
    const exported = new Set(flavours.flatMap((f) => byFlavour.get(f)!.get(library) ?? []));
    const headers = [...new Set([...exported].flatMap((fn) => (rows.has(fn) ? headersOfRow(rows.get(fn)!) : [])))].sort();
    const declared = new Set<string>(), inline = new Set<string>();
    for (const header of headers) {
      const d = declaredIn(header, root);
      d.declared.forEach((fn) => declared.add(fn));
      d.inline.forEach((fn) => inline.add(fn));
    }
    // A header shared by two libraries (doca_rdma.h declares doca_mmap_export_rdma of common) counts for the library
    // that exports the function
    const elsewhere = new Set(flavours.flatMap((f) => [...byFlavour.get(f)!].filter(([l]) => l !== library).flatMap(([, fns]) => fns)));
    const own = [...declared].filter((fn) => !elsewhere.has(fn) || exported.has(fn));
    const missing = own.filter((fn) => !exported.has(fn)).map((fn) => `\`${fn}\`${inline.has(fn) ? " (inline)" : ""}`);
    const counts = flavours.map((f) => {
      const fns = byFlavour.get(f)!.get(library);
      return fns ? String(fns.length) : "not built";
    });
    lines.push(`| ${library} | ${headers.map((h) => `\`${h}\``).join(", ") || "-"} | ${counts.join(" | ")} | ${own.length} | ${missing.join(", ") || "-"} |`);
  }
  lines.push(
    "",
    "The 2.7 flavour exports DOCA 2.7's spellings of two Comch server functions in place of their 3.x names (their",
    "rows say `2.7`) and builds only the libraries DOCA 2.7 had (sim/flavours/README.md). The `doca_sim_*` functions",
    "are the device's own diagnostics (sim/include/doca_sim.h), not DOCA's.",
    "",
  );
  return lines.join("\n");
}

export const libraryTablePath: string = join(repoRoot, "docs", "LIBRARIES.md");
export const coveragePath: string = join(repoRoot, "sim", "coverage.txt");

/** The DOCA functions doca-ts binds (ffi/native/symbols.ts), as library -> names: what the device must export. */
export function boundFunctions(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, spec] of Object.entries(DOCA_SYMBOLS) as [string, { lib: string }][]) {
    if (!name.startsWith("doca_")) continue;
    const library = `libdoca_${spec.lib}`;
    out.set(library, [...(out.get(library) ?? []), name].sort());
  }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/** sim/coverage.txt: the functions doca-ts binds, by library. */
export function renderCoverage(): string {
  const lines = [
    "# The DOCA functions doca-ts binds (ffi/native/symbols.ts), by the library that must export them: the part of",
    "# DOCA the TypeScript side needs from the software device (or from a real DOCA install, where the symbols marked",
    "# optional there may be missing). Written by `deno task docs:libraries`; tests/sim-c.test.ts checks that it is the",
    "# symbol table's list and that each library of build/sim exports its names. What every export does is in",
    "# sim/behaviour.tsv; docs/LIBRARIES.md sums up each library.",
  ];
  for (const [library, names] of boundFunctions()) lines.push("", `# ${library}`, ...names);
  return lines.join("\n") + "\n";
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const usage = "Usage: deno task docs:libraries [--check]\n\nWrites docs/LIBRARIES.md from the built libraries and " +
    "sim/coverage.txt from ffi/native/symbols.ts.\n      --check    compare only: exit 1 when either differs\n" +
    "  -h, --help     print this help and exit (nothing is written)";
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usage); // asked for: stdout, exit 0
    process.exit(0);
  }
  const unknown = args.find((arg) => arg !== "--check");
  if (unknown !== undefined) {
    console.error(`docs:libraries: unknown argument ${JSON.stringify(unknown)} (see --help)`);
    process.exit(2);
  }
  const outputs: [string, string][] = [[libraryTablePath, renderLibraryTable()], [coveragePath, renderCoverage()]];
  let stale = 0;
  for (const [path, text] of outputs) {
    const current = existsSync(path) ? readFileSync(path, "utf8") : "";
    if (args.includes("--check")) {
      if (current !== text) console.error(`${path} is out of date: run \`deno task docs:libraries\``), stale++;
    } else if (current !== text) {
      writeFileSync(path, text);
      console.log(`wrote ${path}`);
    }
  }
  process.exit(stale === 0 ? 0 : 1);
}
