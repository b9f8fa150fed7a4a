/**
 * tasks/storage-relay.ts against peers that misbehave (a fake storage target here, a fake host in
 * tests/helpers/storage-host.ts): a target gone while the relay waits for the host ends it at once; a host that
 * sends part of a message and stalls holds it no longer than --control-timeout; an init request out of range is
 * refused before anything reaches the target; every error line carries one prefix and names the peer.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createServer, type Server, type Socket } from "node:net";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { DPU_PCI, HOST_PCI, type Workspace, workspaces } from "./helpers/tasks/workspace.ts";
import { noRdma } from "./helpers/rdma-pair.ts";
import { uniqueName } from "./helpers/sim-env.ts";

const RELAY = fileURLToPath(new URL("../tasks/storage-relay.ts", import.meta.url));
const HOST = fileURLToPath(new URL("./helpers/storage-host.ts", import.meta.url));
const space = workspaces(after);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A storage target that answers a query (1 MiB of 4 KiB blocks) and every other request with an empty answer,
 * or (close) hangs up 300 ms after the relay connected, or (bad-rdma) answers as "answer" but for a connection
 * request, which gets 8 bytes of "A" as its RDMA connection details, or (flood) sends error answers to no request
 * as fast as the relay reads them; `types` are the message types it received. */
async function fakeTarget(mode: "answer" | "close" | "bad-rdma" | "flood"): Promise<{ server: Server; port: number; types: number[] }> {
  const types: number[] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
    if (mode === "close") {
      setTimeout(() => socket.destroy(), 300);
      return;
    }
    if (mode === "flood") {
      // error_response answers to no request (id 999999, 60 KB of text each), as fast as the relay reads them
      const text = new TextEncoder().encode("x".repeat(60_000));
      const m = new Uint8Array(24 + text.length);
      const v = new DataView(m.buffer);
      [20 + text.length, 0, 999_999, 0, 1, text.length].forEach((x, i) => v.setUint32(i * 4, x));
      m.set(text, 24);
      const flood = () => {
        while (!socket.destroyed && socket.write(m)) { /* until the socket pushes back */ }
      };
      socket.on("drain", flood);
      flood();
      return;
    }
    let pending = new Uint8Array(0);
    socket.on("data", (chunk: Uint8Array) => {
      const joined = new Uint8Array(pending.length + chunk.length);
      joined.set(pending);
      joined.set(chunk, pending.length);
      let at = 0;
      while (joined.length - at >= 4) {
        const view = new DataView(joined.buffer, joined.byteOffset + at);
        const size = view.getUint32(0);
        if (joined.length - at - 4 < size) break;
        const [type, id, correlation] = [view.getUint32(4), view.getUint32(8), view.getUint32(12)];
        types.push(type);
        const payload = type === 1 ? [0, 1 << 20, 4096] : type === 5 && mode === "bad-rdma" ? [0, 0, 8, 0x41414141, 0x41414141] : [];
        const answer = new Uint8Array(16 + payload.length * 4);
        const out = new DataView(answer.buffer);
        [12 + payload.length * 4, type + 1, id, correlation, ...payload].forEach((v, i) => out.setUint32(i * 4, v));
        socket.write(answer);
        at += 4 + size;
      }
      pending = joined.slice(at);
    });
  });
  server.on("close", () => sockets.forEach((s) => s.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port, types };
}

/** The relay's exit status and stderr, or a failure if it is still running after `withinMs`. */
async function ended(relay: RuntimeChild, withinMs: number): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  const code = await Promise.race([relay.exited, sleep(withinMs).then(() => "running" as const)]);
  if (code === "running") {
    relay.kill();
    assert.fail(`the relay still ran after ${withinMs / 1000} s; stderr:\n${relay.stderr}`);
  }
  return { code, stderr: relay.stderr, ms: Date.now() - started };
}

function startRelay(w: Workspace, port: number, channel: string): RuntimeChild {
  return spawnRuntime(RELAY, {
    args: ["-d", DPU_PCI, "-r", HOST_PCI, "--storage-server", `127.0.0.1:${port}`, "--command-channel-name", channel, "--control-timeout", "2"],
    env: { ...w.env, DOCA_SIM_SIDE: "dpu" },
  });
}

/** The relay against a fake target in `mode`, with no host: how it ended (within 60 s). */
async function relayAgainstTarget(tag: string, mode: "close" | "flood") {
  const w = space(tag);
  const target = await fakeTarget(mode);
  try {
    return await ended(startRelay(w, target.port, uniqueName("relay")), 60_000);
  } finally {
    target.server.close();
  }
}

/** One error line, one prefix, and no "storage-relay: error: storage-relay: …". */
function oneErrorLine(stderr: string, pattern: RegExp): void {
  assert.match(stderr, pattern);
  assert.doesNotMatch(stderr, /error: storage-relay:/);
}

/**
 * The relay between an answering target and tests/helpers/storage-host.ts in `hostMode`, which sends one message
 * (or part of one) and prints "sent": how the relay ended (within 30 s) and what reached the target.
 */
async function relayAgainstHost(tag: string, hostMode: string, targetMode: "answer" | "bad-rdma" = "answer", killHost = false): Promise<{ code: number | null; stderr: string; targetTypes: number[] }> {
  const w = space(tag);
  const target = await fakeTarget(targetMode);
  const channel = uniqueName("relay");
  const relay = startRelay(w, target.port, channel);
  const host = spawnRuntime(HOST, { args: [channel, hostMode], env: { ...w.env, DOCA_SIM_SIDE: "host" } });
  try {
    assert.equal(await host.readLine(60_000), "sent");
    if (killHost) host.kill();
    const r = await ended(relay, 30_000);
    return { code: r.code, stderr: r.stderr, targetTypes: target.types };
  } finally {
    await host.close();
    relay.kill();
    target.server.close();
  }
}

describe("storage-relay against peers that misbehave", { skip: noRdma }, () => {
  test("the target hangs up while the relay waits for the host: exit 1 at once, naming the target", { timeout: 120_000 }, async () => {
    const r = await relayAgainstTarget("relay-target-gone", "close");
    assert.equal(r.code, 1, r.stderr);
    oneErrorLine(r.stderr, /^storage-relay: error: the storage target 127\.0\.0\.1:\d+ closed the connection while the relay waited for the host$/m);
  });

  test("a target that sends what nothing asked for, endlessly: exit 1 at once (its unread messages are bounded)", { timeout: 120_000 }, async () => {
    const r = await relayAgainstTarget("relay-target-flood", "flood");
    assert.equal(r.code, 1, r.stderr);
    oneErrorLine(r.stderr, /^storage-relay: error: the storage target 127\.0\.0\.1:\d+ sent more than 64 control messages nothing asked for \(the last a error_response\) while the relay waited for the host$/m);
  });

  test("a host that sends part of a message and stalls: the relay ends within --control-timeout", { timeout: 120_000 }, async () => {
    // 2 s of --control-timeout, and room for two loaded cores; without the bound it waits as long as the host lives
    const r = await relayAgainstHost("relay-host-stall", "partial");
    assert.equal(r.code, 1, r.stderr);
    oneErrorLine(r.stderr, /^storage-relay: error: the host sent 8 bytes of a control message and not the rest within 2 s$/m);
  });

  const refusals = [
    ["cores0", /the host's init_storage_request asks for 0 cores: one core is served/],
    ["tx-max", /the host's init_storage_request asks for 4294967295 transactions: from 1 to 4096/],
    ["bad-descriptor", /the host's descriptor \(its memory exported over PCI\) cannot be imported: /],
  ] as const;
  for (const [mode, why] of refusals) {
    test(`an init request the relay cannot serve (${mode}) is refused before anything reaches the target`, { timeout: 120_000 }, async () => {
      const r = await relayAgainstHost(`relay-${mode}`, mode);
      assert.equal(r.code, 1, r.stderr);
      oneErrorLine(r.stderr, new RegExp(`^storage-relay: error: ${why.source}`, "m"));
      assert.deepEqual(r.targetTypes, [1], "the target received the query only");
    });
  }

  test("bytes that are no message: the error names the peer that sent them", { timeout: 120_000 }, async () => {
    const r = await relayAgainstHost("relay-garbage", "garbage");
    assert.equal(r.code, 1, r.stderr);
    oneErrorLine(r.stderr, /^storage-relay: error: the host sent bytes that are not a storage control message: unknown control message type 99$/m);
    assert.deepEqual(r.targetTypes, [], "nothing reached the target");
  });

  test("RDMA connection details the relay cannot connect to: the error names the target and the connection", { timeout: 120_000 }, async () => {
    const r = await relayAgainstHost("relay-bad-rdma", "init", "bad-rdma");
    assert.equal(r.code, 1, r.stderr);
    oneErrorLine(r.stderr, /^storage-relay: error: the storage target 127\.0\.0\.1:\d+ sent RDMA connection details \(its data connection\) that cannot be connected to: \S*doca_rdma_connect/m);
  });

  test("a host killed while the relay waits for it: one line, in every task's words (the host disconnected while …)", { timeout: 120_000 }, async () => {
    const r = await relayAgainstHost("relay-host-killed", "idle", "answer", true);
    assert.equal(r.code, 1, r.stderr);
    oneErrorLine(r.stderr, /^storage-relay: error: the host disconnected while the relay waited for its query_storage_request \(its Comch connection closed\)$/m);
    assert.equal(r.stderr.trim().split("\n").filter((l) => /error|failed/.test(l)).length, 1, r.stderr);
  });
});
