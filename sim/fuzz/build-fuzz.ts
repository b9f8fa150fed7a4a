/**
 * Builds the software device's fuzz harnesses (sim/fuzz/*.c) straight from sim/src, so the device code itself is
 * instrumented: AddressSanitizer + UndefinedBehaviorSanitizer when the compiler supports them, plain -O1 otherwise.
 *
 *   node --import tsx sim/fuzz/build-fuzz.ts            (or: deno run -A / bun)  → build/sim/fuzz/<name>
 *   ... build-fuzz.ts --libfuzzer                        clang -fsanitize=fuzzer,address,undefined → <name>-libfuzzer
 *
 * Only node: modules (runs under Deno, Bun and Node). Importable: buildFuzzers() returns the paths built.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const src = join(root, "sim", "src");
const include = join(root, "sim", "include");
const fuzzDir = join(root, "sim", "fuzz");
/** The Comch wire format the frame fuzzer shares with the C tests that speak it raw */
const wireHeader = join(root, "sim", "tests", "comch_wire.h");
export const outDir: string = join(root, "build", "sim", "fuzz");

/**
 * The library folders (sim/src/<folder>) each harness links: the descriptor parser lives in libdoca_common (with
 * RDMA, whose connections common's map export reaches); Comch frames need comch too, RDMA frames rdma; JSON is one
 * file of common.
 */
const HARNESSES: Record<string, { folders: string[]; only?: string }> = {
  fuzz_export_desc: { folders: ["common", "rdma"] },
  fuzz_comch_frames: { folders: ["common", "comch", "rdma"] },
  fuzz_rdma_frames: { folders: ["common", "rdma"] },
  fuzz_json: { folders: ["common"], only: "json.c" },
};

export interface BuiltFuzzer {
  name: string;
  path: string;
  sanitized: boolean;
}

function newest(paths: string[]): number {
  return Math.max(...paths.map((p) => statSync(p).mtimeMs));
}

function compile(
  cc: string,
  flags: string[],
  sources: string[],
  output: string,
  folders: string[],
): { ok: boolean; log: string } {
  const tmp = `${output}.tmp-${process.pid}`;
  const r = spawnSync(cc, [
    "-std=c11",
    "-g",
    "-Wall",
    "-Wextra",
    `-I${include}`,
    ...folders.map((folder) => `-I${join(src, folder)}`),
    ...flags,
    ...sources,
    "-o",
    tmp,
    "-lpthread",
  ], {
    encoding: "utf8",
  });
  if (r.status !== 0) return { ok: false, log: `${r.error ?? ""}${r.stderr}` };
  renameSync(tmp, output);
  return { ok: true, log: r.stderr };
}

/** Builds (when stale) every harness; throws with the compiler's output when even the plain build fails. */
export function buildFuzzers(opts: { cc?: string; libfuzzer?: boolean; force?: boolean } = {}): BuiltFuzzer[] {
  mkdirSync(outDir, { recursive: true });
  const cc = opts.cc ?? process.env.CC ?? (opts.libfuzzer ? "clang" : "cc");
  const inFolder = (dir: string, suffix: string) =>
    existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(suffix)).sort().map((f) => join(dir, f)) : [];
  const built: BuiltFuzzer[] = [];
  for (const [name, { folders, only }] of Object.entries(HARNESSES)) {
    const headers = [include, fuzzDir, ...folders.map((folder) => join(src, folder))].flatMap((dir) => inFolder(dir, ".h"));
    const sources = folders.flatMap((folder) => inFolder(join(src, folder), ".c"))
      .filter((path) => only === undefined || path.endsWith(`/${only}`));
    const harness = join(fuzzDir, `${name}.c`);
    const inputs = [...sources, harness, ...headers, wireHeader, fileURLToPath(import.meta.url)];
    if (opts.libfuzzer) {
      const out = join(outDir, `${name}-libfuzzer`);
      const r = compile(cc, ["-O1", "-DDOCA_SIM_LIBFUZZER", "-fsanitize=fuzzer,address,undefined"], [
        ...sources,
        harness,
      ], out, folders);
      if (!r.ok) throw new Error(`building ${out} with ${cc} failed:\n${r.log}`);
      built.push({ name, path: out, sanitized: true });
      continue;
    }
    const out = join(outDir, name);
    const stamp = `${out}.sanitized`;
    if (!opts.force && existsSync(out) && statSync(out).mtimeMs >= newest(inputs)) {
      built.push({ name, path: out, sanitized: existsSync(stamp) });
      continue;
    }
    let r = compile(
      cc,
      ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"],
      [...sources, harness],
      out,
      folders,
    );
    const sanitized = r.ok;
    if (!r.ok) {
      r = compile(cc, ["-O1"], [...sources, harness], out, folders);
      if (!r.ok) throw new Error(`building ${out} with ${cc} failed:\n${r.log}`);
    }
    if (sanitized) spawnSync("touch", [stamp]);
    else if (existsSync(stamp)) spawnSync("rm", ["-f", stamp]);
    built.push({ name, path: out, sanitized });
  }
  return built;
}

const isMain = (import.meta as { main?: boolean }).main ??
  resolve(process.argv[1] ?? "") === fileURLToPath(import.meta.url);
if (isMain) {
  const args = process.argv.slice(2);
  try {
    for (const b of buildFuzzers({ libfuzzer: args.includes("--libfuzzer"), force: args.includes("--force") })) {
      console.log(`built ${b.path}${b.sanitized ? " (ASan+UBSan)" : ""}`);
    }
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}
