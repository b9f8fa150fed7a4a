/**
 * The Comch cells of the benchmark as one two-process run: the server (DPU side) of a participant started first,
 * its client (host side, same participant) once the server printed "listening". Both are always reaped: a side
 * that fails, exits early or outlives the deadline gets the other one killed, and the run rejects with both stderrs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { buildCDriver, driverPath } from "./c-driver.ts";
import { type RuntimeName, runtimeArgv } from "./runtimes.ts";

export const COMCH_DRIVER = driverPath("comch-driver");
const COMCH_WORKLOAD = join(repoRoot, "benchmarks", "comch-workload.ts");

/** Builds benchmarks/comch-driver.c against the software device (like benchmarks/driver.c). */
export function buildComchDriver(): string {
  return buildCDriver("comch-driver", ["doca_comch", "doca_common"]);
}

function sideArgv(who: "c" | RuntimeName, args: string[]): string[] {
  return who === "c" ? [COMCH_DRIVER, ...args] : runtimeArgv(who, COMCH_WORKLOAD, args, ["ffi", "env", "read"]);
}

export interface Side {
  child: ChildProcess;
  out: string;
  err: string;
  exit: Promise<number | string>;
}

/** Starts one side (argv, extra environment), collecting its output; `exit` resolves with its code or signal. */
export function startSide(argv: string[], env: Record<string, string>): Side {
  const child = spawn(argv[0], argv.slice(1), { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const side: Side = { child, out: "", err: "", exit: Promise.resolve(0) };
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (side.out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (side.err += d));
  side.exit = new Promise((resolve) => {
    child.on("error", (e) => (side.err += String(e), resolve("spawn error")));
    child.on("close", (code, signal) => resolve(code ?? signal ?? "?"));
  });
  return side;
}

/**
 * Runs `cells` (ctrl:S:D / fast:S:D) for `who` on the software device under simDir; returns the client's JSON
 * lines. Rejects (after both sides exited) when either side fails or the run exceeds timeoutMs.
 */
export async function runComchCells(who: "c" | RuntimeName, cells: string[], seconds: number, simDir: string, timeoutMs: number): Promise<string[]> {
  const name = `bench-${who}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const server = startSide(sideArgv(who, ["serve", name, ...cells]), { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: simDir });
  let client: Side | undefined;
  let failure: string | undefined;
  const reap = () => {
    for (const side of [server, client]) if (side && side.child.exitCode === null && side.child.signalCode === null) side.child.kill("SIGKILL");
  };
  const killAll = (why: string) => {
    failure ??= why;
    reap();
  };
  const timer = setTimeout(() => killAll(`timed out after ${timeoutMs} ms`), timeoutMs);
  try {
    // The client starts once the server listens, as a user would start it; a server that dies first ends the run.
    const listening = await Promise.race([
      new Promise<boolean>((resolve) => {
        const check = () => server.out.includes("listening\n") ? resolve(true) : undefined;
        server.child.stdout!.on("data", check);
        check();
      }),
      server.exit.then(() => false),
    ]);
    if (!listening) failure ??= "the server exited before listening";
    else {
      client = startSide(sideArgv(who, ["client", name, String(seconds), ...cells]), { DOCA_SIM_SIDE: "host", DOCA_SIM_DIR: simDir });
      // Whichever side fails first takes the other down with it (its peer would otherwise wait for its timeout).
      const c = client;
      void c.exit.then((code) => code !== 0 && killAll(`client exited with ${code}`));
      void server.exit.then((code) => code !== 0 && killAll(`server exited with ${code}`));
    }
    const [serverCode, clientCode] = await Promise.all([server.exit, client?.exit ?? Promise.resolve(0)]);
    if (serverCode !== 0 || clientCode !== 0) failure ??= `server exited with ${serverCode}, client with ${clientCode}`;
  } finally {
    clearTimeout(timer);
    reap();
    await Promise.all([server.exit, client?.exit]);
  }
  if (failure) {
    throw new Error(`Comch cells on ${who} failed (${failure}):\nserver: ${server.err.trim()}\nclient: ${client?.err.trim() ?? "(not started)"}`);
  }
  return client!.out.split("\n").filter((l) => l.startsWith("{"));
}
