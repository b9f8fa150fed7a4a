/// <reference lib="deno.ns" />
/**
 * Runs a task the way a person does: under Deno with exactly the permission flags its deno.json entry declares (not
 * -A), under Bun and Node with the commands the docs give (`npx bun tasks/X.ts`, `node --import tsx tasks/X.ts`),
 * inside a pseudo-terminal (`script` from util-linux), so a permission prompt or a TTY-only code path shows up.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { currentRuntime } from "../../../ffi/load/runtime.ts";
import { repoRoot } from "../../../tasks/common/run-pair.ts";

type TaskEntry = string | { command: string };

/** deno.json's task commands, by name. */
export function denoTasks(): Record<string, string> {
  const tasks = JSON.parse(readFileSync(join(repoRoot, "deno.json"), "utf8")).tasks as Record<string, TaskEntry>;
  return Object.fromEntries(Object.entries(tasks).map(([k, v]) => [k, typeof v === "string" ? v : v.command]));
}

/** `deno run FLAGS… tasks/X.ts` → flags and script. */
export function splitRunCommand(command: string): { flags: string[]; script: string } | undefined {
  const words = command.split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run") return undefined;
  const script = words.at(-1)!;
  return { flags: words.slice(2, -1), script };
}

/** The argv of task `name` on the current runtime; `dropFlag` removes one of its Deno flags (to test its absence). */
export function taskArgv(name: string, args: string[], dropFlag?: string): string[] {
  const run = splitRunCommand(denoTasks()[name]);
  if (!run) throw new Error(`deno.json task ${name} is not a "deno run" command`);
  const script = join(repoRoot, run.script);
  switch (currentRuntime()) {
    case "deno": {
      const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
      return [deno, "run", ...run.flags.filter((f) => f !== dropFlag), script, ...args];
    }
    case "bun":
      return [process.execPath, script, ...args];
    default:
      return [process.execPath, "--import", "tsx", script, ...args];
  }
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface PtyRun {
  /** Everything the task wrote to the terminal (stdout and stderr together, \r\n line ends). */
  output(): string;
  waitFor(text: string, timeoutMs: number): Promise<void>;
  done: Promise<{ code: number | null; output: string }>;
  kill(): void;
}

/** Runs argv inside `script -qec … /dev/null` (a pseudo-terminal on stdin, stdout and stderr). */
export function runInPty(argv: string[], env: Record<string, string>, timeoutMs: number): PtyRun {
  const child = spawn("script", ["-qec", argv.map(quote).join(" "), "/dev/null"], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const watchers: { text: string; resolve: () => void }[] = [];
  const onData = (d: string) => {
    out += d;
    for (const w of watchers.splice(0)) (out.includes(w.text) ? w.resolve() : watchers.push(w));
  };
  child.stdout!.setEncoding("utf8").on("data", onData);
  child.stderr!.setEncoding("utf8").on("data", onData);
  const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const done = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, output: out });
    });
  });
  return {
    output: () => out,
    done,
    kill: () => child.kill("SIGKILL"),
    waitFor: (text, ms) =>
      new Promise<void>((resolve, reject) => {
        if (out.includes(text)) return resolve();
        const t = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms; output so far:\n${out}`)), ms);
        watchers.push({ text, resolve: () => (clearTimeout(t), resolve()) });
        void done.then(() => {
          clearTimeout(t);
          if (!out.includes(text)) reject(new Error(`exited before "${text}"; output:\n${out}`));
        });
      }),
  };
}

/** The Deno flags task `name`'s deno.json entry declares. */
export function declaredFlags(name: string): string[] {
  const run = splitRunCommand(denoTasks()[name]);
  if (!run) throw new Error(`deno.json task ${name} is not a "deno run" command`);
  return run.flags;
}

export interface PlainRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time from start to exit. */
  ms: number;
}

/**
 * Runs task `name` as taskArgv does (under Deno with exactly its declared flags, `dropFlag` removed), without a
 * terminal, with the variables in `unset` removed from the environment (not set to ""), from `cwd` (default the
 * repository). Through sh: Deno's node:child_process hands its own permissions to a deno it starts directly.
 */
export function runDeclared(
  name: string,
  args: string[],
  opts: { env?: Record<string, string>; unset?: string[]; dropFlag?: string; cwd?: string; timeoutMs: number },
): Promise<PlainRun> {
  const env: Record<string, string | undefined> = { ...process.env, ...opts.env };
  for (const variable of opts.unset ?? []) delete env[variable];
  const started = Date.now();
  const child = spawn("sh", ["-c", 'exec "$@"', "sh", ...taskArgv(name, args, opts.dropFlag)], {
    cwd: opts.cwd ?? repoRoot,
    env: env as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "", stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
