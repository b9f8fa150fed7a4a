/**
 * ffi: an RDMA connection's end is noticed without other work. A registered onDisconnect handler keeps the progress
 * engine running, so a peer's disconnect over RDMA CM reaches the handler and `state` while the program is idle; and
 * a task that fails because the connection is gone (the peer disconnected under it) leaves `state` "disconnected"
 * and runs the handlers, even on a connection made by exchanged details, which has no state callbacks.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { noRdma, rdmaDevice, rdmaPair } from "./helpers/rdma-pair.ts";
import { listenOnTestPort } from "../tools/ports.ts";
import { DocaError, ProgressEngine, Rdma } from "../mod.ts";

/** Resolves with what happened first: the promise's value, or "timeout" after ms. */
function within<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([p, new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), ms)))]).finally(() => clearTimeout(timer));
}

describe("ffi: RDMA connection end", { skip: noRdma }, () => {
  test("RDMA CM: the peer's disconnect reaches onDisconnect and state while nothing else runs", { timeout: 60_000 }, async () => {
    using dev = rdmaDevice();
    using pe = new ProgressEngine();
    await using server = await Rdma.create(dev, pe);
    await using client = await Rdma.create(dev, pe);
    const port = listenOnTestPort(server);
    const [s, c] = await Promise.all([server.accept({ timeoutMs: 20_000 }), client.connectTo("127.0.0.1", port, { timeoutMs: 20_000 })]);
    const ended = new Promise<unknown>((resolve) => s.onDisconnect(resolve));
    c.disconnect();
    const reason = await within(ended, 15_000);
    assert.notEqual(reason, "timeout", "onDisconnect was not called within 15 s of the peer's disconnect");
    assert.ok(reason instanceof DocaError, String(reason));
    assert.equal(s.state, "disconnected");
    assert.equal(server.connections.length, 0);
  });

  test("a task failing because the peer disconnected leaves state \"disconnected\" and runs onDisconnect", { timeout: 60_000 }, async () => {
    await using p = await rdmaPair(1 << 20);
    const ended = new Promise<unknown>((resolve) => p.ab.onDisconnect(resolve));
    p.ba.disconnect();
    // The first write after the peer left fails (NOT_CONNECTED once the end was seen, CONNECTION_RESET if in flight)
    let failure: unknown;
    for (let i = 0; i < 100 && failure === undefined; i++) {
      await p.ab.write(p.local(0, 64), p.remote(0, 64, true)).catch((e) => (failure = e));
      if (failure === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(failure instanceof DocaError && /CONNECTION_RESET|NOT_CONNECTED/.test(String(failure)), String(failure));
    assert.equal(p.ab.state, "disconnected");
    assert.equal(await within(ended, 5_000), failure, "onDisconnect gets the task's error");
    assert.equal(p.a.connections.length, 0);
    // Later work is refused at once with that reason, never submitted
    await assert.rejects(p.ab.write(p.local(0, 64), p.remote(0, 64, true)), (e) => e === failure);
  });
});
