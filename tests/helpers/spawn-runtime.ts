/// <reference lib="deno.ns" />
/**
 * Starts a TypeScript script under the SAME runtime as the caller (deno run -A / bun / node --import tsx), with a
 * line-oriented stdin/stdout channel. Used to run "the other side" (e.g. the DPU process) in tests and tasks.
 *
 *   await using peer = spawnRuntime(new URL("./dpu-side.ts", import.meta.url), { env: { DOCA_SIM_SIDE: "dpu" } });
 *   peer.send({ op: "hello" }); const reply = await peer.receive(5000);
 */
import { type ChildProcess, spawn } from "node:child_process";
import { clearTimeout, setTimeout } from "node:timers";
import { fileURLToPath } from "node:url";
import process from "node:process";

export const repoRoot: string = fileURLToPath(new URL("../..", import.meta.url));

import { currentRuntime, type RuntimeName } from "../../ffi/load/runtime.ts";
import { runtimeCommand as taskRuntimeCommand } from "../../tasks/common/run-pair.ts";

export { currentRuntime };
export type Runtime = RuntimeName;

/** The command line that runs a test helper `script` under the current runtime (Deno: every permission, -A). */
export function runtimeCommand(script: string, args: string[] = []): { command: string; args: string[] } {
  return taskRuntimeCommand(script, args, ["-A"]);
}

export interface SpawnOptions {
  args?: string[];
  /** Added to (and overriding) the parent's environment. */
  env?: Record<string, string>;
  /** Where the child runs; default the repository root (Node needs it to resolve tsx). */
  cwd?: string;
}

export class RuntimeChild {
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  #buffer = "";
  #lines: string[] = [];
  #waiters: ((line: string | undefined) => void)[] = [];
  #stderr = "";
  #ended = false;

  constructor(script: string | URL, opts: SpawnOptions = {}) {
    const path = script instanceof URL ? fileURLToPath(script) : script;
    const { command, args } = runtimeCommand(path, opts.args);
    this.process = spawn(command, args, {
      cwd: opts.cwd ?? repoRoot,
      env: { ...process.env, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.process.stdout!.setEncoding("utf8");
    this.process.stdout!.on("data", (chunk: string) => this.#onData(chunk));
    this.process.stderr!.setEncoding("utf8");
    this.process.stderr!.on("data", (chunk: string) => (this.#stderr += chunk));
    this.exited = new Promise((resolve) => {
      this.process.on("close", (code) => {
        this.#ended = true;
        for (const w of this.#waiters.splice(0)) w(undefined);
        resolve(code);
      });
    });
  }

  /** What the child wrote to stderr so far (for failure messages). */
  get stderr(): string {
    return this.#stderr;
  }

  #onData(chunk: string): void {
    this.#buffer += chunk;
    let i;
    while ((i = this.#buffer.indexOf("\n")) >= 0) {
      const line = this.#buffer.slice(0, i);
      this.#buffer = this.#buffer.slice(i + 1);
      const waiter = this.#waiters.shift();
      if (waiter) waiter(line);
      else this.#lines.push(line);
    }
  }

  /** The next stdout line; rejects on timeout or if the child exits first. */
  readLine(timeoutMs = 10_000): Promise<string> {
    const ready = this.#lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.#ended) return Promise.reject(new Error(`child exited; stderr:\n${this.#stderr}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(new Error(`no line from child within ${timeoutMs} ms; stderr:\n${this.#stderr}`));
      }, timeoutMs);
      const waiter = (line: string | undefined) => {
        clearTimeout(timer);
        if (line === undefined) reject(new Error(`child exited; stderr:\n${this.#stderr}`));
        else resolve(line);
      };
      this.#waiters.push(waiter);
    });
  }

  writeLine(line: string): void {
    this.process.stdin!.write(line + "\n");
  }

  /** JSON convenience: one object per line. */
  send(message: unknown): void {
    this.writeLine(JSON.stringify(message));
  }

  async receive<T = Record<string, unknown>>(timeoutMs = 10_000): Promise<T> {
    return JSON.parse(await this.readLine(timeoutMs)) as T;
  }

  /** Sends a request and returns the reply; a reply with an `error` field rejects. */
  async request<T = Record<string, unknown>>(message: unknown, timeoutMs = 10_000): Promise<T> {
    this.send(message);
    const reply = await this.receive<T & { error?: string }>(timeoutMs);
    if (reply.error) throw new Error(`peer: ${reply.error}`);
    return reply;
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    // process.kill, not this.process.kill: Deno's ChildProcess.kill sends only the first signal (a SIGCONT after a
    // SIGSTOP returns false and never arrives).
    if (!this.#ended) process.kill(this.process.pid!, signal);
  }

  /** Closes stdin (the helper scripts exit on EOF), then kills after a grace period. */
  async close(graceMs = 3000): Promise<void> {
    if (this.#ended) return;
    this.process.stdin!.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

export function spawnRuntime(script: string | URL, opts: SpawnOptions = {}): RuntimeChild {
  return new RuntimeChild(script, opts);
}
