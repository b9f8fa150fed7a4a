#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-write --allow-run --allow-env
/**
 * Assembles ffi/native/asm/x86_64.S and ffi/native/asm/aarch64.S and writes ffi/native/machine-code.ts, the bytes doca-ts places in
 * executable memory (the completion ring's stubs and the call_each loop). `deno task machine-code` regenerates the
 * file; `--check` only compares (exit 1 on any difference). tests/ffi-machine-code.test.ts does the same check.
 *
 * Assemblers, first found wins: x86-64 `as` on an x86-64 machine, else `x86_64-linux-gnu-as`, else `llvm-mc`;
 * aarch64 `aarch64-linux-gnu-as` (Debian's binutils-aarch64-linux-gnu, which gcc-aarch64-linux-gnu pulls in), `as` on an
 * aarch64 machine, else `llvm-mc`. The .text section and the symbol offsets are read from the object file here (a
 * small ELF64 reader), so no objcopy/nm of the right architecture is needed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export type Arch = "x64" | "arm64";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCES: Record<Arch, string> = { x64: join(root, "ffi", "native", "asm", "x86_64.S"), arm64: join(root, "ffi", "native", "asm", "aarch64.S") };
export const GENERATED = join(root, "ffi", "native", "machine-code.ts");

/** What ffi/ needs of one architecture's code: two position-independent blobs and offsets inside them. */
export interface ArchCode {
  ring: { hex: string; ok: number; error: number; ringAddressAt: number[] };
  callEach: { hex: string; packed: number };
}

const has = (tool: string) => spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).status === 0;

/** The assembler command for an architecture on this machine, or undefined. */
export function assembler(arch: Arch): { tool: string; args: (src: string, obj: string) => string[] } | undefined {
  const gnu = (tool: string) => ({ tool, args: (src: string, obj: string) => [src, "-o", obj] });
  const llvm = (triple: string) => ({ tool: "llvm-mc", args: (src: string, obj: string) => [`-triple=${triple}`, "-filetype=obj", src, "-o", obj] });
  if (arch === "x64") {
    if (process.arch === "x64" && has("as")) return gnu("as");
    if (has("x86_64-linux-gnu-as")) return gnu("x86_64-linux-gnu-as");
    if (has("llvm-mc")) return llvm("x86_64-linux-gnu");
  } else {
    if (has("aarch64-linux-gnu-as")) return gnu("aarch64-linux-gnu-as");
    if (process.arch === "arm64" && has("as")) return gnu("as");
    if (has("llvm-mc")) return llvm("aarch64-linux-gnu");
  }
  return undefined;
}

interface Elf {
  text: Uint8Array;
  symbols: Map<string, number>;
  relocations: number;
}

/** The .text bytes, the value of every symbol defined in .text, and how many relocation sections there are. */
function readElf(bytes: Uint8Array): Elf {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0, false) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) throw new Error("not a little-endian ELF64 object");
  const shoff = Number(v.getBigUint64(0x28, true)), shentsize = v.getUint16(0x3a, true), shnum = v.getUint16(0x3c, true);
  const shstrndx = v.getUint16(0x3e, true);
  const section = (i: number) => {
    const o = shoff + i * shentsize;
    return {
      name: v.getUint32(o, true),
      type: v.getUint32(o + 4, true),
      offset: Number(v.getBigUint64(o + 0x18, true)),
      size: Number(v.getBigUint64(o + 0x20, true)),
      link: v.getUint32(o + 0x28, true),
    };
  };
  const cstr = (at: number) => {
    let end = at;
    while (bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(at, end));
  };
  const names = section(shstrndx);
  let textIndex = -1, relocations = 0;
  let symtab: ReturnType<typeof section> | undefined;
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    const name = cstr(names.offset + s.name);
    if (name === ".text") textIndex = i;
    if (s.type === 2) symtab = s; // SHT_SYMTAB
    if ((s.type === 4 || s.type === 9) && /\.text$/.test(name)) relocations++; // SHT_RELA / SHT_REL against .text
  }
  if (textIndex < 0 || !symtab) throw new Error("object without .text or symbol table");
  const t = section(textIndex);
  const strtab = section(symtab.link);
  const symbols = new Map<string, number>();
  for (let o = symtab.offset; o < symtab.offset + symtab.size; o += 24) {
    if (v.getUint16(o + 6, true) !== textIndex) continue;
    const name = cstr(strtab.offset + v.getUint32(o, true));
    if (name) symbols.set(name, Number(v.getBigUint64(o + 8, true)));
  }
  return { text: bytes.slice(t.offset, t.offset + t.size), symbols, relocations };
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** Assembles one architecture's source; undefined (with the reason) when no assembler is installed. */
export function assemble(arch: Arch): ArchCode | string {
  const as = assembler(arch);
  if (!as) return `no ${arch === "x64" ? "x86-64" : "aarch64"} assembler (as / ${arch === "x64" ? "x86_64" : "aarch64"}-linux-gnu-as / llvm-mc)`;
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-asm-"));
  try {
    const obj = join(dir, "code.o");
    const r = spawnSync(as.tool, as.args(SOURCES[arch], obj), { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${as.tool} ${SOURCES[arch]} failed:\n${r.stderr}`);
    const elf = readElf(readFileSync(obj));
    if (elf.relocations > 0) throw new Error(`${SOURCES[arch]}: the code needs relocations (refer to local labels only)`);
    const at = (name: string) => {
      const value = elf.symbols.get(name);
      if (value === undefined) throw new Error(`${SOURCES[arch]}: label ${name} missing`);
      return value;
    };
    const ring = at("ring_ok"), ringEnd = at("ring_end"), each = at("call_each"), eachEnd = at("call_each_end");
    const ringAddressAt = [...elf.symbols].filter(([n]) => n.startsWith("ring_address")).map(([, o]) => o - ring).sort((a, b) => a - b);
    return {
      ring: { hex: hex(elf.text.subarray(ring, ringEnd)), ok: 0, error: at("ring_error") - ring, ringAddressAt },
      callEach: { hex: hex(elf.text.subarray(each, eachEnd)), packed: at("call_each_packed") - each },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of ffi/native/machine-code.ts for these codes. */
export function render(codes: Record<Arch, ArchCode>): string {
  const wrap = (s: string) => s.match(/.{1,96}/g)!.map((l) => `      "${l}"`).join(" +\n");
  const arch = (a: Arch) => {
    const c = codes[a];
    return `  ${a}: {
    ring: {
      hex:
${wrap(c.ring.hex)},
      ok: ${c.ring.ok},
      error: ${c.ring.error},
      ringAddressAt: [${c.ring.ringAddressAt.join(", ")}],
    },
    callEach: {
      hex:
${wrap(c.callEach.hex)},
      packed: ${c.callEach.packed},
    },
  },`;
  };
  return `/**
 * GENERATED by \`deno task machine-code\` (scripts/machine-code.ts) from ffi/native/asm/x86_64.S and ffi/native/asm/aarch64.S: do
 * not edit; change the assembly and regenerate. tests/ffi-machine-code.test.ts re-assembles and compares.
 *
 * Per architecture: the completion ring's stubs (ok / error entry offsets, where the ring's address is patched) and
 * the call_each loop (offset of its bsearch-shaped packed entry). Both blobs are position-independent.
 */
export interface ArchCode {
  ring: { hex: string; ok: number; error: number; ringAddressAt: number[] };
  callEach: { hex: string; packed: number };
}

export const MACHINE_CODE: Record<"x64" | "arm64", ArchCode> = {
${arch("x64")}
${arch("arm64")}
};

/** Bytes of a hex string. */
export function bytesOf(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
`;
}

export const HELP = `Usage: deno task machine-code [--check]

Assembles ffi/native/asm/x86_64.S and ffi/native/asm/aarch64.S and writes ffi/native/machine-code.ts (the completion
ring's stubs and the call_each loop, as bytes); needs an assembler for each architecture (as, the cross binutils or
llvm-mc).
      --check    compare only: exit 0 when ffi/native/machine-code.ts matches its sources, 1 when it differs
  -h, --help     print this help and exit (nothing is written)`;

if (import.meta.main) {
  // --help (or a flag this script does not know) must never regenerate the file: answer before any work.
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(HELP);
    process.exit(0);
  }
  const unknown = args.find((arg) => arg !== "--check");
  if (unknown !== undefined) {
    console.error(`machine-code: unknown argument ${JSON.stringify(unknown)} (see --help)`);
    process.exit(2);
  }
  const check = args.includes("--check");
  const codes = {} as Record<Arch, ArchCode>;
  for (const arch of ["x64", "arm64"] as const) {
    const code = assemble(arch);
    if (typeof code === "string") {
      console.error(`machine-code: ${code}: cannot ${check ? "check" : "generate"} ${arch}`);
      process.exit(2);
    }
    codes[arch] = code;
  }
  const text = render(codes);
  if (check) {
    const same = readFileSync(GENERATED, "utf8") === text;
    console.log(same ? "machine-code: ffi/native/machine-code.ts matches its sources" : "machine-code: ffi/native/machine-code.ts differs from its sources: run `deno task machine-code`");
    process.exit(same ? 0 : 1);
  }
  writeFileSync(GENERATED, text);
  console.log(`machine-code: wrote ${GENERATED}`);
}
