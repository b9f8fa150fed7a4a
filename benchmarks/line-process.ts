/**
 * A benchmark's helper process (a C driver, a runtime's workload, a task) that it talks to by lines: stdin for
 * requests, stdout lines to wait for, stderr collected for messages. Every wait has a deadline and fails at once
 * when the process exits; reap() kills and waits, so no run leaves a process behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";

export interface LineProcess {
  child: ChildProcess;
  /** The stdout lines so far that no line() call took. */
  lines: string[];
  /** All of stderr so far (and a spawn error, if any). */
  err: string;
  /** The exit code, else the signal's name ("spawn error" when it could not start). */
  exit: Promise<number | string>;
  /** The first stdout line starting with `prefix`, taken out of `lines`; rejects on exit or after timeoutMs. */
  line(prefix: string, timeoutMs: number): Promise<string>;
  /** Resolves once stderr contains `text`; rejects on exit or after timeoutMs. */
  stderr(text: string, timeoutMs: number): Promise<void>;
}

/** Starts argv[0] with argv's other words in the repository's root, with `env` over this process's environment. */
export function startLineProcess(argv: string[], env: Record<string, string>): LineProcess {
  const child = spawn(argv[0], argv.slice(1), { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let buffer = "";
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  /** Waits until `ready` gives a value, re-asking whenever the process writes or ends. */
  const until = async <T>(ready: () => T | undefined, what: string, timeoutMs: number): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = ready();
      if (value !== undefined) return value;
      if (exited()) throw new Error(`${argv[0]} exited before ${what}: ${p.err.trim()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${argv[0]}: no ${what} within ${timeoutMs} ms: ${p.err.trim()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
  };
  const p: LineProcess = {
    child,
    lines: [],
    err: "",
    exit: new Promise((resolve) => {
      child.on("error", (e) => ((p.err += String(e)), resolve("spawn error"), wake()));
      child.on("close", (code, signal) => (resolve(code ?? signal ?? "?"), wake()));
    }),
    line(prefix, timeoutMs) {
      return until(() => {
        const i = p.lines.findIndex((l) => l.startsWith(prefix));
        return i >= 0 ? p.lines.splice(i, 1)[0] : undefined;
      }, `"${prefix}"`, timeoutMs);
    },
    stderr(text, timeoutMs) {
      return until(() => (p.err.includes(text) ? true : undefined), `saying "${text}"`, timeoutMs).then(() => {});
    },
  };
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    buffer += d;
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    p.lines.push(...parts);
    wake();
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => ((p.err += d), wake()));
  return p;
}

/** Kills a process and waits until it is reaped (5 s at most after SIGKILL). */
export async function reap(p: LineProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill("SIGKILL");
  await Promise.race([p.exit, new Promise((resolve) => setTimeout(resolve, 5000))]);
}
