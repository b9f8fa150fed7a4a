#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * `deno task doctor`: what doca-ts sees on this machine, for a user setting it up and for bug reports. Prints a
 * readable report (or one JSON document with --json) and exits 1 when it found a problem.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import { positiveSecondsMs, UsageError } from "./common/cli.ts";
import { parseTaskFlags, taskFlags } from "./common/task-flags.ts";
import process from "node:process";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { formatBytes, formatDuration } from "./common/units.ts";
import { printable } from "../ffi/engine/printable.ts";
import { type DoctorReport, runDoctor } from "./doctor/report.ts";
import { STOPPED_STATUSES } from "./common/interrupt.ts";

const HELP = `Usage: doctor [--json] [--peer NAME] [-p PCI] [--timeout SECONDS]

Reports which DOCA libraries were found where (every candidate folder and why it was rejected, and the trust check
of each folder and library file: owned by you or root, writable by nobody else), their version and sonames, which
renamed functions resolved to which spelling and which optional ones are missing (and any optional library
that is present but cannot be loaded, with why), the software device's Comch
folder (DOCA_SIM_DIR or its default: whether the device will use it), the devices and representors with their
capabilities, the side (host or DPU) as detected, how cross-process DMA works here (hardware DMA, or the software
device's process_vm_* / /proc/<pid>/mem and the Yama ptrace_scope), then runs a local DMA self-test and, with
--peer NAME, a Comch round trip with the server NAME (the other side runs \`deno task comch-server\` serving that
name on the host function's representor). Each step shows its time; each problem comes with a fix to try.
      --json              one JSON document on stdout
      --peer NAME         Comch server to exchange one message with
  -p, --pci-addr PCI      device for the self-tests (default: the first with DMA)
      --timeout SECONDS   seconds to wait for DMA completion and the Comch peer (default 10, at most 86400)
      --version           print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help              print this help and exit
Exit status: 0 when no problem was found, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.`;

const PCI_ADDRESS = /^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$/;


/** The report's sections in the order they are checked (and printed: each as soon as its check is done). */
export const SECTIONS = ["runtime", "libraries", "devices", "accelerators", "side", "remoteDma", "localDma", "comch", "problems"] as const;
export type Section = typeof SECTIONS[number];

/** The lines of one section of the report (none for a check that did not run). */
export function formatSection(r: DoctorReport, section: Section): string[] {
  const out: string[] = [];
  switch (section) {
    case "runtime": {
      out.push(`runtime   ${r.runtime.name} ${r.runtime.version} (${r.runtime.platform}/${r.runtime.arch})`);
      break;
    }
    case "libraries": {
      out.push(`libraries (${formatDuration(r.libraries.seconds)})`);
      for (const c of r.libraries.candidates) {
        out.push(`  ${c.rejected ? "rejected" : "used    "}  ${c.dir}  [${c.origin}]${c.rejected ? `: ${c.rejected}` : c.builtNow ? " (built now)" : ""}`);
        for (const t of c.trust ?? []) out.push(`    trust ${t.trusted ? "ok       " : "REFUSED  "} ${t.trusted ? t.path : t.reason}`);
      }
      if (r.libraries.error) out.push(`  error: ${r.libraries.error.split("\n")[0]}`);
      if (r.libraries.version) {
        out.push(`  DOCA ${r.libraries.version}${r.libraries.isSoftwareDevice ? " (doca-ts software device)" : ""}`);
        for (const f of r.libraries.files ?? []) out.push(`  ${f.lib}  ${f.realPath}  soname ${f.soname ?? "?"}`);
      }
      const folder = r.libraries.softwareDeviceFolder;
      if (folder) out.push(`  Comch folder ${folder.problem ? "REFUSED" : "ok"}: ${folder.note}${folder.problem ? ` (${folder.problem})` : ""}`);
      if (r.symbols) {
        // only the functions this DOCA spells differently (or lacks): a function found under its own name says nothing
        for (const s of r.symbols.renamed) {
          if (s.resolvedAs !== s.name) out.push(`  ${s.name}: ${s.resolvedAs ? `called ${s.resolvedAs} in this DOCA` : "missing in this DOCA"}`);
        }
        for (const u of r.symbols.optionalUnloadable ?? []) out.push(`  ${u.library}  ${u.path}  NOT LOADED: ${u.reason}`);
        out.push(`  optional functions missing: ${r.symbols.optionalMissing.join(", ") || "none"}`);
      }
      break;
    }
    case "devices": {
      out.push(`devices (${formatDuration(r.devices.seconds)})`);
      for (const d of r.devices.list) {
        const caps = [
          d.caps.dmaMemcpy ? `dma max ${formatBytes(d.caps.dmaMaxBufSize)}` : "",
          d.caps.comchServer ? "comch-server" : "",
          d.caps.comchClient ? "comch-client" : "",
          d.caps.comchMaxMsgSize ? `msg ${formatBytes(d.caps.comchMaxMsgSize)}` : "",
          d.caps.rdma?.tasks.length ? `rdma ${d.caps.rdma.tasks.join("/")} (${d.caps.rdma.transports.join("+") || "?"}, msg ${formatBytes(d.caps.rdma.maxMessageSize)})` : "",
        ].filter(Boolean).join(", ");
        out.push(`  ${d.pciAddr} ${d.ibdevName || "-"} ${d.ifaceName || "-"}: ${caps || "no capabilities"}`);
        for (const rep of d.representors) out.push(`    representor ${rep.pciAddr}${rep.vuid ? ` [${rep.vuid}]` : ""}`);
      }
      if (r.devices.error) out.push(`  error: ${r.devices.error}`);
      break;
    }
    case "accelerators": {
      const acc = r.accelerators;
      if (!acc) break;
      const c = acc.compress, s = acc.sha;
      const kinds = [c.compressDeflate && "deflate", c.decompressDeflate && "inflate", c.decompressLz4Stream && "lz4-stream", c.decompressLz4Block && "lz4-block"].filter(Boolean);
      out.push(`accelerators on ${acc.device}`);
      out.push(`  compress ${kinds.join(", ") || "none"}${c.maxBufSize ? ` (max ${formatBytes(c.maxBufSize)})` : ""}${c.missingReason ? `: ${c.missingReason}` : ""}`);
      out.push(`  sha ${s.hash.join(", ") || "none"}${s.partial.length ? ` (partial ${s.partial.join(", ")})` : ""}${s.missingReason ? `: ${s.missingReason}` : ""}`);
      if (acc.aesGcm) {
        const a = acc.aesGcm;
        const kinds = [a.encrypt && "encrypt", a.decrypt && "decrypt"].filter(Boolean);
        out.push(`  aes-gcm ${kinds.join(", ") || "none"}${a.maxBufSize ? ` (max ${formatBytes(a.maxBufSize)})` : ""}${a.missingReason ? `: ${a.missingReason}` : ""}`);
      }
      if (acc.erasureCoding) {
        const e = acc.erasureCoding;
        const kinds = [e.create && "create", e.recover && "recover"].filter(Boolean);
        out.push(`  erasure coding ${kinds.join(", ") || "none"}${e.maxBlockSize ? ` (block max ${formatBytes(e.maxBlockSize)})` : ""}`);
      }
      break;
    }
    case "side": {
      out.push(`side      ${r.side.side} (${r.side.evidence.join("; ") || "no evidence"})`);
      break;
    }
    case "remoteDma": {
      const dma = r.remoteDma;
      out.push(`remote DMA ${dma.mechanism}`);
      out.push(`  Yama ptrace_scope ${dma.ptraceScope ?? "absent"}, CAP_SYS_PTRACE ${dma.capSysPtrace ? "yes" : "no"}`);
      if (dma.processVmReadv) out.push(`  process_vm_readv ${dma.processVmReadv.ok ? "ok" : dma.processVmReadv.error}`);
      if (dma.procPidMem) out.push(`  /proc/<pid>/mem ${dma.procPidMem.ok ? "ok" : dma.procPidMem.error}`);
      break;
    }
    case "localDma": {
      const t = r.selfTests;
      if (t.localDma) {
        out.push(`self-test local DMA ${formatBytes(t.localDma.bytes)}: ${t.localDma.ok ? "ok" : `FAILED ${t.localDma.error}`} (${formatDuration(t.localDma.seconds)})`);
      }
      break;
    }
    case "comch": {
      const t = r.selfTests;
      if (t.comch) {
        out.push(`self-test Comch with "${t.comch.peer}": ${t.comch.ok ? `ok, answered "${printable(t.comch.answer ?? "", 200)}"` : `FAILED ${t.comch.error}`} (${formatDuration(t.comch.seconds)})`);
      }
      break;
    }
    case "problems": {
      if (r.problems.length === 0) out.push("no problems found");
      for (const p of r.problems) out.push(`PROBLEM ${p.problem}\n  fix: ${p.fix}`);
      break;
    }
  }
  return out;
}

export function formatReport(r: DoctorReport): string {
  return SECTIONS.flatMap((section) => formatSection(r, section)).join("\n");
}

/** Every flag this task accepts. */
export const FLAGS = taskFlags(
  { json: { type: "boolean", default: false }, peer: { type: "string" } },
  "pci-addr", "timeout", "version", "help",
);

async function main(argv: string[]): Promise<number> {
  // The same flag handling as every other task: unknown or malformed flags exit 2 with "see --help".
  const values = parseTaskFlags(argv, FLAGS, HELP, "doctor");
  if (values === undefined) return 0;
  const timeoutMs = values.timeout === undefined ? 10_000 : positiveSecondsMs(values.timeout, "--timeout");
  const pciAddr = values["pci-addr"];
  if (pciAddr !== undefined && !PCI_ADDRESS.test(pciAddr)) {
    throw new UsageError(`-p/--pci-addr: ${JSON.stringify(pciAddr)} is not a PCI address like 0000:03:00.1 or 03:00.1`);
  }
  if (values.peer !== undefined && values.peer.length === 0) throw new UsageError("--peer: expected a Comch server name");
  // Each check's lines as soon as it is done: a --peer wait (up to --timeout) or a Ctrl-C no longer hides the rest.
  const report = await runDoctor({ peer: values.peer, pciAddr, timeoutMs }, (section, partial) => {
    if (values.json) return;
    const lines = formatSection(partial, section);
    if (lines.length > 0) print(lines.join("\n"));
    if (section === "localDma" && values.peer) print(`self-test Comch with "${values.peer}": waiting up to ${timeoutMs / 1000} s for it to answer…`);
  });
  if (values.json) printJson(report, 2);
  else print(formatSection(report, "problems").join("\n"));
  return report.problems.length ? 1 : 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
