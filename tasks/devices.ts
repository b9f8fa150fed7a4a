#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read
/**
 * Lists the DOCA devices this process sees, their representors and capabilities: a table for people (on a TTY or
 * by default), one JSON document with --json for scripts.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { parseSide } from "./common/cli.ts";
import { applySide } from "./common/device.ts";
import { Device, type DeviceInfo, listDevices, loadDoca, type RepInfo } from "../mod.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { formatBytes } from "./common/units.ts";
import { STOPPED_STATUSES } from "./common/interrupt.ts";
import { parseTaskFlags, taskFlags } from "./common/task-flags.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags({}, "json", "side", "version", "help");
const TASK = "devices";

const HELP = `Usage: devices [--json] [--side host|dpu]

Lists every DOCA device of this side (software device: --side, else DOCA_SIM_SIDE, else host) with PCI address,
ibdev and interface names, DMA, Comch and RDMA capabilities (RDMA: transports, max message size, atomics), and the network representors each device exposes (on a DPU:
the host functions it can serve). --json prints {library, devices: [{...info, representors: [...]}]}. No waits.
Exit status 0, 2 for bad flags, ${STOPPED_STATUSES}, 1 otherwise.
Flags: --json, --side host|dpu, --version (versions of doca-ts and DOCA), -h/--help.`;

export interface DeviceListing extends DeviceInfo {
  representors: RepInfo[];
  /** Set when listing representors failed (e.g. the device cannot be opened). */
  error?: string;
}

export function listDevicesWithReps(): DeviceListing[] {
  return listDevices().map((info) => {
    try {
      using device = Device.open(info.pciAddr);
      return { ...info, representors: device.listRepresentors() };
    } catch (e) {
      // A host function has no representors to list: DOCA says NOT_SUPPORTED, which is no error for a listing.
      if ((e as { docaName?: string }).docaName === "DOCA_ERROR_NOT_SUPPORTED") return { ...info, representors: [] };
      return { ...info, representors: [], error: e instanceof Error ? e.message : String(e) };
    }
  });
}

/** RDMA: transports and the largest message, or "-" (no libdoca_rdma, or the device has no RDMA tasks). */
function rdmaColumn(c: DeviceInfo["caps"]): string {
  const r = c.rdma;
  if (!r?.tasks.length) return "-";
  return `${r.transports.join("+") || "yes"} ${formatBytes(r.maxMessageSize)}${r.tasks.includes("atomic_fetch_add") ? " atomics" : ""}`;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd()).join("\n");
}

export function formatListing(devices: DeviceListing[]): string {
  if (devices.length === 0) return "no DOCA devices found";
  const rows = [["PCI", "IBDEV", "IFACE", "DMA", "MAX BUF", "COMCH", "MAX MSG", "RDMA", "REPRESENTORS"]];
  for (const d of devices) {
    const c = d.caps;
    const comch = [c.comchServer ? "server" : "", c.comchClient ? "client" : ""].filter(Boolean).join("+") || "-";
    const reps = d.error ? `(${d.error})` : d.representors.map((r) => `${r.pciAddr}${r.vuid ? ` [${r.vuid}]` : ""}`).join(", ") || "-";
    rows.push([
      d.pciAddr,
      d.ibdevName || "-",
      d.ifaceName || "-",
      c.dmaMemcpy ? "memcpy" : "-",
      c.dmaMemcpy ? formatBytes(c.dmaMaxBufSize) : "-",
      comch,
      c.comchMaxMsgSize ? formatBytes(c.comchMaxMsgSize) : "-", // as doctor and MAX BUF show a size
      rdmaColumn(c),
      reps,
    ]);
  }
  return table(rows);
}

function main(argv: string[]): number {
  const values = parseTaskFlags(argv, FLAGS, HELP, TASK);
  if (values === undefined) return 0;
  applySide(parseSide(values.side, process.env, "host"));
  const library = loadDoca();
  const devices = listDevicesWithReps();
  if (values.json) {
    printJson({ library: { dir: library.dir, version: library.version, softwareDevice: library.isSoftwareDevice }, devices }, 2);
  } else {
    print(`DOCA ${library.version} from ${library.dir}${library.isSoftwareDevice ? " (software device)" : ""}`);
    print(formatListing(devices));
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
