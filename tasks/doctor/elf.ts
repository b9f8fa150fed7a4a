/**
 * Reads a shared library's DT_SONAME straight from its ELF file (64-bit little-endian: x86-64 and aarch64), so
 * `doctor` can report sonames on a DPU that has no binutils. Returns undefined for anything else.
 */
import { readFileSync } from "node:fs";

const PT_LOAD = 1, PT_DYNAMIC = 2, DT_NULL = 0n, DT_STRTAB = 5n, DT_SONAME = 14n;

export function readSoname(path: string): string | undefined {
  let data: Uint8Array;
  try {
    data = readFileSync(path);
  } catch {
    return undefined;
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  // "\x7fELF", ELFCLASS64, ELFDATA2LSB
  if (data.length < 64 || view.getUint32(0) !== 0x7f454c46 || data[4] !== 2 || data[5] !== 1) return undefined;
  const phoff = Number(view.getBigUint64(0x20, true));
  const phentsize = view.getUint16(0x36, true), phnum = view.getUint16(0x38, true);
  const loads: { vaddr: number; offset: number; size: number }[] = [];
  let dynamic: { offset: number; size: number } | undefined;
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 56 > data.length) return undefined;
    const type = view.getUint32(at, true);
    const offset = Number(view.getBigUint64(at + 8, true));
    const vaddr = Number(view.getBigUint64(at + 16, true));
    const size = Number(view.getBigUint64(at + 32, true));
    if (type === PT_LOAD) loads.push({ vaddr, offset, size });
    if (type === PT_DYNAMIC) dynamic = { offset, size };
  }
  if (!dynamic) return undefined;
  let strtab: number | undefined, soname: number | undefined;
  for (let at = dynamic.offset; at + 16 <= dynamic.offset + dynamic.size && at + 16 <= data.length; at += 16) {
    const tag = view.getBigInt64(at, true), value = Number(view.getBigUint64(at + 8, true));
    if (tag === DT_NULL) break;
    if (tag === DT_STRTAB) strtab = value;
    if (tag === DT_SONAME) soname = value;
  }
  if (strtab === undefined || soname === undefined) return undefined;
  const segment = loads.find((l) => strtab! >= l.vaddr && strtab! < l.vaddr + l.size);
  if (!segment) return undefined;
  const start = strtab - segment.vaddr + segment.offset + soname;
  const end = data.indexOf(0, start);
  return end > start ? new TextDecoder().decode(data.subarray(start, end)) : undefined;
}
