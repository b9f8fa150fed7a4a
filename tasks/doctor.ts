#!/usr/bin/env -S deno run --allow-ffi --allow-env --allow-read
/**
 * `deno task doctor`: what doca-ts sees on this machine, for a user setting it up and for bug reports. Prints a
 * readable report (or one JSON document with --json) and exits 1 when it found a problem.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { isMain, print, runMain } from "./common/main.ts";
import { type DoctorReport, runDoctor } from "./doctor/report.ts";

const HELP = `Usage: doctor [--json] [--peer NAME] [-p PCI] [--timeout SECONDS]

Reports which DOCA libraries were found where (every candidate folder and why it was rejected), their version and
sonames, which renamed functions resolved to which spelling and which optional ones are missing, the devices and
representors with their capabilities, the side (host or DPU) as detected, how cross-process DMA works here
(hardware DMA, or the software device's process_vm_* / /proc/<pid>/mem and the Yama ptrace_scope), then runs a
local DMA self-test and, with --peer NAME, a Comch round trip with the server NAME (the other side runs
\`deno task comch-server -s NAME -r REP_PCI\`). Each step shows its time; each problem comes with a fix to try.
  --json       one JSON document on stdout
  --peer NAME  Comch server to exchange one message with
  -p PCI       device for the self-tests (default: the first with DMA)
  --timeout S  seconds to wait for DMA completion and the Comch peer (default 10)
Exit status: 0 when no problem was found, 1 otherwise.`;

const ms = (n: number) => `${n.toFixed(1)} ms`;

export function formatReport(r: DoctorReport): string {
  const out: string[] = [];
  out.push(`runtime   ${r.runtime.name} ${r.runtime.version} (${r.runtime.platform}/${r.runtime.arch})`);
  out.push(`libraries (${ms(r.libraries.ms)})`);
  for (const c of r.libraries.candidates) {
    out.push(`  ${c.rejected ? "rejected" : "used    "}  ${c.dir}  [${c.origin}]${c.rejected ? `: ${c.rejected}` : ""}`);
  }
  if (r.libraries.error) out.push(`  error: ${r.libraries.error.split("\n")[0]}`);
  if (r.libraries.version) {
    out.push(`  DOCA ${r.libraries.version}${r.libraries.isSoftwareDevice ? " (doca-ts software device)" : ""}`);
    for (const f of r.libraries.files ?? []) out.push(`  ${f.lib}  ${f.realPath}  soname ${f.soname ?? "?"}`);
  }
  if (r.symbols) {
    for (const s of r.symbols.renamed) out.push(`  ${s.name} -> ${s.resolvedAs ?? "MISSING"}`);
    out.push(`  optional functions missing: ${r.symbols.optionalMissing.join(", ") || "none"}`);
  }
  out.push(`devices (${ms(r.devices.ms)})`);
  for (const d of r.devices.list) {
    const caps = [
      d.caps.dmaMemcpy ? `dma max ${d.caps.dmaMaxBufSize} B` : "",
      d.caps.comchServer ? "comch-server" : "",
      d.caps.comchClient ? "comch-client" : "",
      d.caps.comchMaxMsgSize ? `msg ${d.caps.comchMaxMsgSize} B` : "",
      d.caps.rdma?.tasks.length ? `rdma ${d.caps.rdma.tasks.join("/")} (${d.caps.rdma.transports.join("+") || "?"}, msg ${d.caps.rdma.maxMessageSize} B)` : "",
    ].filter(Boolean).join(", ");
    out.push(`  ${d.pciAddr} ${d.ibdevName || "-"} ${d.ifaceName || "-"}: ${caps || "no capabilities"}`);
    for (const rep of d.representors) out.push(`    representor ${rep.pciAddr}${rep.vuid ? ` [${rep.vuid}]` : ""}`);
  }
  if (r.devices.error) out.push(`  error: ${r.devices.error}`);
  out.push(`side      ${r.side.side} (${r.side.evidence.join("; ") || "no evidence"})`);
  const dma = r.remoteDma;
  out.push(`remote DMA ${dma.mechanism}`);
  out.push(`  Yama ptrace_scope ${dma.ptraceScope ?? "absent"}, CAP_SYS_PTRACE ${dma.capSysPtrace ? "yes" : "no"}`);
  if (dma.processVmReadv) out.push(`  process_vm_readv ${dma.processVmReadv.ok ? "ok" : dma.processVmReadv.error}`);
  if (dma.procPidMem) out.push(`  /proc/<pid>/mem ${dma.procPidMem.ok ? "ok" : dma.procPidMem.error}`);
  const t = r.selfTests;
  if (t.localDma) {
    out.push(`self-test local DMA ${t.localDma.bytes} B: ${t.localDma.ok ? "ok" : `FAILED ${t.localDma.error}`} (${ms(t.localDma.ms)})`);
  }
  if (t.comch) {
    out.push(`self-test Comch with "${t.comch.peer}": ${t.comch.ok ? `ok, answered "${t.comch.answer}"` : `FAILED ${t.comch.error}`} (${ms(t.comch.ms)})`);
  }
  if (r.problems.length === 0) out.push("no problems found");
  for (const p of r.problems) out.push(`PROBLEM ${p.problem}\n  fix: ${p.fix}`);
  return out.join("\n");
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: "boolean", default: false },
      peer: { type: "string" },
      "pci-addr": { type: "string", short: "p" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    print(HELP);
    return 0;
  }
  const timeout = values.timeout === undefined ? 10 : Number(values.timeout);
  if (!(timeout > 0)) throw Object.assign(new Error(`--timeout must be a positive number of seconds`), { name: "UsageError" });
  const report = await runDoctor({ peer: values.peer, pciAddr: values["pci-addr"], timeoutMs: timeout * 1000 });
  print(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.problems.length ? 1 : 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
