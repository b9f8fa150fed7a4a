#!/usr/bin/env -S deno run --no-prompt --allow-all
/**
 * Erasure coding and AES-GCM throughput on the software device: doca-ts (this runtime) against a C driver on the
 * device (benchmarks/accel-ea-driver.c) and against the same math called directly from C (a table GF(2^8) multiply;
 * OpenSSL's EVP AES-256-GCM), for 64 KiB and 4 KiB payloads with BATCH tasks in flight. Prints a table.
 *   deno run --allow-all benchmarks/accel-ea.ts [--seconds S] [--batch N] [--json]
 * EC: create tasks, 8 data + 2 redundancy blocks (Cauchy), payload = the 8 data blocks. AES: encrypt, 256-bit key,
 * 16-byte tag, no AAD. A short run on a loaded machine is noisy: compare columns of one run, not runs.
 */
import { spawnSync } from "node:child_process";
import process from "node:process";
import { parseArgs } from "node:util";
import { Access, AesGcm, type Buf, BufInventory, ErasureCoding, Mmap, NativeMemory, ProgressEngine } from "../mod.ts";
import { openDeviceOf } from "../tasks/common/device.ts";
import { buildCDriver } from "./c-driver.ts";
import { currentRuntime } from "../ffi/load/runtime.ts";
import { CellClock } from "./accel-cell.ts";

/** The flags; a bad one is one line naming it and exit 2 (it was Deno's uncaught TypeError with a stack trace). */
function flags() {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: { seconds: { type: "string" }, batch: { type: "string" }, json: { type: "boolean" }, driver: { type: "string" }, "no-direct": { type: "boolean" }, help: { type: "boolean", short: "h" } },
    });
  } catch (error) {
    console.error(`bench:accel-ea: ${(error as Error).message.split(/(?<=\.)\s|\n/)[0].replace(/\.$/, "")} (see --help)`);
    process.exit(2);
  }
}
const { values } = flags();
if (values.help) {
  console.log(`Usage: accel-ea.ts [--seconds S (default 1)] [--batch N (default 32)] [--json] [--driver PATH] [--no-direct]
  --driver PATH  a built accel-ea-driver (default: build it)
  --no-direct    skip the cells of the math called directly from C (bench:accel measures them once per round)`);
  process.exit(0);
}
const SECONDS = Number(values.seconds ?? 1);
const BATCH = Number(values.batch ?? 32);
if (!(SECONDS > 0 && SECONDS <= 30) || !Number.isInteger(BATCH) || BATCH < 1 || BATCH > 256) {
  console.error("--seconds must be in (0, 30], --batch 1 to 256");
  process.exit(2);
}
const N = 8, M = 2;

/** A cell's rates: per second of wall time, and MiB per CPU second of the process (all threads; see accel-rows.ts). */
interface Cell { mibps: number; ops: number; cpuMibps: number }

let driverPath: string | undefined;

function c(kind: "ec" | "aes", mode: "device" | "direct", payload: number): Cell {
  // built once per process (or given: accel-rows.ts builds it once per run), not once per cell
  driverPath ??= values.driver ?? buildCDriver("accel-ea-driver", ["doca_erasure_coding", "doca_aes_gcm", "doca_common"]);
  const r = spawnSync(driverPath, [kind, mode, String(payload), String(BATCH), String(SECONDS)], { encoding: "utf8", timeout: 60_000 + SECONDS * 2000 });
  const m = /bytes=(\d+) seconds=([\d.]+) ops=(\d+) cpu=([\d.]+)/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`accel-ea-driver ${kind} ${mode} ${payload}: ${r.error?.message ?? (r.stderr || r.stdout)}`);
  return { mibps: Number(m[1]) / 2 ** 20 / Number(m[2]), ops: Number(m[3]) / Number(m[2]), cpuMibps: Number(m[1]) / 2 ** 20 / Math.max(Number(m[4]), 1e-6) };
}

/**
 * BATCH tasks in flight on prepared Bufs, for SECONDS: each resubmitted as soon as it completed (one Promise per
 * task), or (`batched`) all BATCH submitted as one batch (createBatch / encryptBatch: one Promise per batch), again
 * once the whole batch completed.
 */
async function docaTs(kind: "ec" | "aes", payload: number, batched = false): Promise<Cell> {
  using device = openDeviceOf(undefined);
  using pe = new ProgressEngine();
  const out = kind === "ec" ? (payload / N) * M : payload + 16;
  using memory = NativeMemory.alloc(BATCH * (payload + out));
  memory.bytes.forEach((_, i, a) => (a[i] = (i * 131 + 7) & 0xff));
  using mmap = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [device] });
  using inventory = new BufInventory(2 * BATCH);
  const srcs: Buf[] = [], dsts: Buf[] = [];
  for (let k = 0; k < BATCH; k++) {
    srcs.push(inventory.bufByData(mmap, memory.address + k * payload, payload));
    dsts.push(inventory.bufByAddr(mmap, memory.address + BATCH * payload + k * out, out));
  }
  let submit: (k: number) => Promise<void>;
  let submitAll: () => Promise<void>;
  let close: () => Promise<void>;
  if (kind === "ec") {
    const ec = new ErasureCoding(device, pe, { maxTasks: BATCH });
    const matrix = ec.matrix("cauchy", N, M);
    const pairs = srcs.map((src, k) => [src, dsts[k]] as const);
    submit = (k) => ec.create(matrix, srcs[k], dsts[k]);
    submitAll = () => ec.createBatch(matrix, pairs);
    close = () => ec.close();
  } else {
    const aes = new AesGcm(device, pe, { maxTasks: BATCH });
    const key = aes.key(new Uint8Array(32).fill(1));
    // A benchmark's fixed IVs over synthetic bytes: a real program never reuses an IV under one key.
    const iv = new Uint8Array(12).fill(4);
    const items = srcs.map((src, k) => ({ src, dst: dsts[k], iv: new Uint8Array(12).fill(k) }));
    submit = (k) => aes.encrypt(srcs[k], dsts[k], { key, iv });
    submitAll = () => aes.encryptBatch(items, { key });
    close = () => aes.close();
  }
  // warm-up untimed, then the measured part (accel-cell.ts; the C driver does the same)
  const clock = new CellClock(SECONDS);
  const lane = async (k: number) => {
    do {
      dsts[k].resetData();
      await submit(k);
    } while (clock.tick());
  };
  if (batched) {
    do {
      for (const dst of dsts) dst.resetData();
      await submitAll();
    } while (clock.tick(BATCH));
  } else await Promise.all(Array.from({ length: BATCH }, (_, k) => lane(k)));
  const { ops, seconds, cpu } = clock.result();
  await close();
  return { mibps: (ops * payload) / 2 ** 20 / seconds, ops: ops / seconds, cpuMibps: (ops * payload) / 2 ** 20 / Math.max(cpu, 1e-6) };
}

const rows: { row: string; payload: number; docaTs: Cell; docaTsBatch: Cell; cDevice: Cell; cDirect?: Cell }[] = [];
for (const kind of ["ec", "aes"] as const) {
  for (const payload of [64 * 1024, 4 * 1024]) {
    const row = `${kind === "ec" ? "EC create 8+2" : "AES-256-GCM encrypt"} ${payload / 1024} KiB`;
    // C on the device right after this runtime's cells: their ratio pairs cells measured seconds apart
    const docaTsCell = await docaTs(kind, payload), docaTsBatch = await docaTs(kind, payload, true), cDevice = c(kind, "device", payload);
    rows.push({ row, payload, docaTs: docaTsCell, docaTsBatch, cDevice, cDirect: values["no-direct"] ? undefined : c(kind, "direct", payload) });
  }
}
if (values.json) console.log(JSON.stringify({ runtime: currentRuntime(), seconds: SECONDS, batch: BATCH, rows }));
else {
  const f = (x: Cell | undefined) => (x ? `${x.mibps.toFixed(0).padStart(6)} MiB/s ${(x.ops / 1000).toFixed(1).padStart(6)} k/s` : "-".padStart(21));
  console.log(`accel-ea: ${currentRuntime()}, ${BATCH} in flight, ${SECONDS} s per cell (MiB/s of payload, tasks per second)`);
  console.log(`${"".padEnd(26)} ${"doca-ts".padEnd(24)} ${"doca-ts, batches".padEnd(24)} ${"C on the device".padEnd(24)} ${"C, math directly".padEnd(24)} doca-ts/C (batches/C)`);
  for (const r of rows) {
    const ratio = (x: Cell) => (x.mibps / r.cDevice.mibps).toFixed(2);
    console.log(`${r.row.padEnd(26)} ${f(r.docaTs)}   ${f(r.docaTsBatch)}   ${f(r.cDevice)}   ${f(r.cDirect)}   ${ratio(r.docaTs)}x (${ratio(r.docaTsBatch)}x)`);
  }
}
