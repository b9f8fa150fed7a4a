/**
 * Comch messages nobody reads are bounded in the program too (issue 17 §5, the TypeScript layer; docs/FAULTS.md
 * "Comch bounds"). DOCA hands every control-path message to a callback, with no flow control: what the program has
 * not read waits in its memory. An endpoint bounds that (maxUnreadBytes, all connections together); past it, the
 * connection holding the most is cut, its unread messages dropped, and its reader told why (OverflowError).
 *  - a host client that sends and never reads the echoes: its connection is cut, recv() says why;
 *  - a DPU server that serves one client and never reads two others that flood it: the flooders are disconnected,
 *    the served client still gets its echoes, the server's unread bytes stay within the bound (RSS printed;
 *    32 MiB of floods, 256 MiB with DOCA_TS_SLOW=1);
 *  - clients that connect and leave before the server accepts them do not pile up in its accept queue.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { DPU_PCI, dpuEnv, HOST_PCI, uniqueName } from "./helpers/sim-env.ts";
import { type RuntimeChild, spawnRuntime } from "./helpers/spawn-runtime.ts";
import { ComchClient, Device, OverflowError, ProgressEngine } from "../mod.ts";

const slow = process.env.DOCA_TS_SLOW === "1";
const MESSAGE = 4000;

async function startDpu(op: Record<string, unknown>): Promise<RuntimeChild> {
  const dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
  await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
  await dpu.request({ ...op, repPci: HOST_PCI });
  return dpu;
}

/** Sends `count` messages of MESSAGE bytes (16 in flight) until done or the connection is cut; returns how many went. */
async function flood(client: ComchClient, count: number): Promise<number> {
  const conn = client.connection;
  const payload = new Uint8Array(MESSAGE).fill(0x5a);
  let sent = 0, next = 0, stopped = false;
  const worker = async () => {
    while (!stopped && next < count) {
      next++;
      try {
        await conn.send(payload);
        sent++;
      } catch {
        stopped = true;
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return sent;
}

/** Resolves when the client's connection ends (watching keeps the engine pumped, and reads nothing). */
function disconnected(client: ComchClient, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the connection was not cut within ${timeoutMs} ms`)), timeoutMs);
    client.connection.onDisconnect(() => (clearTimeout(timer), resolve()));
  });
}

describe("ffi: Comch messages nobody reads are bounded", { timeout: 240_000 }, () => {
  let dev: Device, pe: ProgressEngine;
  before(() => {
    dev = Device.open(HOST_PCI);
    pe = new ProgressEngine();
  });
  after(() => {
    pe.close();
    dev.close();
  });

  test("a client that never reads its echoes is cut at its bound, and recv() says why", async () => {
    const name = uniqueName("unread-client");
    const dpu = await startDpu({ op: "serve", name });
    try {
      const maxUnreadBytes = 64 * 1024;
      await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000, maxUnreadBytes });
      assert.equal(client.maxUnreadBytes, maxUnreadBytes);
      const conn = client.connection;
      const payload = new Uint8Array(MESSAGE).fill(1);
      // 100 echoes of 4 KB are ~400 KB: far past 64 KiB. Sending keeps the engine pumped, so echoes arrive meanwhile.
      for (let i = 0; i < 100 && conn.connected; i++) await conn.send(payload).catch(() => {});
      // The echoes may still be on their way: watching for the disconnect keeps the engine pumped without reading.
      await disconnected(client, 30_000);
      assert.ok(client.unreadBytes <= maxUnreadBytes, `${client.unreadBytes} unread bytes > ${maxUnreadBytes}`);
      await assert.rejects(conn.recv({ timeoutMs: 5_000 }), (e: unknown) => {
        assert.ok(e instanceof OverflowError, String(e));
        assert.match(e.message, /maxUnreadBytes/);
        return true;
      });
      assert.equal(conn.connected, false, "the cut connection reads as disconnected");
    } finally {
      await dpu.close();
    }
  });

  test("a server cuts the clients it never reads; the one it serves goes on; its memory stays bounded", async () => {
    const name = uniqueName("unread-server");
    const maxUnreadBytes = slow ? 64 << 20 : 1 << 20;
    const dpu = await startDpu({ op: "hoard", name, maxUnreadBytes });
    try {
      await using served = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      const before = await dpu.request<{ rss: number }>({ op: "hoardStatus" });
      await using a = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      await using b = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      // 32 MiB (256 MiB slow) in all from the two flooders, while the served client keeps talking
      const each = Math.floor((slow ? 256 << 20 : 32 << 20) / MESSAGE / 2);
      const echo = (async () => {
        const conn = served.connection;
        for (let i = 0; i < 50; i++) {
          await conn.send(new TextEncoder().encode(`ping ${i}`));
          assert.equal(new TextDecoder().decode(await conn.recv({ timeoutMs: 20_000 })), `ping ${i}`);
        }
      })();
      const [sentA, sentB] = await Promise.all([flood(a, each), flood(b, each), echo]);
      await Promise.all([a, b].map((c) => disconnected(c, 30_000)));
      const status = await dpu.request<{ unreadBytes: number; connections: number; rss: number }>({ op: "hoardStatus" });
      const grownMiB = (status.rss - before.rss) / 2 ** 20;
      console.log(
        `ffi-comch-unread: flooders sent ${((sentA + sentB) * MESSAGE / 2 ** 20).toFixed(1)} MiB; server unread ${status.unreadBytes} B ` +
          `(bound ${maxUnreadBytes}); server RSS ${(before.rss / 2 ** 20).toFixed(1)} → ${(status.rss / 2 ** 20).toFixed(1)} MiB`,
      );
      assert.equal(a.connection.connected, false, "flooder a was disconnected");
      assert.equal(b.connection.connected, false, "flooder b was disconnected");
      assert.equal(served.connection.connected, true, "the served client is still connected");
      assert.equal(status.connections, 1, "only the served client is left");
      assert.ok(status.unreadBytes <= maxUnreadBytes, `${status.unreadBytes} unread bytes > ${maxUnreadBytes}`);
      // Unbounded, the server would hold every flooded byte; JS heaps and GC timing make RSS loose, not meaningless.
      assert.ok(grownMiB < 2 * maxUnreadBytes / 2 ** 20 + 24, `server RSS grew by ${grownMiB.toFixed(1)} MiB`);
    } finally {
      await dpu.close();
    }
  });

  test("clients that leave before they are accepted do not pile up in the accept queue", async () => {
    const name = uniqueName("unread-accept");
    const dpu = await startDpu({ op: "hoard", name, maxUnreadBytes: 1 << 20 });
    try {
      await using first = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      for (let i = 0; i < 20; i++) {
        const c = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
        await c.close();
      }
      // give the server time to see them leave, then a live client: the next accept is that one, not a dead one
      await new Promise((r) => setTimeout(r, 300));
      await using live = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      const next = await dpu.request<{ connected: boolean }>({ op: "acceptNext" });
      assert.equal(next.connected, true);
      assert.equal(first.connection.connected && live.connection.connected, true);
    } finally {
      await dpu.close();
    }
  });
});
