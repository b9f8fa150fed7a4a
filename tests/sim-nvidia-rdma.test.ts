/**
 * NVIDIA's DOCA 3.3 RDMA samples (NVIDIA-DOCA/doca-samples, samples/doca_rdma), built unmodified against the software
 * device's headers and libraries and run pairwise: descriptors through files (out of band, as their README says,
 * with Enter pressed when each side asks) and through RDMA CM. Nothing of NVIDIA's is in this repository: the
 * samples come from a local snapshot of their repository named by DOCA_SAMPLES_REPO (a checkout or its git
 * directory); without one every case is skipped with a line saying so. doca_argp and doca_log, which
 * DOCA ships in other libraries, are the small stand-ins in tests/nvidia-samples. doca-ts also takes the place of
 * the write requester and of the sender (tests/helpers/tasks/nvidia-rdma-peer.ts) against NVIDIA's C other half.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { repoRoot, runtimeCommand } from "./helpers/spawn-runtime.ts";
import { extractSnapshot, findSnapshot, NO_SNAPSHOT } from "../tools/nvidia-snapshot.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const libDir = join(root, "build", "sim", "lib");
const standIns = join(root, "tests", "nvidia-samples");

const snapshot = findSnapshot();
const skip = snapshot ? false : NO_SNAPSHOT;
if (!snapshot) console.log(`# NVIDIA RDMA samples skipped: ${skip}`);

const SAMPLES = [
  "rdma_write_responder", "rdma_write_requester", "rdma_read_responder", "rdma_read_requester",
  "rdma_write_immediate_responder", "rdma_write_immediate_requester", "rdma_receive", "rdma_send",
  "rdma_receive_immediate", "rdma_send_immediate", "rdma_sync_event_responder", "rdma_sync_event_requester",
  "rdma_multi_conn_receive", "rdma_multi_conn_send",
];

let work = "";
const bin = (name: string) => join(work, "bin", name);

function run(command: string, args: string[], cwd?: string): void {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, `${command} ${args.join(" ")}\n${r.stdout}\n${r.stderr}`);
}

/** Extracts the samples (no work tree is needed: `git archive` of the snapshot) and compiles every one. */
function buildSamples(): void {
  work = mkdtempSync(join(tmpdir(), "doca-nvidia-rdma-"));
  const src = join(work, "src");
  mkdirSync(src);
  const parts = ["samples/doca_rdma", "samples/common.c", "samples/common.h", "samples/common_utils.h"];
  extractSnapshot(snapshot!, parts, src);
  const dir = join(src, "samples", "doca_rdma");
  mkdirSync(join(work, "bin"));
  // -std=gnu11 as NVIDIA's meson builds them; their warnings are theirs, ours (-Werror) are in the device build
  const flags = ["-std=gnu11", "-O1", "-w", "-DDOCA_ALLOW_EXPERIMENTAL_API", `-I${join(root, "sim", "include")}`, `-I${standIns}`, `-I${dir}`, `-I${join(src, "samples")}`];
  const common = [join(dir, "rdma_common.c"), join(src, "samples", "common.c"), join(standIns, "argp_log.c")];
  const objects = common.map((c, i) => {
    const o = join(work, `common${i}.o`);
    run("cc", [...flags, "-c", c, "-o", o]);
    return o;
  });
  for (const name of SAMPLES) {
    const sources = [join(dir, name, `${name}_main.c`), join(dir, name, `${name}_sample.c`)];
    run("cc", [...flags, ...sources, ...objects, `-L${libDir}`, "-ldoca_rdma", "-ldoca_common", `-Wl,-rpath,${libDir}`, "-o", bin(name)]);
  }
}

interface Side {
  child: ChildProcess;
  log: string;
  prompts: number;
  answered: number;
  exited: boolean;
  code: number | null;
  /** When it last printed: a side quiet for a while is waiting for its peer, as a person watching would judge. */
  lastOutput: number;
}

/**
 * Runs a pair the way their README does, by hand: the passive side (responder / receiver) first, the active side
 * once the passive one asks for Enter (or listens, with RDMA CM); Enter is pressed for a side when the other side is
 * waiting too (the passive side first), has finished, or has gone quiet waiting for its peer: when a person following
 * the prompts would press it.
 */
async function runPair(passive: string, active: string, args: { passive: string[]; active: string[] }): Promise<{ p: Side; a: Side }> {
  const dir = mkdtempSync(join(work, "pair-"));
  const env: Record<string, string | undefined> = { ...process.env, DOCA_SIM_DIR: join(dir, "sim"), DOCA_SIM_STRICT: process.env.DOCA_SIM_STRICT ?? "1" };
  delete env.DOCA_SIM_CONFIG;
  delete env.DOCA_SIM_SIDE;
  // Two machines, as the README has them: each side has its own folder, and a file is copied across when asked
  const folders = { passive: join(dir, "passive"), active: join(dir, "active") };
  for (const f of Object.values(folders)) mkdirSync(f);
  // What a side wrote (local.txt, and the passive side's resource.txt; multi-connection samples add "-0000" and
  // so on) becomes the other side's remote.txt / resource.txt
  const copyAcross = () => {
    for (const [from, to] of [[folders.passive, folders.active], [folders.active, folders.passive]]) {
      for (const name of readdirSync(from)) {
        const theirs = name.startsWith("local.txt") ? name.replace("local.txt", "remote.txt")
          : name.startsWith("resource.txt") && from === folders.passive ? name : undefined;
        if (theirs && !existsSync(join(to, theirs))) copyFileSync(join(from, name), join(to, theirs));
      }
    }
  };
  const start = (name: string, extra: string[], folder: string): Side => {
    const files = ["-ld", join(folder, "local.txt"), "-re", join(folder, "remote.txt"), "-m", join(folder, "resource.txt")];
    // a sample, or doca-ts in a sample's place (a script under this runtime, same files and prompts)
    const cmd = name.endsWith(".ts") ? runtimeCommand(name, [...extra, ...files]) : { command: bin(name), args: ["-d", "mlx5_0", ...files, ...extra] };
    const child = spawn(cmd.command, cmd.args, { env, cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    const side: Side = { child, log: "", prompts: 0, answered: 0, exited: false, code: null, lastOutput: Date.now() };
    const take = (d: Buffer) => {
      side.log += d.toString();
      side.lastOutput = Date.now();
      side.prompts = (side.log.match(/press enter/gi) ?? []).length;
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    child.on("exit", (code) => {
      side.exited = true;
      side.code = code;
    });
    return side;
  };
  const waiting = (s: Side) => !s.exited && s.prompts > s.answered;
  // (a side still starting has said nothing yet: it is not waiting for anything)
  const settled = (s: Side) => s.exited || waiting(s) || (s.log.length > 0 && Date.now() - s.lastOutput > 700);
  const enter = (s: Side) => {
    copyAcross();
    s.answered++;
    s.child.stdin!.write("\n");
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const deadline = Date.now() + 60_000;
  const p = start(passive, args.passive, folders.passive);
  let a: Side | undefined;
  try {
    while (!(p.exited && a?.exited)) {
      assert.ok(Date.now() < deadline, `the pair did not finish in 60 s\n--- ${passive}\n${p.log}\n--- ${active}\n${a?.log}`);
      if (!a && (waiting(p) || p.exited || args.passive.includes("-cm") && /started connection successfully/.test(p.log))) {
        a = start(active, args.active, folders.active);
      }
      if (a) {
        if (waiting(p) && settled(a)) {
          enter(p);
          await sleep(200); // the passive side connects before the active one is let go
          if (waiting(a)) enter(a);
        } else if (waiting(a) && !waiting(p) && settled(p)) {
          enter(a);
        }
      }
      await sleep(50);
    }
  } finally {
    p.child.kill("SIGKILL");
    a?.child.kill("SIGKILL");
  }
  return { p, a: a! };
}

function assertFinished(s: Side, name: string, other?: Side): void {
  const logs = `${name}:\n${s.log}${other ? `\n--- its peer:\n${other.log}` : ""}`;
  assert.equal(s.code, 0, `${name} exited ${s.code}\n${logs}`);
  assert.match(s.log, /Sample finished successfully/, logs);
  assert.doesNotMatch(s.log, /\[ERR\]|strict:/, logs);
}

const CASES: { name: string; passive: string; active: string; expect: [side: "p" | "a", RegExp][] }[] = [
  { name: "write", passive: "rdma_write_responder", active: "rdma_write_requester", expect: [["p", /Requester has written: "Hi DOCA RDMA!"/]] },
  { name: "read", passive: "rdma_read_responder", active: "rdma_read_requester", expect: [["a", /Read from responder: "Hi DOCA RDMA!"/]] },
  {
    name: "write with immediate",
    passive: "rdma_write_immediate_responder",
    active: "rdma_write_immediate_requester",
    expect: [["p", /Requester has written: "Hi DOCA RDMA!" with immediate data: \d+/]],
  },
  { name: "send / receive", passive: "rdma_receive", active: "rdma_send", expect: [["p", /Got from sender: "Hi DOCA RDMA!"/]] },
  {
    name: "send / receive with immediate",
    passive: "rdma_receive_immediate",
    active: "rdma_send_immediate",
    expect: [["p", /Got from sender: "Hi DOCA RDMA!" with immediate: \d+/]],
  },
  {
    name: "sync event",
    passive: "rdma_sync_event_responder",
    active: "rdma_sync_event_requester",
    expect: [["a", /Received sync event value 0xD0CB/], ["a", /notified for completion successfully/]],
  },
  { name: "multi-connection send / receive", passive: "rdma_multi_conn_receive", active: "rdma_multi_conn_send", expect: [["p", /Got from sender: "Hi DOCA RDMA!"/]] },
];

// Built when the file loads, not in a hook: compiling 14 programs takes longer than some runners allow a hook
if (snapshot) buildSamples();

describe("NVIDIA's DOCA RDMA samples, unmodified, on the software device", { skip }, () => {
  after(() => work && rmSync(work, { recursive: true, force: true }));

  // doca-ts in the requester's / sender's place, NVIDIA's C sample on the other side
  const peer = join(root, "tests", "helpers", "tasks", "nvidia-rdma-peer.ts");
  for (const [mode, passive, expect] of [
    ["write", "rdma_write_responder", /Requester has written: "Hi from doca-ts"/],
    ["send", "rdma_receive", /Got from sender: "Hi from doca-ts"/],
  ] as const) {
    test(`doca-ts ${mode}s to NVIDIA's ${passive} (descriptor files)`, { timeout: 90_000 }, async () => {
      const { p, a } = await runPair(passive, peer, { passive: [], active: [mode] });
      assertFinished(p, passive, a);
      assert.equal(a.code, 0, `${a.log}\n--- NVIDIA's side:\n${p.log}`);
      assert.match(a.log, new RegExp(`doca-ts peer: ${mode} of "Hi from doca-ts" done`));
      assert.match(p.log, expect);
    });
  }

  let port = 20_000 + (process.pid % 20_000);
  for (const c of CASES) {
    for (const cm of [false, true]) {
      test(`${c.name}: ${c.passive} ⇄ ${c.active} (${cm ? "RDMA CM" : "descriptor files"})`, { timeout: 90_000 }, async () => {
        const lp = String(port++);
        const args = cm ? { passive: ["-cm", "-lp", lp], active: ["-cm", "-lp", lp, "-sa", "127.0.0.1"] } : { passive: [], active: [] };
        const { p, a } = await runPair(c.passive, c.active, args);
        assertFinished(p, c.passive, a);
        assertFinished(a, c.active, p);
        for (const [side, pattern] of c.expect) assert.match((side === "p" ? p : a).log, pattern);
      });
    }
  }
});
