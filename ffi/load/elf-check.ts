/**
 * Why a shared library file cannot be loaded into this process, read from its ELF header before dlopen sees it.
 * dlopen refuses a file that is not ELF, but it maps a truncated one as its headers describe and then touches pages
 * past the end of the file: SIGBUS, the whole process gone with no message. So the header, the program headers and
 * every loadable segment are checked against the file's length, and the class and machine against this process.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import process from "node:process";

const PT_LOAD = 1, ET_DYN = 3;
/** e_machine of the architectures Node names in process.arch (others are not checked). */
const MACHINES: Record<string, { machine: number; name: string }> = {
  x64: { machine: 62, name: "x86-64" },
  arm64: { machine: 183, name: "aarch64" },
};
const MACHINE_NAMES: Record<number, string> = { 3: "x86 (32-bit)", 40: "arm (32-bit)", 62: "x86-64", 183: "aarch64", 243: "riscv" };

function readAt(fd: number, length: number, position: number): Uint8Array {
  const buffer = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}

/**
 * Undefined when `path` looks loadable (a 64-bit little-endian ELF shared object for this machine whose segments are
 * all in the file), else the reason in words ("truncated: …", "built for aarch64, …", "not an ELF file").
 * `arch` is process.arch unless a test names another.
 */
export function unloadableReason(path: string, arch: string = process.arch): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    return `cannot be opened (${(error as Error).message})`;
  }
  try {
    const size = fstatSync(fd).size;
    const head = readAt(fd, 64, 0);
    if (head.length < 4 || head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46) {
      return `not an ELF file (${size} bytes that do not start with \\x7fELF)`;
    }
    if (head.length < 64) return `truncated: ${size} bytes, shorter than an ELF header`;
    if (head[4] !== 2) return "a 32-bit ELF file: this process loads 64-bit libraries only";
    if (head[5] !== 1) return "a big-endian ELF file: this process is little-endian";
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const type = view.getUint16(16, true), machine = view.getUint16(18, true);
    const host = MACHINES[arch];
    if (host && machine !== host.machine) {
      return `built for ${MACHINE_NAMES[machine] ?? `ELF machine ${machine}`}, but this process runs on ${host.name}`;
    }
    if (type !== ET_DYN) return `not a shared library (ELF type ${type})`;
    const phoff = Number(view.getBigUint64(0x20, true));
    const phentsize = view.getUint16(0x36, true), phnum = view.getUint16(0x38, true);
    if (phentsize < 56 || phnum === 0) return "not a loadable ELF file (no program headers)";
    const tableEnd = phoff + phentsize * phnum;
    if (tableEnd > size) return `truncated: ${size} bytes, but its program headers end at byte ${tableEnd}`;
    const table = readAt(fd, phentsize * phnum, phoff);
    const ph = new DataView(table.buffer, table.byteOffset, table.byteLength);
    let needed = 0;
    for (let i = 0; i < phnum; i++) {
      const at = i * phentsize;
      if (ph.getUint32(at, true) !== PT_LOAD) continue;
      needed = Math.max(needed, Number(ph.getBigUint64(at + 8, true)) + Number(ph.getBigUint64(at + 32, true)));
    }
    if (needed > size) return `truncated: ${size} bytes, but its loadable segments need ${needed}`;
    return undefined;
  } catch (error) {
    return `cannot be read (${(error as Error).message})`;
  } finally {
    closeSync(fd);
  }
}
