/**
 * Hostile inputs to the software device itself (issue 9; the trust model is in docs/FAULTS.md):
 *  - forged and replayed export descriptors, planted registries: sim/tests/hostile_exports.c, one scenario per run
 *    (a C program: it forges descriptors byte by byte, SIGKILLs exporters and checks the victims' bytes), and
 *    descriptors forged in TypeScript against the runtime's own process (helpers/faults/hostile-probe.ts forge);
 *  - a runtime folder someone else controls (a symbolic link, writable by others, another owner): the first call that
 *    needs it fails with a DOCA error and the reason is logged, on the runtime running this file;
 *  - bad DOCA_SIM_CONFIG input (a FIFO, trailing bytes, non-JSON numbers, nonsensical sizes) refused at load naming
 *    the problem, and JSON escapes (\uXXXX, surrogate pairs) read correctly, on the runtime running this file.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { FaultCounters, faultSpace, jsonLines, removeSpaces, repoRoot, startHelper } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-hostile");
after(() => {
  removeSpaces();
  counters.print();
});

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

// ------------------------------------------------------------------ forged exports (C level)

const hostileBin = join(repoRoot, "build", "sim", "bin", "hostile_exports");

describe("forged, replayed and self-naming export descriptors never reach a byte outside a live export", () => {
  const scenarios: Record<string, string[]> = {
    never_exported: [
      "ok descriptors naming a process that never exported (fds 0..31, one a planted registry memfd): DOCA_ERROR_NOT_PERMITTED",
      "ok planted registry files in DOCA_SIM_DIR: DOCA_ERROR_NOT_PERMITTED",
      "ok the victim's memory is unchanged",
    ],
    self_code: [
      "ok descriptors naming this process, which exported nothing: DOCA_ERROR_NOT_PERMITTED",
      "ok descriptors naming this process with its code as range or a changed export: DOCA_ERROR_NOT_PERMITTED",
      "ok the genuine own descriptor imports and copies",
      "ok own descriptor replayed after revocation: DOCA_ERROR_NOT_PERMITTED",
    ],
    replay_killed: [
      "ok the genuine descriptor imports and copies",
      "ok replay after SIGKILL refused; a map imported before the kill fails with DOCA_ERROR_IO_FAILED",
      "ok replays naming a reused pid (old or forged start time, old secrets): DOCA_ERROR_NOT_PERMITTED, its memory unchanged",
    ],
    tamper: ["the exporter's registry cannot be"],
    fork: [
      "ok a forked child exports its inherited mmap from its own registry",
      "ok the child's destroy of its inherited copy left the parent's export live",
    ],
  };
  for (const [scenario, lines] of Object.entries(scenarios)) {
    test(scenario, () => {
      assert.ok(existsSync(hostileBin), `${hostileBin} is missing: run \`deno task sim:build\` first`);
      const w = faultSpace(`desc-${scenario}`);
      const env = { ...process.env, DOCA_SIM_DIR: w.sim, DOCA_SIM_SIDE: "dpu", DOCA_SIM_LOG: "1" } as Record<
        string,
        string
      >;
      delete env.DOCA_SIM_CONFIG;
      const r = spawnSync(hostileBin, [scenario], { env, encoding: "utf8", timeout: 60_000 });
      counters.inputs++;
      counters.faults++;
      assert.equal(r.signal, null, `hostile_exports ${scenario} crashed (${r.signal}); stderr:\n${r.stderr}`);
      assert.equal(r.status, 0, `hostile_exports ${scenario} failed:\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^PASS hostile_exports ${scenario}$`, "m"));
      for (const line of lines) assert.ok(r.stdout.includes(line), `missing "${line}" in:\n${r.stdout}`);
      // Nothing of the registries lives in the runtime folder: nothing there to plant or to replace
      assert.deepEqual(w.list(w.sim).filter((f) => f.endsWith(".reg")), []);
    });
  }
});

// ------------------------------------------------------------------ probes run under this runtime

interface Probe {
  code: number | null;
  signal: string | null;
  stderr: string;
  outcome?: { threw: boolean; message?: string; result?: unknown };
}

async function probe(name: string, env: Record<string, string>): Promise<Probe> {
  const r = await startHelper("hostile-probe.ts", [name], env, 30_000).done;
  const outcome = jsonLines(r.stdout).find((e) => e.case === name) as Probe["outcome"];
  return { code: r.code, signal: r.signal as string | null, stderr: r.stderr, outcome };
}

function assertRefused(p: Probe, error: RegExp, logged: RegExp): void {
  assert.equal(p.signal, null, `the runtime crashed (${p.signal}); stderr:\n${p.stderr}`);
  assert.equal(p.code, 0, `the probe died (exit ${p.code}); stderr:\n${p.stderr}`);
  assert.ok(p.outcome, `no outcome line; stderr:\n${p.stderr}`);
  assert.equal(p.outcome.threw, true, `the call succeeded: ${JSON.stringify(p.outcome.result)}`);
  assert.match(String(p.outcome.message), error);
  assert.match(p.stderr, logged, "the reason is logged on stderr");
}

describe("forged descriptors through the TypeScript API (this runtime's process as the victim)", () => {
  test("naming itself or its parent, or a changed own export: DOCA_ERROR_NOT_PERMITTED; the genuine one imports", async () => {
    const w = faultSpace("forge-ts");
    const p = await probe("forge", { DOCA_SIM_DIR: w.sim, DOCA_SIM_SIDE: "dpu", DOCA_SIM_LOG: "1" });
    counters.inputs += 136;
    counters.faults += 136;
    assert.equal(p.signal, null, `the runtime crashed (${p.signal}); stderr:\n${p.stderr}`);
    assert.equal(p.code, 0, `the probe died (exit ${p.code}); stderr:\n${p.stderr}`);
    assert.ok(p.outcome, `no outcome line; stderr:\n${p.stderr}`);
    assert.equal(p.outcome.threw, false, String(p.outcome.message));
    assert.deepEqual(p.outcome.result, { refused: 136, genuineImported: true });
  });
});

// ------------------------------------------------------------------ runtime folder

describe("a runtime folder someone else controls is refused with a DOCA error and a logged reason", () => {
  const w = faultSpace("folder");
  const real = join(w.root, "real");
  mkdirSync(real, { mode: 0o700 });
  const link = join(w.root, "link");
  symlinkSync(real, link);
  const open = join(w.root, "open");
  mkdirSync(open);
  chmodSync(open, 0o777);
  const groupWritable = join(w.root, "group");
  mkdirSync(groupWritable);
  chmodSync(groupWritable, 0o770);
  const foreign = join(w.root, "foreign");
  mkdirSync(foreign, { mode: 0o700 });
  if (isRoot) chownSync(foreign, 65534, 65534);

  const cases: { name: string; dir: string; why: RegExp; skip?: string }[] = [
    { name: "a symbolic link", dir: link, why: /refused: it is a symbolic link/ },
    { name: "writable by others", dir: open, why: /refused: it is writable by others \(mode 0777/ },
    { name: "writable by its group", dir: groupWritable, why: /refused: it is writable by its group \(mode 0770/ },
    {
      name: "owned by another uid",
      dir: foreign,
      why: /refused: it is owned by uid 65534/,
      skip: isRoot ? undefined : "needs root to chown a folder to another uid",
    },
  ];
  for (const c of cases) {
    for (const side of ["dpu", "host"] as const) {
      test(`${c.name} (${side}: ${side === "dpu" ? "ComchServer.start" : "ComchClient.connect"})`, { skip: c.skip }, async () => {
        const p = await probe(side === "dpu" ? "comch-server" : "comch-client", {
          DOCA_SIM_DIR: c.dir,
          DOCA_SIM_SIDE: side,
          DOCA_SIM_LOG: "1",
        });
        counters.inputs++;
        assertRefused(p, /DOCA_ERROR_NOT_PERMITTED/, new RegExp(`DOCA_SIM_DIR ${c.dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} ${c.why.source}`));
        // Nothing was created in the folder it refused
        assert.deepEqual(w.list(c.dir), []);
      });
    }
  }

  test("a folder that does not exist yet is created with mode 0700 and used", async () => {
    const fresh = join(w.root, "fresh");
    const p = await probe("comch-server", { DOCA_SIM_DIR: fresh, DOCA_SIM_SIDE: "dpu", DOCA_SIM_LOG: "1" });
    counters.inputs++;
    assert.equal(p.code, 0, p.stderr);
    assert.deepEqual(p.outcome, { case: "comch-server", threw: false, result: "started" });
    assert.equal(statSync(fresh).mode & 0o777, 0o700);
  });
});

// ------------------------------------------------------------------ configuration input

describe("DOCA_SIM_CONFIG: bad input refused at load naming the problem; JSON escapes read", () => {
  const w = faultSpace("config");
  const file = (name: string, text: string | Uint8Array) => {
    const p = join(w.root, name);
    writeFileSync(p, text);
    return p;
  };
  const host = (caps = "", extra = "") =>
    `{"host": {"devices": [{"pci": "0000:b1:00.1"${extra}${caps ? `, "caps": {${caps}}` : ""}}]}}`;
  const fifo = join(w.root, "config.fifo");
  const mkfifo = spawnSync("mkfifo", [fifo]);

  const bad: { name: string; path: () => string; why: RegExp; skip?: string }[] = [
    {
      name: "a FIFO (refused at once, no hang)",
      path: () => fifo,
      why: /is a FIFO, not a regular file/,
      skip: mkfifo.status === 0 ? undefined : "mkfifo is not available",
    },
    { name: "a directory", path: () => w.root, why: /is a directory, not a regular file/ },
    { name: "trailing bytes", path: () => file("trailing.json", host() + " {}"), why: /trailing characters after the JSON value/ },
    {
      name: "a NUL byte then more bytes",
      path: () => file("nul.json", new Uint8Array([...new TextEncoder().encode(host()), 0, 0x7b, 0x7d])),
      why: /a NUL byte in the file/,
    },
    { name: "a hex number", path: () => file("hex.json", host(`"dma_max_buf_size": 0x100000`)), why: /not a JSON number/ },
    { name: "a leading zero", path: () => file("zero.json", host(`"dma_max_buf_size": 0100`)), why: /leading zeros/ },
    { name: "a plus sign", path: () => file("plus.json", host(`"dma_max_buf_size": +100`)), why: /unexpected character '\+'/ },
    { name: "a lone surrogate", path: () => file("lone.json", host("", `, "ibdev": "a\\ud800"`)), why: /high surrogate/ },
    { name: "a bad escape", path: () => file("esc.json", host("", `, "ibdev": "a\\x41"`)), why: /invalid escape \\x/ },
    { name: "dma_max_buf_size 0", path: () => file("buf0.json", host(`"dma_max_buf_size": 0`)), why: /"dma_max_buf_size" must be at least 1/ },
    { name: "dma_max_num_tasks 0", path: () => file("tasks0.json", host(`"dma_max_num_tasks": 0`)), why: /"dma_max_num_tasks" must be at least 1/ },
    {
      name: "comch_max_msg_size below what Comch needs",
      path: () => file("msg16.json", host(`"comch_max_msg_size": 16`)),
      why: /"comch_max_msg_size" must be at least 256/,
    },
    { name: "comch_max_clients 0", path: () => file("clients0.json", host(`"comch_max_clients": 0`)), why: /"comch_max_clients" must be at least 1/ },
  ];
  for (const c of bad) {
    test(c.name, { skip: c.skip }, async () => {
      const path = c.path();
      const p = await probe("devices", { DOCA_SIM_CONFIG: path, DOCA_SIM_SIDE: "host", DOCA_SIM_DIR: w.sim });
      counters.inputs++;
      assertRefused(p, /BAD_CONFIG/, new RegExp(`DOCA_SIM_CONFIG .*: .*${c.why.source}`));
    });
  }

  test("\\uXXXX escapes and surrogate pairs are read as UTF-8", async () => {
    const path = file(
      "escapes.json",
      host("", `, "ibdev": "mlx5_\\u0037", "iface": "p\\ud83d\\ude00\\u00e9\\/\\"q\\""`),
    );
    const p = await probe("devices", { DOCA_SIM_CONFIG: path, DOCA_SIM_SIDE: "host", DOCA_SIM_DIR: w.sim });
    counters.inputs++;
    assert.equal(p.code, 0, p.stderr);
    assert.equal(p.outcome?.threw, false, `listDevices threw: ${p.outcome?.message}\n${p.stderr}`);
    const devices = p.outcome!.result as { ibdevName: string; ifaceName: string }[];
    assert.equal(devices.length, 1);
    assert.equal(devices[0].ibdevName, "mlx5_7");
    assert.equal(devices[0].ifaceName, 'p\u{1f600}\u00e9/"q"');
  });

  test("numbers by JSON's grammar are accepted (exponent, zero, negative refused by range)", async () => {
    const path = file("numbers.json", host(`"dma_max_buf_size": 1e6, "dma_max_buf_list_len": 16, "comch_max_msg_size": 4080`));
    const p = await probe("devices", { DOCA_SIM_CONFIG: path, DOCA_SIM_SIDE: "host", DOCA_SIM_DIR: w.sim });
    counters.inputs++;
    assert.equal(p.outcome?.threw, false, `listDevices threw: ${p.outcome?.message}\n${p.stderr}`);
    const devices = p.outcome!.result as { caps: Record<string, unknown> }[];
    assert.equal(JSON.stringify(devices[0].caps).includes("1000000"), true, JSON.stringify(devices[0].caps));
  });
});
