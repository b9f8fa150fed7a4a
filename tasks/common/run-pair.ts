/// <reference lib="deno.ns" />
/**
 * Runs the DPU and host sides of a task as two child processes of the runtime running this code (Deno, Bun or
 * Node + tsx), the DPU first (it is the Comch server), and collects exit codes and output. Used by the demo and
 * the tests; each pair should get its own DOCA_SIM_DIR.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { currentRuntime } from "../../ffi/load/runtime.ts";
import { isStopStatus, stopsDelivered } from "./interrupt.ts";

export const repoRoot: string = fileURLToPath(new URL("../..", import.meta.url));

/** ".js" when this module runs as the npm package's built JavaScript (plain Node, no loader), else ".ts". */
export const ownExtension: string = import.meta.url.endsWith(".js") ? ".js" : ".ts";

/** The Deno permissions a task runs with (its deno.json entry's); test helpers that read /proc pass ["-A"]. */
export const TASK_DENO_FLAGS: readonly string[] = ["--no-prompt", "--allow-ffi", "--allow-env", "--allow-read", "--allow-write", "--allow-run", "--allow-sys=statfs"];

/**
 * How to run a task file (TypeScript, or the package's built JavaScript) with the current runtime; under Deno with
 * `denoFlags` (the tasks' permissions by default). The one way tasks and tests start a script of theirs.
 */
export function runtimeCommand(script: string, args: string[], denoFlags: readonly string[] = TASK_DENO_FLAGS): { command: string; args: string[] } {
  const runtime = currentRuntime();
  if (runtime === "deno") {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
    return { command: deno.execPath(), args: ["run", ...denoFlags, script, ...args] };
  }
  if (runtime === "bun") return { command: process.execPath, args: [script, ...args] };
  if (script.endsWith(".js")) return { command: process.execPath, args: [script, ...args] };
  return { command: process.execPath, args: ["--import", "tsx", script, ...args] };
}

export interface ChildResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface RunningChild {
  /** Resolves once the child has written `text` to stderr (or rejects when it exits first). */
  waitForStderr(text: string, timeoutMs: number): Promise<void>;
  done: Promise<ChildResult>;
  /** SIGKILL. */
  kill(): void;
  /** Sends `name` (e.g. "SIGINT") to the child. */
  signal?(name: NodeJS.Signals): void;
  /** What the child wrote to stdout so far (to watch output that comes before the end). */
  stdout?(): string;
  /** The child's process id (to watch it from outside: /proc/PID/io). */
  pid?: number;
}

export function startChild(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  denoFlags: readonly string[] = TASK_DENO_FLAGS,
): RunningChild {
  const cmd = runtimeCommand(script, args, denoFlags);
  const child = spawn(cmd.command, cmd.args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const watchers: { text: string; resolve: () => void }[] = [];
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    for (const w of watchers.splice(0)) {
      if (stderr.includes(w.text)) w.resolve();
      else watchers.push(w);
    }
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const done = new Promise<ChildResult>((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    done,
    pid: child.pid,
    stdout: () => stdout,
    kill: () => child.kill("SIGKILL"),
    // process.kill, not child.kill: after child.kill() Deno reports the signal instead of the exit status.
    signal: (name) => {
      try {
        if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, name);
      } catch { /* it just exited */ }
    },
    waitForStderr(text, waitMs) {
      if (stderr.includes(text)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child did not print "${text}" within ${waitMs} ms; stderr:\n${stderr}`)), waitMs);
        watchers.push({ text, resolve: () => (clearTimeout(timer), resolve()) });
        void done.then((r) => {
          clearTimeout(timer);
          reject(new Error(`child exited (${r.code ?? r.signal}) before printing "${text}"; stderr:\n${r.stderr}`));
        });
      });
    },
  };
}

/** What the DPU side of dma-copy prints on stderr once its Comch server listens (always, with DOCA_TS_ANNOUNCE_LISTEN). */
export const DPU_LISTENING = "waiting for the host";

/**
 * Runs dma-copy's DPU side, waits until it listens, then its host side; resolves with both results.
 * `env` must carry DOCA_SIM_DIR (shared by both); the DPU also gets DOCA_SIM_SIDE=dpu.
 */
export async function runCopyPair(opts: {
  hostArgs: string[];
  dpuArgs: string[];
  env: Record<string, string>;
  timeoutMs?: number;
  /**
   * Aborting it (reason: "SIGINT", "SIGTERM", "SIGHUP" or "SIGPIPE") passes the stop on to both sides (SIGTERM for
   * SIGPIPE, which is not a signal they were sent), so they unwind as if interrupted themselves; the result is
   * whatever they then report.
   */
  signal?: AbortSignal;
}): Promise<{ host: ChildResult; dpu: ChildResult }> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const script = fileURLToPath(new URL(`../dma-copy${ownExtension}`, import.meta.url));
  const dpuEnv = { ...opts.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" };
  const children: RunningChild[] = [];
  const forward = () => {
    const reason = opts.signal?.reason;
    const name = (reason === "SIGINT" || reason === "SIGHUP" ? reason : "SIGTERM") as NodeJS.Signals;
    for (const child of children) child.signal?.(name);
  };
  if (opts.signal?.aborted) throw new Error("runCopyPair: already stopped");
  opts.signal?.addEventListener("abort", forward, { once: true });
  try {
    const dpu = startChild(script, ["--side", "dpu", ...opts.dpuArgs], dpuEnv, timeoutMs);
    children.push(dpu);
    try {
      await dpu.waitForStderr(DPU_LISTENING, Math.min(timeoutMs, 30_000));
      if (opts.signal?.aborted) throw new Error("stopped before the host side started");
    } catch (e) {
      if (!opts.signal?.aborted) dpu.kill();
      const r = await dpu.done;
      return { dpu: r, host: { code: null, signal: null, stdout: "", stderr: `host not started: ${(e as Error).message}` } };
    }
    const host = startChild(script, ["--side", "host", ...opts.hostArgs], { ...opts.env, DOCA_SIM_SIDE: "host" }, timeoutMs);
    children.push(host);
    const [h, d] = await Promise.all([host.done, dpu.done]);
    // A side ended by a stop (a terminal's Ctrl-C reaches the whole group) is the caller's stop too: let the loop
    // deliver it before the caller looks at its signal, or it would report a failed copy instead of the stop.
    if (isStopStatus(h.code) || isStopStatus(d.code)) await stopsDelivered();
    return { host: h, dpu: d };
  } finally {
    opts.signal?.removeEventListener("abort", forward);
  }
}
