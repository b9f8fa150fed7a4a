/**
 * Loads DOCA (and libc) once per process through the runtime's loader and hands the bound functions to the
 * wrappers. loadDoca() is the public face: it reports where the libraries came from and what they are.
 */
import process from "node:process";
import { backend as selectBackend } from "../load/loaders/select.ts";
import { currentRuntime, type RuntimeName } from "../load/runtime.ts";
import { discoverLibraries, type DocaLibraryName, findOptionalLibrary } from "../load/discover.ts";
import { unloadableReason } from "../load/elf-check.ts";
import { ACCEL_EA_SYMBOLS, COMPRESS_SYMBOLS, DOCA_SYMBOLS as CORE_SYMBOLS, LIBC_SYMBOLS, RDMA_SYMBOLS, SHA_SYMBOLS } from "./symbols.ts";
import { type AsyncTwins, type Backend, type BoundFns, type BoundLibrary, eraseTypedPointers, type NativeFn, type RawFns } from "../load/types.ts";
import { OPTIONAL_DOCA_LIBRARIES, type OptionalDocaLibrary } from "../load/types.ts";
import { Scratch } from "./scratch.ts";
import { DocaError, setErrorDescriber } from "./errors.ts";
import { DocaErrorCode, fallbackErrorName } from "./constants.ts";

/** The whole DOCA table: the core libraries' symbols and the optional RDMA and accelerator blocks (symbols.ts). */
const DOCA_SYMBOLS = { ...CORE_SYMBOLS, ...RDMA_SYMBOLS, ...COMPRESS_SYMBOLS, ...SHA_SYMBOLS, ...ACCEL_EA_SYMBOLS };

/** Every DOCA function with the TS type derived from its symbol-table entry (optional ones may be undefined). */
export type DocaFns = BoundFns<typeof DOCA_SYMBOLS>;
/** What the loaders bind: the table with its typed pointers ("ptr<doca_dev>") erased to "ptr". */
const LOADER_SYMBOLS = eraseTypedPointers(DOCA_SYMBOLS);
export type DocaRawFns = RawFns<typeof DOCA_SYMBOLS>;
export type LibcFns = BoundFns<typeof LIBC_SYMBOLS> & AsyncTwins<typeof LIBC_SYMBOLS>;

export interface DocaLibraryInfo {
  dir: string;
  files: Record<DocaLibraryName, string> & Partial<Record<OptionalDocaLibrary, string>>;
  /** doca_version_runtime(). */
  version: string;
  /** True when the libraries are this repository's software device (they export doca_sim_*). */
  isSoftwareDevice: boolean;
  runtime: RuntimeName;
  /** Which spelling each renamed function resolved to, when it is not the DOCA 3.x name. */
  aliasesUsed: Record<string, string>;
  /** Optional functions this DOCA does not export (those of an optional library that failed to load included). */
  optionalMissing: string[];
  /**
   * Optional libraries present in the folder that could not be loaded (truncated, another architecture, dlopen's
   * refusal): treated as absent, so the others still load; `reason` says what is wrong with `path`.
   */
  optionalUnloadable: { library: OptionalDocaLibrary; path: string; reason: string }[];
}

export interface Doca {
  readonly fns: DocaFns;
  /** Hot-path forms of the same functions: native() arguments in, native 64-bit results out (see types.ts). */
  readonly raw: DocaRawFns;
  /** Whether an optional function exists in this DOCA. */
  has(name: keyof typeof DOCA_SYMBOLS): boolean;
  readonly libc: LibcFns;
  readonly backend: Backend;
  readonly scratch: Scratch;
  readonly info: DocaLibraryInfo;
}

// mmap(2) constants (Linux, all architectures we run on).
export const PROT_READ = 1, PROT_WRITE = 2, MAP_PRIVATE = 2, MAP_ANONYMOUS = 0x20;
export const MAP_FAILED = 2 ** 64 - 1; // (void *)-1 as a number: rounds to 2^64

let libcState: { libc: LibcFns; backend: Backend } | undefined;

/** libc alone (NativeMemory, poll): usable before or without DOCA. */
export function loadLibc(): { libc: LibcFns; backend: Backend } {
  if (!libcState) {
    const b = selectBackend();
    const bound = b.bind("libc.so.6", LIBC_SYMBOLS, "libc");
    if (bound.missing.length) throw new Error(`libc.so.6 lacks ${bound.missing.join(", ")}`);
    libcState = { libc: bound.fns as unknown as LibcFns, backend: b };
  }
  return libcState;
}

/** Maps fresh zeroed pages; returns the address. Throws on failure. */
export function mapPages(length: number): number {
  const { libc } = loadLibc();
  const address = libc.mmap(0, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) as number;
  if (address === 0 || address >= 2 ** 63) throw new Error(`mmap of ${length} bytes failed`);
  return address;
}

/** Sets `name=value` in the C environment (setenv), where DOCA and the software device read it. */
export function setCEnvironment(name: string, value: string): void {
  const { libc, backend } = loadLibc();
  const bytes = new TextEncoder().encode(`${name}\0${value}\0`);
  if (bytes.length > 4096) throw new RangeError(`${name}=... is longer than 4 KiB`);
  const address = mapPages(4096);
  try {
    new Uint8Array(backend.view(address, bytes.length)).set(bytes);
    if (libc.setenv(address, address + name.length + 1, 1) !== 0) throw new Error(`setenv(${name}) failed`);
  } finally {
    libc.munmap(address, 4096);
  }
}

/** What syncNativeEnvironment last handed to C, by name (so an unchanged value is not set again). */
const pushed = new Map<string, string>();

/**
 * Hands the configuration a program set in process.env at run time (DOCA_*, and XDG_RUNTIME_DIR, which picks the
 * software device's default folder) to the C environment. Deno and Node forward process.env writes to C's
 * environment themselves; Bun 1.4 does not, so on Bun `process.env.DOCA_SIM_DIR = ...` never reached the software
 * device (both sides waited for each other in different folders). Called when DOCA is loaded and before devices
 * are listed or opened, so the same program behaves the same on the three runtimes.
 */
export function syncNativeEnvironment(env: Record<string, string | undefined> = process.env): void {
  if (currentRuntime() !== "bun") return;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !(name.startsWith("DOCA_") || name === "XDG_RUNTIME_DIR")) continue;
    if (pushed.get(name) === value) continue;
    setCEnvironment(name, value);
    pushed.set(name, value);
  }
}

const RTLD_NOW = 2, RTLD_GLOBAL = 0x100;

function globalDlopen(path: string): void {
  const { libc, backend } = loadLibc();
  const bytes = new TextEncoder().encode(path + "\0");
  const address = mapPages(bytes.length);
  try {
    new Uint8Array(backend.view(address, bytes.length)).set(bytes);
    libc.dlopen(address, RTLD_NOW | RTLD_GLOBAL);
  } finally {
    libc.munmap(address, bytes.length);
  }
}

let state: Doca | undefined;

/** Why a library could not be loaded, from its ELF header (before dlopen, which a truncated file crashes) or from dlopen. */
class UnloadableLibrary extends Error {}

/** Binds one library file, or throws UnloadableLibrary saying why it cannot be loaded. */
function bindFile(backend: Backend, file: string, lib: DocaLibraryName | OptionalDocaLibrary): BoundLibrary {
  const reason = unloadableReason(file);
  if (reason) throw new UnloadableLibrary(reason);
  try {
    return backend.bind(file, LOADER_SYMBOLS, lib);
  } catch (error) {
    throw new UnloadableLibrary((error as Error)?.message ?? String(error));
  }
}

function bindAll(libDir?: string): Doca {
  syncNativeEnvironment();
  const found = discoverLibraries(libDir);
  const { libc, backend } = loadLibc();
  const bound: BoundLibrary[] = [];
  // A required library that cannot be loaded stays an error, naming the file and what is wrong with it
  const unloadable = (lib: DocaLibraryName, reason: string) =>
    new Error(
      `cannot load libdoca_${lib} from ${found.files[lib]}: ${reason}. doca-ts needs libdoca_common, libdoca_dma and ` +
        "libdoca_comch: reinstall DOCA for this machine, or set DOCA_LIB_DIR to a folder holding them.",
    );
  const required = (lib: DocaLibraryName): BoundLibrary => {
    try {
      return bindFile(backend, found.files[lib], lib);
    } catch (error) {
      for (const b of bound) b.close();
      throw error instanceof UnloadableLibrary ? unloadable(lib, error.message) : error;
    }
  };
  // Checked before anything is opened: the RTLD_GLOBAL open below would crash on a truncated libdoca_common too
  const commonProblem = unloadableReason(found.files.common);
  if (commonProblem) throw unloadable("common", commonProblem);
  // Runtimes dlopen with RTLD_LOCAL; a libdoca_dma/comch that relies on libdoca_common's symbols without linking to
  // it would then fail to load. Opening libdoca_common RTLD_GLOBAL first makes its symbols visible to the others
  // (harmless for NVIDIA's libraries, which link properly). The handle stays open for the process.
  globalDlopen(found.files.common);
  const fns: Record<string, NativeFn | undefined> = {};
  const raw: Record<string, NativeFn | undefined> = {};
  const resolved: Record<string, string> = {};
  const missing: string[] = [];
  for (const lib of ["common", "dma", "comch"] as const) {
    const b = required(lib);
    bound.push(b);
    // Descriptors, not values: a loader may hand out accessors that bind a function at its first use (Deno).
    Object.defineProperties(fns, Object.getOwnPropertyDescriptors(b.fns));
    Object.defineProperties(raw, Object.getOwnPropertyDescriptors(b.raw));
    Object.assign(resolved, b.resolved);
    missing.push(...b.missing.map((name) => `${name} (${found.files[lib]})`));
  }
  // libdoca_rdma and the accelerators (_compress, _sha, _erasure_coding, _aes_gcm) are optional (a DOCA without them,
  // or a 2.7 build, still runs DMA and Comch): their symbols stay undefined when the library is absent, or present
  // but not loadable (recorded in optionalUnloadable), and the wrappers say so (requireFns).
  const optionalFiles: Partial<Record<OptionalDocaLibrary, string>> = {};
  const optionalUnloadable: DocaLibraryInfo["optionalUnloadable"] = [];
  for (const lib of OPTIONAL_DOCA_LIBRARIES) {
    const file = findOptionalLibrary(found.dir, lib);
    if (!file) continue;
    let b: BoundLibrary;
    try {
      b = bindFile(backend, file, lib);
    } catch (error) {
      if (!(error instanceof UnloadableLibrary)) throw error;
      optionalUnloadable.push({ library: lib, path: file, reason: error.message });
      continue;
    }
    optionalFiles[lib] = file;
    bound.push(b);
    Object.defineProperties(fns, Object.getOwnPropertyDescriptors(b.fns));
    Object.defineProperties(raw, Object.getOwnPropertyDescriptors(b.raw));
    Object.assign(resolved, b.resolved);
    missing.push(...b.missing.map((name) => `${name} (${file})`));
  }
  if (missing.length) {
    for (const b of bound) b.close();
    throw new Error(
      `DOCA in ${found.dir} lacks required functions: ${missing.join(", ")}. doca-ts needs DOCA 2.7 or later ` +
        "(progress engine, tasks and doca_comch).",
    );
  }
  const scratchAddress = mapPages(Scratch.SIZE);
  const scratch = new Scratch(
    scratchAddress,
    backend.view(scratchAddress, Scratch.SIZE),
    mapPages,
    (address, length) => libc.munmap(address, length),
    backend.view,
    backend.native,
  );
  const typed = fns as unknown as DocaFns;
  const str = (address: number) => (address ? backend.cstring(address) : "");
  // Presence from `resolved`, never from reading fns: a loader may bind a function at its first read (Deno)
  const present = (name: string) => Object.hasOwn(resolved, name);
  const info: DocaLibraryInfo = {
    dir: found.dir,
    files: { ...found.files, ...optionalFiles },
    version: str(typed.doca_version_runtime()),
    isSoftwareDevice: present("doca_sim_live_objects"),
    runtime: currentRuntime(),
    aliasesUsed: Object.fromEntries(Object.entries(resolved).filter(([k, v]) => k !== v)),
    optionalMissing: Object.keys(DOCA_SYMBOLS).filter((k) => !present(k)),
    optionalUnloadable,
  };
  setErrorDescriber((code) => ({
    name: str(typed.doca_error_get_name(code)) || fallbackErrorName(code),
    description: str(typed.doca_error_get_descr(code)),
  }));
  return {
    fns: typed,
    raw: raw as unknown as DocaRawFns,
    has: present,
    libc,
    backend,
    scratch,
    info,
  };
}

/** Loads DOCA once (lazy singleton). A later call with a different libDir than the first is an error. */
export function loadDoca(opts: { libDir?: string } = {}): DocaLibraryInfo {
  if (state) {
    if (opts.libDir && opts.libDir !== state.info.dir) {
      throw new Error(`DOCA is already loaded from ${state.info.dir}; cannot switch to ${opts.libDir} in one process`);
    }
    return state.info;
  }
  state = bindAll(opts.libDir);
  return state.info;
}

/** The loaded DOCA for the wrappers (loads with defaults on first use). */
export function doca(): Doca {
  return state ?? (loadDoca(), state!);
}

/** The functions of `names` with `undefined` ruled out. */
export type PresentFns<K extends keyof DocaFns> = { [P in K]: NonNullable<DocaFns[P]> };

/**
 * Optional functions a feature cannot do without (the Comch fast path, say): returns them typed as present, or
 * throws DocaError NOT_SUPPORTED naming the first one this DOCA lacks.
 */
export function requireFns<K extends keyof DocaFns>(...names: K[]): DocaFns & PresentFns<K> {
  const { fns, info } = doca();
  for (const name of names) {
    if (fns[name]) continue;
    // A function of an optional library that is present but could not be loaded: say which file and why
    const lib = (DOCA_SYMBOLS as Record<string, { lib: string }>)[name as string]?.lib;
    const unloadable = info.optionalUnloadable.find((u) => u.library === lib);
    throw new DocaError(
      DocaErrorCode.NOT_SUPPORTED,
      name,
      unloadable ? `libdoca_${lib} (${unloadable.path}) could not be loaded: ${unloadable.reason}` : "this DOCA does not export it",
    );
  }
  return fns as DocaFns & PresentFns<K>;
}

/**
 * Why an optional library's functions are missing, in words: "this DOCA has no libdoca_sha", or, when the file is
 * there but could not be loaded, which file and why.
 */
export function missingLibraryReason(library: OptionalDocaLibrary): string {
  const unloadable = doca().info.optionalUnloadable.find((u) => u.library === library);
  return unloadable
    ? `libdoca_${library} (${unloadable.path}) could not be loaded: ${unloadable.reason}`
    : `this DOCA has no libdoca_${library}`;
}

/** Live DOCA objects per the software device (doca_sim_live_objects), or undefined on real DOCA. */
export function liveObjects(): number | undefined {
  const live = doca().fns.doca_sim_live_objects;
  return live ? live() : undefined;
}

/** One-line software-device summary (doca_sim_describe), or undefined on real DOCA. */
export function describeDevice(): string | undefined {
  const d = doca();
  const describe = d.fns.doca_sim_describe;
  return describe ? d.backend.cstring(describe()) : undefined;
}
