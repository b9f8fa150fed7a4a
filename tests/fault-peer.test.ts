/**
 * Hostile or broken peers on Comch: a scripted fake peer (tests/helpers/faults/fake-peer.ts, FFI ComchClient or
 * ComchServer) speaks DMA Copy to a real `tasks/dma-copy.ts` side. For every scenario the real side must exit
 * non-zero with a clear error within its --timeout, leave nothing under the target name (nor a temporary file),
 * answer bad input with a failure STATUS, and no DMA may touch bytes outside what the peer exported (checked on every
 * DOCA_SIM_TRACE line against the ranges the fake peer reports).
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256File, writePatternFile } from "./helpers/tasks/workspace.ts";
import {
  assertTraceInside,
  DPU_PCI,
  FaultCounters,
  faultSpace,
  HOST_PCI,
  jsonLines,
  readTrace,
  removeSpaces,
  startDmaCopy,
  startHelper,
} from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-peer");
after(() => {
  removeSpaces();
  counters.print();
});

const SIZE = 10_000;
const T = 120_000; // hard kill of any child (a test failure, never reached when things work)

interface HostCase {
  name: string;
  /** What the DPU's error must say. */
  error: RegExp;
  /** The DPU must have answered a failure STATUS on a still-open connection. */
  status?: boolean;
  /** The DPU owns the file and sends it (scenario names recv-*). */
  dpuHasFile?: boolean;
  timeoutSeconds?: number;
  /**
   * NVIDIA's classic sequence has the DPU commit its file before its final STATUS: when the host dies after its
   * descriptor, the DMA may already have run. Then the DPU may succeed, but only with every byte the host exported.
   */
  mayComplete?: boolean;
  /** File size (default SIZE). */
  size?: number;
}

const hostCases: HostCase[] = [
  { name: "truncated", error: /too short|3 bytes/, status: true },
  { name: "wrong-length", error: /DIRECTION.*16 bytes.*20/, status: true },
  { name: "unknown-type", error: /unknown message type 119/, status: true },
  { name: "bad-bool", error: /file_in_host/, status: true },
  { name: "size-overflow", error: /18446744073709551615|beyond 2\^53|supports at most/, status: true },
  { name: "size-overflow-ext", error: /18446744073709551615|beyond 2\^53|supports at most/, status: true },
  { name: "desc-len-bigger", error: /EXPORT_DESCRIPTOR declares a 1088-byte descriptor but carries 88/, status: true },
  { name: "desc-len-smaller", error: /EXPORT_DESCRIPTOR declares a 10-byte descriptor but carries 88/, status: true },
  { name: "desc-len-huge", error: /EXPORT_DESCRIPTOR declares a 18446744073709551615-byte descriptor/, status: true },
  {
    name: "forged-random",
    error: /doca_mmap_create_from_export|DOCA_ERROR_(INVALID_VALUE|NOT_PERMITTED)/,
    status: true,
  },
  { name: "flipped-key", error: /doca_mmap_create_from_export.*NOT_PERMITTED|DOCA_ERROR_NOT_PERMITTED/, status: true },
  { name: "grown-range", error: /DOCA_ERROR_NOT_PERMITTED/, status: true },
  { name: "replayed", error: /DOCA_ERROR_NOT_PERMITTED/, status: true },
  { name: "small-range", error: /outside its export/, status: true },
  { name: "addr-below", error: /outside its export/, status: true },
  { name: "recv-small-range", error: /outside its export/, status: true, dpuHasFile: true },
  { name: "recv-read-only", error: /DOCA_ERROR_NOT_PERMITTED/, status: true, dpuHasFile: true },
  { name: "ext-window-outside", error: /outside its export/, status: true },
  { name: "ext-bad-slot", error: /CHUNK_READY slot 5/, status: true },
  { name: "ext-bad-offset", error: /CHUNK_READY slot 0 offset 4096/, status: true },
  { name: "ext-too-long", error: /out of order or out of range/, status: true },
  { name: "ext-bad-checksum", error: /SHA-256 mismatch/, status: true },
  { name: "ext-silent-after-descriptor", error: /next chunk from the host.*(time|Time)/, timeoutSeconds: 1 },
  { name: "silent", error: /direction message|timed out|time/i, timeoutSeconds: 1 },
  { name: "kill-after-connect", error: /error: /, timeoutSeconds: 2 },
  { name: "kill-after-direction", error: /error: /, timeoutSeconds: 2 },
  { name: "kill-after-descriptor", error: /error: /, timeoutSeconds: 2, mayComplete: true },
  // Dies between the DPU's DMA and its STATUS: the DPU either succeeds with the whole file or fails with none.
  { name: "kill-after-dma", error: /error: /, timeoutSeconds: 2, mayComplete: true, size: 2 * 1024 * 1024 },
  { name: "ext-kill-during-dma", error: /error: /, timeoutSeconds: 2 },
  { name: "ext-kill-before-status", error: /error: /, timeoutSeconds: 2 },
  // Dies after the checksum exchange, before the DPU's final STATUS: whole file and exit 0, or no file and exit ≠ 0.
  { name: "ext-kill-after-checksum", error: /error: /, timeoutSeconds: 2, mayComplete: true, size: 1024 * 1024 },
];

/** A fake peer that failed on its own (exit 1/2: no listen, no connect, bad scenario) makes its test void, never passed. */
function assertFakeTookPart(f: { code: number | null; stderr: string }): void {
  assert.ok(f.code !== 1 && f.code !== 2, `the fake peer failed on its own (exit ${f.code}): ${f.stderr}`);
}

describe("the fake peer itself", () => {
  test("a fake DPU that cannot listen (its server name taken) fails loudly: exit 1 and why", { timeout: 90_000 }, async () => {
    const w = faultSpace("self-taken");
    const env = { ...w.env, DOCA_SIM_SIDE: "dpu" };
    const first = startHelper("fake-peer.ts", ["dpu", "dpu-truncated", "100", "taken-name"], env, 80_000);
    await first.waitForStderr("fake DPU listening", 60_000);
    const second = await startHelper("fake-peer.ts", ["dpu", "dpu-truncated", "100", "taken-name"], env, 80_000).done;
    first.kill();
    await first.done;
    assert.equal(second.code, 1, `stdout:\n${second.stdout}\nstderr:\n${second.stderr}`);
    assert.match(second.stderr, /fake-peer: dpu dpu-truncated: failed before the real side connected: .*IN_USE/);
  });

  test("bad arguments are a usage error (exit 2), not a scenario", { timeout: 60_000 }, async () => {
    const w = faultSpace("self-usage");
    const r = await startHelper("fake-peer.ts", ["nobody", "x", "1", "y"], w.env, 50_000).done;
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /fake-peer: usage: /);
  });
});

describe("a hostile or broken host against a real DPU (dma-copy --side dpu)", () => {
  for (const c of hostCases) {
    test(`fake host: ${c.name}`, { timeout: 60_000 }, async () => {
      const w = faultSpace(`h-${c.name}`);
      const target = join(w.dpu, "data.bin");
      const srcHash = c.dpuHasFile ? writePatternFile(target, c.size ?? SIZE, 3) : undefined;
      const server = `fault-${c.name}`;
      const timeout = String(c.timeoutSeconds ?? 3);
      const size = c.size ?? SIZE;
      // The fake host starts first and waits for the DPU's server: the DPU's short --timeout (1-3 s) then times the
      // scenario, never the fake's start-up on a loaded machine (Node's start alone can take seconds there).
      const fake = startHelper("fake-peer.ts", ["host", c.name, String(size), server], {
        ...w.env,
        DOCA_SIM_SIDE: "host",
      }, T);
      await fake.waitForStderr("fake host connecting", 60_000);
      const t0 = Date.now();
      const dpu = startDmaCopy(
        "dpu",
        ["-f", target, "-p", DPU_PCI, "-r", HOST_PCI, "--timeout", timeout, "--server-name", server],
        w.env,
        T,
      );
      const d = await dpu.done;
      const elapsed = Date.now() - t0;
      if (c.name.includes("silent")) fake.kill(); // it would sleep on; the DPU's behaviour is what counts
      const f = await fake.done;
      assertFakeTookPart(f);
      counters.faults++;
      counters.inputs++;
      const events = jsonLines(f.stdout);
      if (c.mayComplete && d.code === 0) {
        const got = readFileSync(target);
        assert.equal(got.length, size, "complete file");
        assert.ok(got.every((b) => b === 0xab), "the bytes the host exported");
        assert.deepEqual(w.list(w.dpu), ["data.bin"], "no temporary file left");
        counters.copies++;
        assertTraceInside(
          readTrace(w.trace),
          events.filter((e) => e.event === "exported").map((e) => ({
            address: e.address as number,
            length: e.length as number,
          })),
        );
        return;
      }
      assert.notEqual(
        d.code,
        0,
        `DPU must fail; stdout:\n${d.stdout}\nstderr:\n${d.stderr}\nfake:\n${f.stdout}${f.stderr}`,
      );
      assert.equal(d.signal, null, "the DPU must exit, not crash");
      assert.match(d.stderr, /error: /, "error line on stderr");
      assert.match(d.stderr, c.error, `the error names the problem; stderr:\n${d.stderr}`);
      assert.ok(elapsed < Number(timeout) * 1000 + 20_000, `bounded by the timeout (took ${elapsed} ms)`);
      if (c.dpuHasFile) {
        assert.deepEqual(w.list(w.dpu), ["data.bin"], "the DPU's source file alone");
        assert.equal(sha256File(target), srcHash, "the source is untouched");
      } else {
        assert.equal(
          existsSync(target),
          false,
          `the DPU failed (exit ${d.code}) but left a file under the target name; stderr:\n${d.stderr}`,
        );
        assert.deepEqual(w.list(w.dpu), [], "no temporary file left");
      }
      if (c.status) {
        const status = events.find((e) => e.event === "got" && e.type === 3);
        assert.ok(status, `the DPU answered with a STATUS; fake saw:\n${f.stdout}\n${f.stderr}`);
        assert.equal(status.isSuccess, false, "a failure STATUS");
      }
      if (c.name === "recv-read-only") {
        const untouched = events.find((e) => e.event === "untouched");
        assert.equal(untouched?.ok, true, "the read-only export was not written");
      }
      const exported = events.filter((e) => e.event === "exported").map((e) => ({
        address: e.address as number,
        length: e.length as number,
      }));
      const lines = readTrace(w.trace);
      const allowed = assertTraceInside(lines, exported);
      if (
        [
          "forged-random",
          "flipped-key",
          "grown-range",
          "replayed",
          "small-range",
          "addr-below",
          "recv-small-range",
          "ext-window-outside",
          "ext-bad-slot",
          "ext-bad-offset",
          "ext-too-long",
          "recv-read-only",
        ].includes(c.name)
      ) {
        assert.equal(allowed.length, 0, `no DMA may run for ${c.name}; trace:\n${lines.map((l) => l.raw).join("\n")}`);
      }
      counters.bytesLost += 0;
    });
  }
});

interface DpuCase {
  name: string;
  /** The host has the file (sends). */
  hostHasFile: boolean;
  error: RegExp;
  status?: boolean;
}

const dpuCases: DpuCase[] = [
  { name: "dpu-kill-after-accept", hostHasFile: true, error: /error: / },
  { name: "dpu-silent", hostHasFile: true, error: /answer to the direction message|time/i },
  { name: "dpu-truncated", hostHasFile: true, error: /too short|2 bytes/, status: true },
  { name: "dpu-unknown", hostHasFile: true, error: /unknown message type 153/, status: true },
  { name: "dpu-kill-after-direction", hostHasFile: true, error: /error: / },
  { name: "dpu-oob-dma", hostHasFile: true, error: /refused|failure|failed/ },
  { name: "dpu-size-overflow", hostHasFile: false, error: /18446744073709551615|beyond 2\^53/, status: true },
  {
    name: "dpu-ext-bad-slot",
    hostHasFile: false,
    error: /CHUNK_READY slot \d+ offset 0 .*out of order or out of range/,
    status: true,
  },
  { name: "dpu-ext-silent", hostHasFile: false, error: /next chunk from the DPU.*(time|Time)/ },
  { name: "dpu-ext-bad-offset", hostHasFile: false, error: /CHUNK_READY slot 0 offset 12345/, status: true },
  { name: "dpu-ext-bad-checksum", hostHasFile: false, error: /SHA-256 mismatch/ },
  { name: "dpu-ext-kill-mid", hostHasFile: false, error: /error: / },
];

describe("a hostile or broken DPU against a real host (dma-copy --side host)", () => {
  for (const c of dpuCases) {
    test(`fake DPU: ${c.name}`, { timeout: 60_000 }, async () => {
      const w = faultSpace(`d-${c.name}`);
      const file = join(w.host, "data.bin");
      const size = c.name === "dpu-ext-bad-checksum" || c.name === "dpu-ext-kill-mid" ? 3 * 4096 + 5 : SIZE;
      const srcHash = c.hostHasFile ? writePatternFile(file, size, 5) : undefined;
      const server = `fault-${c.name}`;
      const t0 = Date.now();
      const fake = startHelper("fake-peer.ts", ["dpu", c.name, String(size), server], {
        ...w.env,
        DOCA_SIM_SIDE: "dpu",
      }, T);
      await fake.waitForStderr("fake DPU listening", 30_000);
      const extra = c.name.startsWith("dpu-ext-") ? ["--chunk-size", "4096"] : [];
      const host = startDmaCopy(
        "host",
        ["-f", file, "-p", HOST_PCI, "--timeout", "2", "--server-name", server, ...extra],
        w.env,
        T,
      );
      const h = await host.done;
      const elapsed = Date.now() - t0;
      if (c.name.includes("silent")) fake.kill();
      const f = await fake.done;
      assertFakeTookPart(f);
      counters.faults++;
      counters.inputs++;
      const events = jsonLines(f.stdout);
      assert.notEqual(
        h.code,
        0,
        `host must fail; stdout:\n${h.stdout}\nstderr:\n${h.stderr}\nfake:\n${f.stdout}${f.stderr}`,
      );
      assert.equal(h.signal, null, "the host must exit, not crash");
      assert.match(h.stderr, /error: /);
      assert.match(h.stderr, c.error, `the error names the problem; stderr:\n${h.stderr}`);
      assert.ok(elapsed < 25_000, `bounded by the timeout (took ${elapsed} ms)`);
      if (c.hostHasFile) {
        assert.deepEqual(w.list(w.host), ["data.bin"]);
        assert.equal(sha256File(file), srcHash, "the source is untouched");
      } else {
        assert.deepEqual(w.list(w.host), [], "nothing under the target name, no temporary file");
      }
      if (c.status) {
        const status = events.find((e) => e.event === "got" && e.type === 3);
        assert.ok(status, `the host answered with a STATUS; fake saw:\n${f.stdout}\n${f.stderr}`);
        assert.equal(status.isSuccess, false);
      }
      if (c.name === "dpu-oob-dma") {
        const dmas = events.filter((e) => e.event === "dma");
        assert.equal(dmas.length, 4, `four attempts; fake:\n${f.stdout}\n${f.stderr}`);
        for (const a of dmas) {
          counters.faults++;
          assert.notEqual(a.outcome, "allowed", `${a.what} must be refused`);
        }
      }
      assertTraceInside(readTrace(w.trace));
    });
  }
});

describe("a real peer killed in the middle of a streaming copy", () => {
  for (const victim of ["host", "dpu"] as const) {
    test(
      `the ${victim} is killed while DMA tasks run: the other side fails cleanly, no file, no access outside the export`,
      { timeout: 90_000 },
      async () => {
        const w = faultSpace(`mid-${victim}`);
        // host → DPU when the host dies (the DPU reads the host's window); DPU → host when the DPU dies
        const hostSends = victim === "host";
        const size = 64 * 1024 * 1024;
        const src = join(hostSends ? w.host : w.dpu, "data.bin");
        const srcHash = writePatternFile(src, size, 9);
        const server = `fault-mid-${victim}`;
        const common = ["--timeout", "3", "--server-name", server, "--chunk-size", "65536", "--slots", "2", "--quiet"];
        const dpu = startDmaCopy(
          "dpu",
          ["-f", join(w.dpu, "data.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...common],
          w.env,
          T,
        );
        await dpu.waitForStderr("waiting for the host", 30_000);
        const host = startDmaCopy("host", ["-f", join(w.host, "data.bin"), "-p", HOST_PCI, ...common], w.env, T);
        // Kill once at least 20 DMA accesses are in the trace (the copy is well under way, far from its end)
        let lines = 0;
        for (let i = 0; i < 3000 && lines < 20; i++) {
          await new Promise((r) => setTimeout(r, 5));
          lines = readTrace(w.trace).length;
        }
        assert.ok(lines >= 20, "the copy started");
        (victim === "host" ? host : dpu).kill();
        const t0 = Date.now();
        const survivor = await (victim === "host" ? dpu : host).done;
        const elapsed = Date.now() - t0;
        await (victim === "host" ? host : dpu).done;
        counters.faults++;
        assert.notEqual(survivor.code, 0, `the surviving side must fail; stderr:\n${survivor.stderr}`);
        assert.equal(survivor.signal, null);
        assert.match(survivor.stderr, /error: /);
        assert.ok(elapsed < 3000 + 15_000, `bounded by the timeout (${elapsed} ms)`);
        const receiver = hostSends ? w.dpu : w.host;
        assert.deepEqual(w.list(receiver), [], "nothing under the target name, no temporary file");
        assert.equal(sha256File(src), srcHash, "the source is untouched");
        const trace = readTrace(w.trace);
        assertTraceInside(trace);
        // Every access goes to one exported window: all lines name the same range
        const ranges = new Set(trace.map((l) => `${l.rangeBase}+${l.rangeLen}`));
        assert.equal(ranges.size, 1, `one exported window: ${[...ranges].join(", ")}`);
        counters.bytesLost += 0;
      },
    );
  }
});
