/**
 * Load and soak: back-to-back dma-copy runs of random sizes and directions between ONE long-lived host process and
 * ONE long-lived DPU process (tests/helpers/faults/soak-side.ts calls tasks/dma-copy.ts's dmaCopy() in a loop):
 * ~50 copies normally, 1,000 with DOCA_TS_SLOW=1. Every file byte-identical (SHA-256), no descriptor leak
 * (/proc/<pid>/fd), no handle leak (liveObjects()), no stuck process (hard deadline). Then 8 concurrent Comch
 * clients on one server: every message delivered intact and every client sees its own replies.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { FaultCounters, faultSpace, jsonLines, removeSpaces, SLOW, startHelper } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-soak");
after(() => {
  removeSpaces();
  counters.print();
});

const COPIES = SLOW ? 1000 : 50;

describe("soak", () => {
  test(
    `${COPIES} back-to-back copies between one host and one DPU process`,
    { timeout: SLOW ? 240_000 : 120_000 },
    async () => {
      const w = faultSpace("soak");
      const seed = 20261122;
      const limit = SLOW ? 230_000 : 110_000;
      const t0 = Date.now();
      const dpu = startHelper("soak-side.ts", ["dpu", w.dpu, String(COPIES), String(seed), "soak"], {
        ...w.env,
        DOCA_SIM_SIDE: "dpu",
      }, limit);
      const host = startHelper("soak-side.ts", ["host", w.host, String(COPIES), String(seed), "soak"], {
        ...w.env,
        DOCA_SIM_SIDE: "host",
      }, limit);
      const [h, d] = await Promise.all([host.done, dpu.done]);
      const seconds = (Date.now() - t0) / 1000;
      for (const [who, r] of [["host", h], ["DPU", d]] as const) {
        assert.equal(
          r.signal,
          null,
          `${who} was stuck or crashed (${r.signal}); last lines:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`,
        );
        assert.equal(r.code, 0, `${who} failed; last lines:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
      }
      const hostDone = jsonLines(h.stdout).find((e) => e.done) as Record<string, number>;
      const dpuDone = jsonLines(d.stdout).find((e) => e.done) as Record<string, number>;
      assert.equal(hostDone.copies, COPIES);
      assert.equal(dpuDone.copies, COPIES);
      counters.copies += COPIES;
      counters.inputs += COPIES;
      for (const [who, s] of [["host", hostDone], ["DPU", dpuDone]] as const) {
        // A runtime may open a few descriptors lazily (Deno's blocking-thread pool does, once, within ~25 copies);
        // a leak grows with the number of copies.
        const fds = `${s.fdsAfterFirst} after the first copy, ${s.fdsMid} half-way, ${s.fdsEnd} at the end`;
        assert.ok(s.fdsEnd - s.fdsAfterFirst <= 4, `${who} leaked file descriptors: ${fds}`);
        if (COPIES >= 200) assert.ok(s.fdsEnd <= s.fdsMid, `${who} leaked file descriptors: ${fds}`);
        assert.equal(s.liveEnd, s.liveAfterFirst, `${who} leaked DOCA handles: ${s.liveAfterFirst} → ${s.liveEnd}`);
        assert.equal(s.liveEnd, 0, `${who}: no DOCA handle outlives its copy`);
      }
      assert.deepEqual(w.list(w.host), []);
      assert.deepEqual(w.list(w.dpu), []);
      console.log(`soak: ${COPIES} copies, ${hostDone.bytes} bytes in ${seconds.toFixed(1)} s, every SHA-256 equal`);
    },
  );

  test("8 concurrent clients on one Comch server: every message intact, every client gets its own replies", {
    timeout: 90_000,
  }, async () => {
    const w = faultSpace("multi");
    const msgs = SLOW ? 2000 : 200;
    const server = startHelper(
      "comch-multi.ts",
      ["server", "fault multi", "8"],
      { ...w.env, DOCA_SIM_SIDE: "dpu" },
      80_000,
    );
    await server.waitForStderr("multi server listening", 30_000);
    const clients = await startHelper("comch-multi.ts", ["clients", "fault multi", "8", String(msgs)], {
      ...w.env,
      DOCA_SIM_SIDE: "host",
    }, 80_000).done;
    const s = await server.done;
    const c = jsonLines(clients.stdout).find((e) => e.done) as
      | { replies: number[]; bad: number; errors: string[] }
      | undefined;
    assert.equal(clients.code, 0, `clients failed:\n${clients.stdout.slice(-3000)}\n${clients.stderr.slice(-2000)}`);
    assert.ok(c, clients.stdout);
    assert.deepEqual(c.replies, Array(8).fill(msgs), "every client got all of its replies");
    assert.equal(c.bad, 0);
    assert.equal(s.code, 0, `server failed:\n${s.stdout}\n${s.stderr}`);
    const sd = jsonLines(s.stdout).find((e) => e.done) as { echoed: number };
    assert.equal(sd.echoed, 8 * msgs, "the server saw every message once");
    counters.inputs += 8 * msgs;
  });
});
