/**
 * Gathers what `doctor` reports: where DOCA was looked for and found, what it is, which names resolved how, the
 * devices, the side, how remote DMA works here, and self-tests, each with its time; every problem with a fix.
 * Each step catches its own failure so one broken piece never hides the others.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import process from "node:process";
import { performance } from "node:perf_hooks";
import { clearTimeout, setTimeout } from "node:timers";
import { type CandidateReport, probeCandidates } from "../../ffi/load/discover.ts";
import { DOCA_SYMBOLS } from "../../ffi/native/symbols.ts";
import { doca, loadDoca } from "../../ffi/native/library.ts";
import { probeProcessVmReadv, probeProcMem, type ProbeResult } from "../../ffi/native/probe.ts";
import {
  Access,
  AesGcm,
  type AesGcmCaps,
  BufInventory,
  Compress,
  type CompressCaps,
  Device,
  Dma,
  ErasureCoding,
  type ErasureCodingCaps,
  Mmap,
  NativeMemory,
  ProgressEngine,
  Sha,
  type ShaCaps,
} from "../../mod.ts";
import { type DeviceListing, listDevicesWithReps } from "../devices.ts";
import { runComchClient } from "../comch-client.ts";
import { readSoname } from "./elf.ts";
import {
  softwareDeviceFolder,
  softwareDeviceFolderNote,
  softwareDeviceFolderProblem,
  softwareDeviceFolderRefusal,
} from "../common/environment.ts";

export interface Problem {
  problem: string;
  fix: string;
}

export interface TimedResult {
  ok: boolean;
  /** How long it took, in seconds (tasks/README.md: every duration in --json is in seconds) */
  seconds: number;
  error?: string;
}

export interface DoctorReport {
  runtime: { name: string; version: string; arch: string; platform: string };
  libraries: {
    seconds: number;
    /** builtNow: the software device was built into this folder by this very run (it did not exist when probed). */
    candidates: (CandidateReport & { builtNow?: boolean })[];
    dir?: string;
    files?: { lib: string; path: string; realPath: string; soname?: string }[];
    version?: string;
    isSoftwareDevice?: boolean;
    /** The software device's Comch folder (DOCA_SIM_DIR or its default) and why the device would refuse it. */
    softwareDeviceFolder?: { path: string; note: string; problem?: string };
    error?: string;
  };
  symbols?: {
    /** Functions with more than one spelling, and the one this DOCA exports (undefined: none). */
    renamed: { name: string; resolvedAs?: string }[];
    aliasesUsed: Record<string, string>;
    optionalMissing: string[];
    /** Optional libraries present but not loadable (treated as absent), with what is wrong with each. */
    optionalUnloadable: { library: string; path: string; reason: string }[];
  };
  devices: { seconds: number; list: DeviceListing[]; error?: string };
  /** Compress, SHA, AES-GCM and erasure coding on the first device (absent: no device); why kinds are missing, where
   * the device says. */
  accelerators?: {
    device: string;
    compress: CompressCaps;
    sha: ShaCaps;
    aesGcm: AesGcmCaps & { missingReason?: string };
    erasureCoding: ErasureCodingCaps;
    error?: string;
  };
  side: { side: "host" | "dpu" | "unknown"; evidence: string[] };
  remoteDma: {
    mechanism: string;
    ptraceScope?: number;
    capSysPtrace?: boolean;
    processVmReadv?: ProbeResult;
    procPidMem?: ProbeResult;
  };
  selfTests: { localDma?: TimedResult & { bytes: number }; comch?: TimedResult & { peer: string; answer?: string } };
  problems: Problem[];
}

export interface DoctorOptions {
  /** Comch server name for a round trip (the other side runs `comch-server -s NAME`). */
  peer?: string;
  /** Device for the self-tests (default: the first). */
  pciAddr?: string;
  timeoutMs?: number;
}

function runtimeInfo(): DoctorReport["runtime"] {
  const g = globalThis as { Deno?: { version: { deno: string } }; Bun?: { version: string } };
  const name = g.Deno ? "deno" : g.Bun ? "bun" : "node";
  const version = g.Deno?.version.deno ?? g.Bun?.version ?? process.versions.node;
  return { name, version, arch: process.arch, platform: process.platform };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function readNumber(path: string): number | undefined {
  try {
    return Number(readFileSync(path, "utf8").trim());
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** CAP_SYS_PTRACE (bit 19) in this process's effective capabilities. */
function hasCapSysPtrace(): boolean | undefined {
  const status = readText("/proc/self/status");
  const hex = status?.match(/^CapEff:\s*([0-9a-f]+)/m)?.[1];
  return hex === undefined ? undefined : (BigInt(`0x${hex}`) & (1n << 19n)) !== 0n;
}

function libraries(report: DoctorReport): void {
  const started = performance.now();
  const lib = report.libraries;
  lib.candidates = probeCandidates();
  for (const c of lib.candidates.filter((c) => c.untrusted)) {
    const reason = c.trust.find((t) => !t.trusted)?.reason ?? c.rejected;
    report.problems.push({
      problem: `DOCA in ${c.dir} [${c.origin}] is not loaded: ${reason}`,
      fix: "make the folder, every folder above it and the libraries owned by you or root and writable by nobody " +
        "else (the message names the component), or set DOCA_LIB_DIR to a folder that is",
    });
  }
  try {
    const info = loadDoca();
    // On first use from the package the software device is built into the user cache by loadDoca itself: the
    // folder probed a moment ago as missing is the one used, reported as built now rather than as rejected
    if (lib.candidates.some((c) => c.dir === info.dir && c.rejected)) {
      lib.candidates = probeCandidates();
      for (const c of lib.candidates) if (c.dir === info.dir && !c.rejected) Object.assign(c, { builtNow: true });
    }
    lib.dir = info.dir;
    lib.version = info.version;
    lib.isSoftwareDevice = info.isSoftwareDevice;
    if (info.isSoftwareDevice) softwareDeviceFolderCheck(report);
    lib.files = Object.entries(info.files).map(([name, path]) => ({
      lib: `libdoca_${name}`,
      path,
      realPath: realpathSync(path),
      soname: readSoname(path),
    }));
    const d = doca();
    const renamed = Object.entries(DOCA_SYMBOLS).filter(([, def]) => "aliases" in def && def.aliases);
    report.symbols = {
      renamed: renamed.map(([name]) => ({
        name,
        resolvedAs: d.has(name as keyof typeof DOCA_SYMBOLS) ? info.aliasesUsed[name] ?? name : undefined,
      })),
      aliasesUsed: info.aliasesUsed,
      optionalMissing: info.optionalMissing,
      optionalUnloadable: info.optionalUnloadable.map((u) => ({ ...u, library: `libdoca_${u.library}` })),
    };
    for (const u of report.symbols.optionalUnloadable) {
      report.problems.push({
        problem: `${u.library} (${u.path}) is present but cannot be loaded: ${u.reason}; its functions are unavailable ` +
          "(DMA, Comch and the other libraries work)",
        fix: `replace ${u.path} with a working copy from the same DOCA (for the software device: deno task sim:build), ` +
          "or remove it",
      });
    }
  } catch (e) {
    lib.error = message(e);
    const installed = existsSync("/opt/mellanox/doca");
    report.problems.push({
      problem: `DOCA could not be loaded: ${lib.error.split("\n")[0]}`,
      fix: installed
        ? "DOCA is installed under /opt/mellanox/doca but was rejected (see the candidates): install the doca-sdk " +
          "libraries of DOCA 2.7 or later for this architecture, or set DOCA_LIB_DIR to the folder holding " +
          "libdoca_common/dma/comch"
        : "install DOCA (2.7 or later), set DOCA_LIB_DIR to the folder holding libdoca_common/dma/comch, or let " +
          "doca-ts build its software device (needs a C compiler: apt-get install gcc libc6-dev)",
    });
  }
  lib.seconds = (performance.now() - started) / 1000;
}

/** The folder the software device keeps Comch in, checked by the device's own rules (a task would fail on it). */
function softwareDeviceFolderCheck(report: DoctorReport): void {
  const problem = softwareDeviceFolderProblem();
  report.libraries.softwareDeviceFolder = { path: softwareDeviceFolder(), note: softwareDeviceFolderNote(), problem };
  if (problem === undefined) return;
  report.problems.push({
    problem: `${softwareDeviceFolderRefusal()!} (Comch, which keeps its sockets there, fails)`,
    fix: process.env.DOCA_SIM_DIR
      ? `point DOCA_SIM_DIR at a folder of yours that only you can write in (e.g. DOCA_SIM_DIR=$HOME/.doca-sim; a ` +
        `missing one is created with mode 0700), or fix this one (chmod 700, owned by you), on both sides`
      : `set DOCA_SIM_DIR to a folder of yours that only you can write in (a missing one is created with mode ` +
        `0700), or fix this one (chmod 700, owned by you), on both sides`,
  });
}

function devices(report: DoctorReport): void {
  const started = performance.now();
  try {
    report.devices.list = listDevicesWithReps();
    if (report.devices.list.length === 0) {
      report.problems.push({
        problem: "DOCA lists no devices",
        fix: report.libraries.isSoftwareDevice
          ? "check DOCA_SIM_CONFIG (the software device's device list) and DOCA_SIM_SIDE"
          : "check that the mlx5 driver is loaded (`mst status`, `ibv_devices`) and that this user may open " +
            "/dev/infiniband/* (run as root or add the user to the rdma group)",
      });
    } else if (!report.devices.list.some((d) => d.caps.dmaMemcpy)) {
      report.problems.push({
        problem: "no device supports DMA memcpy",
        fix: "on a BlueField, use the DPU's own function (e.g. 03:00.0); on the host, a PF of the BlueField",
      });
    }
    for (const d of report.devices.list.filter((d) => d.error)) {
      report.problems.push({ problem: `device ${d.pciAddr}: ${d.error}`, fix: "run as a user that may open the device" });
    }
  } catch (e) {
    report.devices.error = message(e);
  }
  report.devices.seconds = (performance.now() - started) / 1000;
}

function side(report: DoctorReport): void {
  const evidence: string[] = [];
  let side: DoctorReport["side"]["side"] = "unknown";
  if (report.libraries.isSoftwareDevice) {
    side = process.env.DOCA_SIM_SIDE === "dpu" ? "dpu" : "host";
    evidence.push(`software device: DOCA_SIM_SIDE=${process.env.DOCA_SIM_SIDE ?? "(unset: host)"}`);
  } else {
    const model = readText("/sys/firmware/devicetree/base/model") ?? readText("/sys/class/dmi/id/product_name");
    if (model) evidence.push(`machine: ${model.replace(/\0/g, "")}`);
    if (existsSync("/etc/mlnx-release")) evidence.push(`/etc/mlnx-release: ${readText("/etc/mlnx-release")}`);
    const bluefield = /bluefield/i.test(model ?? "") || existsSync("/etc/mlnx-release");
    if (process.arch === "arm64" && bluefield) side = "dpu";
    else if (report.libraries.version) side = "host";
  }
  const servers = report.devices.list.filter((d) => d.caps.comchServer).length;
  const clients = report.devices.list.filter((d) => d.caps.comchClient).length;
  if (servers || clients) {
    evidence.push(`devices: ${servers} Comch server-capable (DPU side), ${clients} client-capable (host side)`);
    if (side === "unknown") side = servers ? "dpu" : "host";
  }
  report.side = { side, evidence };
}

function remoteDma(report: DoctorReport): void {
  const r = report.remoteDma;
  r.ptraceScope = readNumber("/proc/sys/kernel/yama/ptrace_scope");
  r.capSysPtrace = hasCapSysPtrace();
  if (!report.libraries.version) {
    r.mechanism = "unknown (DOCA not loaded)";
    return;
  }
  if (!report.libraries.isSoftwareDevice) {
    r.mechanism = "hardware DMA over PCIe (the BlueField's DMA engine; no ptrace involved)";
    return;
  }
  r.processVmReadv = probeProcessVmReadv();
  r.procPidMem = probeProcMem();
  r.mechanism = r.processVmReadv.ok
    ? "software device: process_vm_readv/writev into the peer process (needs ptrace access to it)"
    : r.procPidMem.ok
    ? "software device: /proc/<pid>/mem of the peer process (process_vm_* missing; same ptrace check)"
    : "none: cross-process DMA cannot work here";
  if (!r.processVmReadv.ok && !r.procPidMem.ok) {
    report.problems.push({
      problem: `neither process_vm_readv (${r.processVmReadv.error}) nor /proc/self/mem (${r.procPidMem.error}) works`,
      fix: "run on a Linux kernel (not an emulator or sandbox that hides these); local DMA still works",
    });
  }
  if ((r.ptraceScope ?? 0) >= 2 && !r.capSysPtrace) {
    report.problems.push({
      problem: `Yama ptrace_scope=${r.ptraceScope}: the DPU-side process may not read the host-side process's memory`,
      fix: "sysctl -w kernel.yama.ptrace_scope=1 (the software device lifts scope 1 itself), or run the DPU side " +
        "with CAP_SYS_PTRACE (scope 3 forbids it until reboot)",
    });
  }
}

async function localDma(report: DoctorReport, opts: DoctorOptions): Promise<void> {
  const device = opts.pciAddr ?? report.devices.list.find((d) => d.caps.dmaMemcpy)?.pciAddr;
  if (!device) return;
  const bytes = Math.min(1 << 20, report.devices.list.find((d) => d.pciAddr === device)?.caps.dmaMaxBufSize || 1 << 20);
  const started = performance.now();
  try {
    using dev = Device.open(device);
    using pe = new ProgressEngine();
    using src = NativeMemory.alloc(bytes), dst = NativeMemory.alloc(bytes);
    for (let i = 0; i < bytes; i++) src.bytes[i] = (i * 31 + 7) & 255;
    using from = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using to = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using inv = new BufInventory(2);
    using dma = new Dma(dev, pe);
    const timeoutMs = opts.timeoutMs ?? 10_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no completion within ${timeoutMs} ms`)), timeoutMs);
    });
    await Promise.race([dma.memcpy(inv.bufByData(from, src.address, bytes), inv.bufByAddr(to, dst.address, bytes)), late])
      .finally(() => clearTimeout(timer));
    const same = dst.bytes.every((b, i) => b === ((i * 31 + 7) & 255));
    report.selfTests.localDma = { ok: same, seconds: (performance.now() - started) / 1000, bytes, ...(same ? {} : { error: "bytes differ" }) };
  } catch (e) {
    report.selfTests.localDma = { ok: false, seconds: (performance.now() - started) / 1000, bytes, error: message(e) };
  }
  if (!report.selfTests.localDma.ok) {
    report.problems.push({
      problem: `local DMA self-test on ${device} failed: ${report.selfTests.localDma.error}`,
      fix: "run `deno task dma-local-copy -p " + device + "` for details; on real DOCA check the device's DMA " +
        "capability and hugepages/memory locking limits (ulimit -l)",
    });
  }
}

async function comch(report: DoctorReport, opts: DoctorOptions): Promise<void> {
  if (!opts.peer) return;
  const started = performance.now();
  try {
    const [answer] = await runComchClient({
      pciAddr: opts.pciAddr,
      name: opts.peer,
      text: "doca-ts doctor",
      timeoutMs: opts.timeoutMs ?? 10_000,
    });
    report.selfTests.comch = { ok: true, seconds: (performance.now() - started) / 1000, peer: opts.peer, answer };
  } catch (e) {
    report.selfTests.comch = { ok: false, seconds: (performance.now() - started) / 1000, peer: opts.peer, error: message(e) };
    report.problems.push({
      problem: `Comch round trip with "${opts.peer}" failed: ${message(e)}`,
      fix: `start the server on the DPU side first: deno task comch-server -s "${opts.peer}" -r <host function's ` +
        "representor PCI>; on the software device both sides need the same DOCA_SIM_DIR",
    });
  }
}

/** Accelerator capabilities of the first device; a backing library the software device lacks is a problem. */
function accelerators(report: DoctorReport): void {
  const first = report.devices.list[0];
  if (!first) return;
  try {
    using dev = Device.open(first.pciAddr);
    const compress = Compress.caps(dev), sha = Sha.caps(dev), erasureCoding = ErasureCoding.caps(dev);
    const aesGcmMissing = AesGcm.unavailableReason();
    const aesGcm = { ...AesGcm.caps(dev), ...(aesGcmMissing ? { missingReason: aesGcmMissing } : {}) };
    report.accelerators = { device: first.pciAddr, compress, sha, aesGcm, erasureCoding };
    // erasure coding runs on the device's own GF(2^8) code: no backing library to miss
    const reasons = [["DOCA Compress", compress.missingReason], ["DOCA SHA", sha.missingReason], ["DOCA AES-GCM", aesGcmMissing]] as const;
    for (const [what, reason] of reasons) {
      // "this DOCA has no libdoca_…" is a DOCA without the library: nothing doctor could fix
      if (!reason || !report.libraries.isSoftwareDevice) continue;
      // Only a library that is there but lacks what backs it is a problem to fix (it names the Debian package); a
      // DOCA without the library (the 2.7 flavour, an install without it) is what it is.
      const pkg = /Debian(?:\/Ubuntu)? package ([\w.+-]+)/.exec(reason)?.[1];
      if (!pkg) continue;
      report.problems.push({
        problem: `${what}: ${reason}`,
        fix: `apt-get install ${pkg} (the software device loads it at run time; no rebuild needed)`,
      });
    }
  } catch (e) {
    report.accelerators = undefined;
    report.devices.error ??= `accelerator capabilities: ${message(e)}`;
  }
}

/**
 * Runs every check in order. `onDone` hears each section's name once its check is done (with the report so far),
 * so a caller can print it at once; "problems" is the caller's to print at the end.
 */
export async function runDoctor(
  opts: DoctorOptions = {},
  onDone: (
    section: "runtime" | "libraries" | "devices" | "accelerators" | "side" | "remoteDma" | "localDma" | "comch",
    report: DoctorReport,
  ) => void = () => {},
): Promise<DoctorReport> {
  const report: DoctorReport = {
    runtime: runtimeInfo(),
    libraries: { seconds: 0, candidates: [] },
    devices: { seconds: 0, list: [] },
    side: { side: "unknown", evidence: [] },
    remoteDma: { mechanism: "" },
    selfTests: {},
    problems: [],
  };
  onDone("runtime", report);
  libraries(report);
  onDone("libraries", report);
  if (report.libraries.version) devices(report);
  onDone("devices", report);
  if (report.libraries.version) accelerators(report);
  onDone("accelerators", report);
  side(report);
  onDone("side", report);
  remoteDma(report);
  onDone("remoteDma", report);
  if (report.libraries.version) {
    await localDma(report, opts);
    onDone("localDma", report);
    await comch(report, opts);
    onDone("comch", report);
  }
  return report;
}
