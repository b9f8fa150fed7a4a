// The ownership tree: parents close their children first, forgotten children do not pile up, and a context closed
// with live children (a Comch client with a producer on its connection) frees every native object. Leak checks need
// the software device's live-object counter: on real DOCA they are skipped (with the reason), never passed blindly.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { DPU_PCI, dpuEnv, HOST_PCI, uniqueName } from "./helpers/sim-env.ts";
import { spawnRuntime } from "./helpers/spawn-runtime.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Resource } from "../ffi/engine/resource.ts";
import {
  Access,
  Buf,
  BufInventory,
  ComchClient,
  Device,
  Dma,
  liveObjects,
  Mmap,
  NativeMemory,
  openDevice,
  ProgressEngine,
} from "../mod.ts";

const noCounter = noLiveCounter;

/** The ffi/README.md example, verbatim apart from the assertion (tests/ffi-readme.test.ts runs it once). */
async function readmeExample(): Promise<void> {
  using dev = openDevice();
  using pe = new ProgressEngine();
  using src = NativeMemory.alloc(4096), dst = NativeMemory.alloc(4096);
  src.bytes.fill(7);
  using map = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  using map2 = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
  using inv = new BufInventory(2);
  await using dma = new Dma(dev, pe);
  await dma.memcpy(inv.bufByData(map, src.address, 4096), inv.bufByAddr(map2, dst.address, 4096));
  if (dst.bytes[4095] !== 7) throw new Error("the copy did not land");
}

describe("ffi: ownership tree", () => {
  test("the README example runs 10,000 times with a constant number of live native objects", { skip: noCounter, timeout: 600_000 }, async () => {
    const baseline = liveObjects();
    for (let i = 0; i < 10_000; i++) {
      await readmeExample();
      // The inline Bufs are closed by their inventory: nothing waits for the garbage collector.
      if (liveObjects() !== baseline) assert.fail(`iteration ${i}: ${liveObjects()} live objects, expected ${baseline}`);
    }
  });

  test("an inventory closes the Bufs nobody kept (they are not held by it, but it still frees them)", { skip: noCounter }, async () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using mem = NativeMemory.alloc(8192);
    using map = Mmap.create({ memory: mem, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    using dma = new Dma(dev, pe);
    const before = liveObjects()!;
    const inv = new BufInventory(2);
    await dma.memcpy(inv.bufByData(map, mem.address, 16), inv.bufByAddr(map, mem.address + 4096, 16));
    assert.equal(liveObjects(), before + 3 + dma.keptTasks, "an inventory and two inline bufs (and the task kept for reuse)");
    inv.close(); // the two inline Bufs first (alive or already collected), then the inventory
    assert.equal(liveObjects(), before + dma.keptTasks, "the bufs and the inventory are gone");
  });

  test("closing a parent with a context below it stops and destroys the context first", { skip: noCounter }, () => {
    const before = liveObjects();
    const dev = Device.open(HOST_PCI);
    const pe = new ProgressEngine();
    const dma = new Dma(dev, pe);
    pe.close(); // the Dma is the engine's child: stopped (bounded, synchronously) and destroyed first
    assert.ok(dma.closed, "the Dma was closed with its engine");
    dev.close();
    assert.equal(liveObjects(), before);
  });

  test("Bufs cannot be forged: the constructor is private and look-alikes are refused", () => {
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    using dma = new Dma(dev, pe);
    const fake = Object.create(Buf.prototype);
    assert.throws(() => dma.memcpy(fake, fake), /must be a Buf/);
    // deno-lint-ignore no-explicit-any
    const BufCtor = Buf as any;
    assert.throws(() => new BufCtor(1234), /not with new Buf/);
    const lookalike = { handle: 1234, native: 1234, length: 16, address: 0, assertOpen() {} };
    // deno-lint-ignore no-explicit-any
    assert.throws(() => dma.memcpy(lookalike as any, lookalike as any), /must be a Buf/);
  });
});

/** A tree node whose native destroy fails until told otherwise (the mechanism every wrapper inherits). */
class Stubborn extends Resource {
  protected readonly kind = "Stubborn";
  failing = true;
  destroyed = 0;
  constructor(handle: number, parents: Resource[] = []) {
    super(handle, parents);
  }
  protected destroyNative(): void {
    if (this.failing) throw new Error("DOCA_ERROR_IN_USE (simulated)");
    this.destroyed++;
  }
  protected summary(): string {
    return "stub";
  }
}

describe("ffi: a failed native destroy", () => {
  test("leaves the object open, says so, and a retry works; children are closed first", async () => {
    const parent = new Stubborn(0x1000);
    const child = new Stubborn(0x2000, [parent]);
    child.failing = false;
    assert.throws(() => parent.close(), /IN_USE \(simulated\).*Stubborn is still open; close\(\) may be retried/);
    assert.equal(child.closed, true, "the child was closed first");
    assert.equal(parent.closed, false, "the parent stays open");
    await assert.rejects(parent.closeAsync(), /still open/);
    assert.equal(parent.closed, false);
    parent.failing = false;
    parent.close();
    assert.equal(parent.closed, true);
    assert.equal(parent.destroyed, 1, "destroyed exactly once");
    parent.close();
    assert.equal(parent.destroyed, 1, "closing twice does nothing");
  });
});

describe("ffi: closing a Comch client with an open producer", { timeout: 120_000 }, () => {
  test("closes the producer first, frees every native object, and the engine closes afterwards", { skip: noCounter }, async () => {
    const dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
    try {
      const name = uniqueName("tree");
      await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
      await dpu.request({ op: "serve", name, repPci: HOST_PCI });
      const before = liveObjects();
      const dev = Device.open(HOST_PCI);
      const pe = new ProgressEngine();
      const client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
      const producer = await client.connection.createProducer({ buffers: 4 });
      assert.ok(liveObjects()! > before!, "the client, producer and its buffers exist");
      await client.close();
      assert.ok(producer.closed, "the producer on the client's connection was closed first");
      assert.ok(client.closed, "the client is closed");
      pe.close();
      dev.close();
      assert.equal(liveObjects(), before, "every native object was freed");
    } finally {
      await dpu.close();
    }
  });

  test("an exception thrown in a disconnect watcher reaches the next recv()", async () => {
    const dpu = spawnRuntime(new URL("./helpers/dpu-side.ts", import.meta.url), { env: dpuEnv() });
    const name = uniqueName("boom");
    await dpu.request({ op: "open", pci: DPU_PCI }, 30_000);
    await dpu.request({ op: "serve", name, repPci: HOST_PCI });
    using dev = Device.open(HOST_PCI);
    using pe = new ProgressEngine();
    await using client = await ComchClient.connect({ device: dev, name, pe, timeoutMs: 20_000 });
    const conn = client.connection;
    const watched = new Promise<void>((resolve) =>
      conn.onDisconnect(() => {
        resolve();
        throw new Error("boom from a watcher");
      })
    );
    dpu.kill();
    await dpu.exited;
    await watched; // the watcher threw right after resolving, inside the same dispatch: already recorded
    await assert.rejects(conn.recv(), /boom from a watcher/);
  });
});
