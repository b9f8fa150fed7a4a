/**
 * The comch-stream task as a user runs it (issue 29 item 6: "Comch from the tasks at the speed of the API"): its
 * DPU side, then its host side streaming N fast-path messages, two fresh processes under one runtime, with the task's
 * own permissions. Its rate is the DPU's messages per second (from its "ready" to the last message received); the
 * bench sets it beside the Comch fast-path row of the same runtime and round (benchmarks/comch-workload.ts, the API
 * called directly).
 */
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { type RuntimeName, runtimeArgv } from "./runtimes.ts";
import { type Side, startSide } from "./comch.ts";

const SCRIPT = join(repoRoot, "tasks", "comch-stream.ts");
/** The host function's representor the DPU side serves (the software device's default pair). */
const HOST_REP = "0000:b1:00.1";
/** What the DPU side prints on stderr once its server listens. */
const LISTENING = "is waiting for the host";
/** The task's own permissions, as `deno task comch-stream` grants them (deno.json). */
const DENO_ALLOW = ["ffi", "env", "read"];

const start = (rt: RuntimeName, args: string[], env: Record<string, string>): Side => startSide(runtimeArgv(rt, SCRIPT, args, DENO_ALLOW), env);

/**
 * Streams `count` messages of `size` bytes, `inflight` in flight, host → DPU through tasks/comch-stream.ts under
 * `rt`; resolves with the DPU's messages per second. Both processes are killed after `timeoutMs`.
 */
export async function streamTaskRate(rt: RuntimeName, size: number, count: number, inflight: number, simDir: string, timeoutMs: number): Promise<number> {
  const name = `bench-stream-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const timeout = String(Math.ceil(timeoutMs / 1000));
  const dpu = start(rt, ["--side", "dpu", "-r", HOST_REP, "-s", name, "--json", "--timeout", timeout], { DOCA_SIM_SIDE: "dpu", DOCA_SIM_DIR: simDir });
  let host: Side | undefined;
  const kill = () => [dpu, host].forEach((side) => side?.child.kill("SIGKILL"));
  const timer = setTimeout(kill, timeoutMs);
  try {
    const listening = await new Promise<boolean>((resolve) => {
      const poll = setInterval(() => dpu.err.includes(LISTENING) && (clearInterval(poll), resolve(true)), 5);
      void dpu.exit.then(() => (clearInterval(poll), resolve(dpu.err.includes(LISTENING))));
    });
    if (!listening) throw new Error(`comch-stream on ${rt}: the DPU side did not listen:\n${dpu.err}`);
    host = start(rt, ["--count", String(count), "--size", String(size), "--inflight", String(inflight), "-s", name, "--json", "--timeout", timeout], {
      DOCA_SIM_SIDE: "host",
      DOCA_SIM_DIR: simDir,
    });
    const [h, d] = await Promise.all([host.exit, dpu.exit]);
    if (h !== 0 || d !== 0) throw new Error(`comch-stream on ${rt} failed (host ${h}, DPU ${d}):\n${host.err}\n${dpu.err}`);
    const both = JSON.parse(host.out.trim().split("\n").pop()!) as { dpu: { messages: number; messagesPerSecond: number } };
    if (both.dpu.messages !== count) throw new Error(`comch-stream on ${rt}: the DPU received ${both.dpu.messages} of ${count} messages`);
    return both.dpu.messagesPerSecond;
  } finally {
    clearTimeout(timer);
    kill();
  }
}
