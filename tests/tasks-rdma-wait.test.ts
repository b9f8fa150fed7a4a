/**
 * A connecting side started before its listener waits for it within --timeout (issue 32 §5), as dma-copy's host
 * waits for its DPU: rdma-ping's (and rdma-copy's) sender failed in 0.3 s with CONNECTION_ABORTED although
 * --timeout was given. Both exchanges (RDMA CM, and the TCP exchange of connection details); and a listener that
 * never comes ends the wait at the deadline with a message naming the address.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createConnection } from "node:net";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { type Workspace, workspace } from "./helpers/tasks/workspace.ts";
import { noRdma } from "./helpers/rdma-pair.ts";
import { testPort } from "../tools/ports.ts";

const PING = fileURLToPath(new URL("../tasks/rdma-ping.ts", import.meta.url));
const spaces: Workspace[] = [];
after(() => spaces.forEach((w) => w.remove()));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs rdma-ping (all permissions under Deno: the TCP exchange needs --allow-net) and collects its outcome. */
function ping(args: string[], env: Record<string, string>) {
  const child = spawnRuntime(PING, { args, env });
  const stdout: string[] = [];
  const done = (async () => {
    for (;;) {
      const line = await child.readLine(100_000).catch(() => undefined);
      if (line === undefined) break;
      stdout.push(line);
    }
    return { code: await child.exited, stdout: stdout.join("\n"), stderr: child.stderr };
  })();
  return { child, done };
}

async function untilStderr(child: RuntimeChild, pattern: RegExp, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pattern.test(child.stderr)) {
    if (Date.now() > deadline) throw new Error(`no ${pattern} on stderr within ${ms} ms: ${child.stderr}`);
    await sleep(50);
  }
}

describe("a sender started before its receiver waits for it", { skip: noRdma }, () => {
  for (const exchange of ["cm", "tcp"]) {
    test(`rdma-ping --exchange ${exchange}: the receiver starts 2 s later, the ping succeeds`, { timeout: 120_000 }, async () => {
      const w = workspace(`rdma-wait-${exchange}`);
      spaces.push(w);
      const port = testPort();
      const sender = ping(["--connect", `127.0.0.1:${port}`, "--count", "5", "--timeout", "60", "--exchange", exchange], w.env);
      await untilStderr(sender.child, /waiting for the peer to listen/, 60_000);
      await sleep(2000);
      const receiver = ping(["--listen", `${port}`, "--timeout", "60", "--exchange", exchange], w.env);
      const [s, r] = await Promise.all([sender.done, receiver.done]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(s.code, 0, s.stderr);
      assert.match(s.stdout, /5 round trips/);
    });
  }

  test("nobody listens: the sender gives up at --timeout naming the address", { timeout: 60_000 }, async () => {
    const w = workspace("rdma-wait-none");
    spaces.push(w);
    const port = testPort();
    const started = Date.now();
    const s = await ping(["--connect", `127.0.0.1:${port}`, "--timeout", "2"], w.env).done;
    assert.equal(s.code, 1, s.stderr);
    assert.ok(Date.now() - started >= 1900, `it waited for --timeout: ${s.stderr}`);
    assert.match(s.stderr, new RegExp(`nobody listened at 127\\.0\\.0\\.1:${port} within 2 s \\(--timeout\\)`));
  });

  test("--listen ADDR:PORT listens on ADDR only, and says where", { timeout: 120_000 }, async () => {
    const w = workspace("rdma-listen-addr");
    spaces.push(w);
    const port = testPort();
    const receiver = ping(["--listen", `127.0.0.2:${port}`, "--timeout", "60"], w.env);
    await untilStderr(receiver.child, /listening for RDMA CM on/, 60_000);
    assert.match(receiver.child.stderr, new RegExp(`listening for RDMA CM on 127\\.0\\.0\\.2:${port}\\b`));
    const other = await new Promise<string>((resolve) => {
      const s = createConnection({ host: "127.0.0.1", port }, () => (s.destroy(), resolve("connected")));
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    assert.equal(other, "ECONNREFUSED", "nothing listens on 127.0.0.1");
    const sender = await ping(["--connect", `127.0.0.2:${port}`, "--count", "3", "--timeout", "60"], w.env).done;
    assert.equal(sender.code, 0, sender.stderr);
    assert.equal((await receiver.done).code, 0);
  });

  test("--listen PORT says it listens on every address", { timeout: 60_000 }, async () => {
    const w = workspace("rdma-listen-any");
    spaces.push(w);
    const port = testPort();
    const receiver = ping(["--listen", `${port}`, "--timeout", "2"], w.env);
    await untilStderr(receiver.child, /listening for RDMA CM on/, 50_000);
    assert.match(receiver.child.stderr, new RegExp(`listening for RDMA CM on port ${port} \\(every address`));
    await receiver.done;
  });
});
