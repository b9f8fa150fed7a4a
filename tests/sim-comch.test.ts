/// <reference lib="deno.ns" />
/**
 * Software device Comch, exercised by the C programs in sim/tests (built into build/sim/bin by `deno task sim:build`):
 * a DPU-side server process and a host-side client process talk over the emulated channel. Each test gets a
 * private DOCA_SIM_DIR, so nothing is shared with other suites.
 *
 * The C programs check every received byte themselves and print one line per milestone; these tests assert the
 * milestones, exit codes and timing (peer death must be noticed within a bound).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearTimeout, setTimeout } from "node:timers";
import { fileURLToPath } from "node:url";
import process from "node:process";

const binDir = fileURLToPath(new URL("../build/sim/bin", import.meta.url));

/** A running C test program whose stdout lines can be awaited */
class Proc {
  readonly lines: string[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private waiters: Array<() => void> = [];
  private partial = "";
  /** Set on "close": the process ended AND its stdout was read to the end (unlike "exit", which can come first) */
  private finished = false;
  stderr = "";

  constructor(readonly name: string, args: string[], env: Record<string, string>) {
    const path = join(binDir, name);
    assert.ok(existsSync(path), `${path} missing: run deno task sim:build`);
    this.child = spawn(path, args, {
      // Strict mode on unless the caller chose (deno task test sets it for the whole suite)
      env: { ...process.env, DOCA_SIM_STRICT: process.env.DOCA_SIM_STRICT ?? "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (chunk: string) => {
      const parts = (this.partial + chunk).split("\n");
      this.partial = parts.pop() ?? "";
      this.lines.push(...parts);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code) => {
        if (this.partial) this.lines.push(this.partial);
        this.finished = true;
        for (const wake of this.waiters.splice(0)) wake();
        resolve(code);
      })
    );
  }

  /** Resolves with the first stdout line starting with prefix; rejects after timeoutMs or if the program exits */
  async waitFor(prefix: string, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find((line) => line.startsWith(prefix));
      if (found !== undefined) return found;
      const failure = this.lines.find((line) => line.startsWith("FAIL"));
      if (failure) throw new Error(`${this.name}: ${failure}`);
      if (this.finished || Date.now() > deadline) {
        throw new Error(`${this.name}: no "${prefix}" line; got ${JSON.stringify(this.lines)} ${this.stderr}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async exitCode(timeoutMs = 10_000): Promise<number | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name} did not exit: ${JSON.stringify(this.lines)}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (!this.finished) this.child.kill("SIGKILL");
  }
}

/** One private runtime directory and the processes of one test, all cleaned up afterwards */
async function withSim(
  body: (ctx: {
    server: (...a: string[]) => Proc;
    /** A server started and listening (its LISTENING line read): most tests start their clients after that. */
    listening: (...a: string[]) => Promise<Proc>;
    client: (...a: string[]) => Proc;
    raw: (...a: string[]) => Proc;
  }) => Promise<void>,
) {
  const dir = mkdtempSync(join(tmpdir(), "doca-sim-comch-"));
  const procs: Proc[] = [];
  const start = (name: string, side: string, args: string[]) => {
    const p = new Proc(name, args, { DOCA_SIM_DIR: dir, DOCA_SIM_SIDE: side });
    procs.push(p);
    return p;
  };
  try {
    await body({
      server: (...args) => start("comch_server", "dpu", args),
      listening: async (...args) => {
        const s = start("comch_server", "dpu", args);
        await s.waitFor("LISTENING");
        return s;
      },
      client: (...args) => start("comch_client", "host", args),
      raw: (...args) => start("comch_raw_peer", "host", args),
    });
  } finally {
    for (const p of procs) p.kill();
    await Promise.all(procs.map((p) => p.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("software device Comch (C programs)", () => {
  test("control path: 300 messages each way, byte-exact and in order; oversized send refused", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("sim comch test", "echo-once");
      const c = client("sim comch test", "echo", "300");
      // the first echo wakes the client asleep on the progress engine's notification handle
      await c.waitFor("NOTIFY OK");
      assert.equal(await c.waitFor("ECHO OK"), "ECHO OK 300");
      await c.waitFor("OVERSIZE OK");
      assert.equal(await c.exitCode(), 0);
      assert.ok(c.lines.includes("CLIENT DONE"));
      assert.ok(c.lines.includes("LIVE 0"), "client leaked handles: " + c.lines.join("|"));
      assert.equal(await s.waitFor("CONNECTED"), "CONNECTED 1");
      // the client's doca_ctx_stop sends a disconnect: the server sees it and finishes
      assert.equal(await s.waitFor("SERVER DONE"), "SERVER DONE 300");
      assert.ok(s.lines.includes("DISCONNECTED 1"));
      assert.equal(await s.exitCode(), 0);
      assert.ok(s.lines.includes("LIVE 0"), "server leaked handles: " + s.lines.join("|"));
    });
  });

  test("a client started before its server connects once the server appears", async () => {
    await withSim(async ({ server, client }) => {
      const c = client("late server", "echo", "20");
      await new Promise((r) => setTimeout(r, 400));
      assert.ok(!c.lines.includes("RUNNING"), "client must not be running without a server");
      assert.equal(c.child.exitCode, null, "client keeps waiting");
      const s = server("late server", "echo-once");
      await c.waitFor("RUNNING");
      assert.equal(await c.waitFor("ECHO OK"), "ECHO OK 20");
      assert.equal(await c.exitCode(), 0);
      assert.equal(await s.exitCode(), 0);
    });
  });

  test("a client of another name does not reach the server", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("name one", "echo");
      const c = client("name two", "echo", "1");
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(!c.lines.includes("RUNNING"));
      assert.ok(!s.lines.some((l) => l.startsWith("CONNECTED")));
    });
  });

  test("a second server with the same name and representor is refused; the first keeps serving", async () => {
    await withSim(async ({ server, listening, client }) => {
      const first = await listening("twice", "echo");
      const second = server("twice", "echo");
      assert.equal(await second.exitCode(), 1);
      assert.ok(second.lines.some((l) => l.startsWith("FAIL doca_ctx_start") && l.endsWith("DOCA_ERROR_IN_USE")));
      const c = client("twice", "echo", "5");
      assert.equal(await c.waitFor("ECHO OK"), "ECHO OK 5");
      assert.equal(await c.exitCode(), 0);
      assert.ok(first.lines.includes("CONNECTED 1"), "the probe is not reported as a connection");
    });
  });

  test("killed client: the server reports the disconnect within 2 s", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("death", "echo");
      const c = client("death", "hold");
      await c.waitFor("RUNNING");
      await s.waitFor("CONNECTED");
      const t0 = Date.now();
      c.kill();
      await s.waitFor("DISCONNECTED", 2_000);
      assert.ok(Date.now() - t0 < 2_000);
      // a send on the dead connection completes through the error callback
      assert.equal(await s.waitFor("SEND ERROR"), "SEND ERROR DOCA_ERROR_NOT_CONNECTED");
      assert.equal(s.child.exitCode, null, "server survives");
    });
  });

  test("killed server: the client goes STOPPING then IDLE within 2 s", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("death2", "echo");
      const c = client("death2", "hold");
      await c.waitFor("RUNNING");
      s.kill();
      await c.waitFor("IDLE", 2_000);
      assert.equal(await c.exitCode(), 0);
    });
  });

  test("doca_comch_server_disconnect: the client is told and goes IDLE; no local disconnect callback", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("kick", "kick");
      const c = client("kick", "hold");
      await s.waitFor("KICKED 1");
      await c.waitFor("IDLE", 2_000);
      assert.equal(await c.exitCode(), 0);
      assert.ok(!s.lines.some((l) => l.startsWith("DISCONNECTED")));
    });
  });

  test("fast path: 3000 producer datagrams arrive complete and in order; too big for the buffer fails", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("fastpath", "consume", "3000");
      const c = client("fastpath", "produce", "3000");
      const consumerLine = await s.waitFor("CONSUMER RUNNING");
      const id = consumerLine.split(" ")[2];
      assert.equal(await c.waitFor("REMOTE CONSUMER "), `REMOTE CONSUMER ${id}`);
      assert.equal(await s.waitFor("CONSUMED", 30_000), "CONSUMED 3000");
      await s.waitFor("TOOBIG OK");
      assert.equal(await c.waitFor("PRODUCED"), "PRODUCED 3000");
      // the consumer's stop is announced to the producer side
      assert.equal(await c.waitFor("REMOTE CONSUMER EXPIRED"), `REMOTE CONSUMER EXPIRED ${id}`);
      assert.equal(await c.exitCode(), 0);
      assert.equal(await s.exitCode(), 0);
      assert.ok(c.lines.includes("LIVE 0") && s.lines.includes("LIVE 0"), "leaked handles");
    });
  });

  test("strict mode: a consumer destroyed with receives never freed is one report, counted once, nothing leaked", async () => {
    await withSim(async ({ listening, client }) => {
      const s = await listening("keepflushed", "consume", "200", "keep");
      const c = client("keepflushed", "produce", "200");
      assert.equal(await s.waitFor("CONSUMED", 30_000), "CONSUMED 200");
      assert.equal(await c.exitCode(), 0);
      assert.equal(await s.exitCode(), 0);
      assert.ok(s.lines.includes("LIVE 0"), `the unfreed tasks went with the consumer: ${s.lines.join(" | ")}`);
      const reports = s.stderr.split("\n").filter((line) => / strict: /.test(line));
      assert.ok(reports.some((line) => /destroy-with-children.*post_recv tasks were never freed/.test(line)), s.stderr);
      assert.ok(!reports.some((line) => /\bleak\b|task-not-freed/.test(line)), `counted again at exit:\n${s.stderr}`);
      assert.match(s.stderr, /summary: 1 reports? of 1 kind\b/, s.stderr);
    });
  });

  test("event-driven waits: a client with no server, or a server slow to answer, sleeps between retries; sends into a full socket sleep until it drains; a consumer on its own engine is woken when its connection ends", { timeout: 300_000 }, async () => {
    // sim/tests/comch_wake.c: each mode fails (never hangs) on a missed wake-up (its 20 s sleep running out) or a
    // busy loop (more than 100 wake-ups in 1 s of waiting for a server that retries every 20 ms)
    for (const mode of ["idle-client", "hs-client", "full-socket", "stop", "srvstop", "kill"]) {
      const dir = mkdtempSync(join(tmpdir(), "doca-sim-wake-"));
      const p = new Proc("comch_wake", [mode], { DOCA_SIM_DIR: dir });
      try {
        await p.waitFor(`PASS ${mode}`, 60_000);
        assert.equal(await p.exitCode(60_000), 0, `${mode}: ${p.lines.join(" | ")} ${p.stderr}`);
      } finally {
        p.kill();
        await p.exited;
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  test("malformed frames from a raw socket peer drop that peer only; the server keeps serving", async () => {
    await withSim(async ({ listening, client, raw }) => {
      const s = await listening("hostile", "echo");
      const r = raw();
      assert.equal(await r.exitCode(), 0, r.lines.join("\n"));
      assert.equal(r.lines.at(-1), "RAW OK 12");
      assert.equal(s.child.exitCode, null, "server still alive");
      const c = client("hostile", "echo", "10");
      assert.equal(await c.waitFor("ECHO OK"), "ECHO OK 10");
      assert.equal(await c.exitCode(), 0);
      assert.equal(s.child.exitCode, null);
    });
  });

  test("messages sent just before a close are delivered, even when the closing side left messages unread", async () => {
    await withSim(async ({ listening, raw }) => {
      const s = await listening("last words", "echo-once");
      const r = raw("last-words");
      assert.equal(await r.exitCode(), 0, r.lines.join("\n"));
      // Without reading past the kernel's one-time reset report, the server loses what was still queued at the close
      assert.equal(await s.waitFor("SERVER DONE"), "SERVER DONE 51", s.lines.join("|"));
      assert.equal(await s.exitCode(), 0);
    });
  });
});
