/**
 * StopWatch (tasks/common/stop-watch.ts): one watch of a loop's stops for all its waits, as comch-stream's lanes
 * use it. A stop before a wait or during any number of concurrent waits ends them with the stop's own error, named
 * for the step the loop was at; a peer's notice does the same; the first stop wins; waits otherwise settle as
 * their promise does; disposing it stops listening.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { StopWatch } from "../tasks/common/stop-watch.ts";
import { InterruptedError } from "../tasks/common/interrupt.ts";

const never = <T>() => new Promise<T>(() => {});

test("waits settle as their promises do while nothing stops the loop", async () => {
  const controller = new AbortController();
  using stop = new StopWatch(controller.signal, () => "step");
  assert.equal(await stop.wait(Promise.resolve(7)), 7);
  await assert.rejects(stop.wait(Promise.reject(new Error("own failure"))), /own failure/);
});

test("an abort ends every wait under way with the interruption, worded for the step at that moment", async () => {
  const controller = new AbortController();
  let step = 1;
  using stop = new StopWatch(controller.signal, () => `sending message ${step}`);
  const lanes = [stop.wait(never()), stop.wait(never()), stop.wait(never())];
  step = 42;
  controller.abort("SIGTERM");
  for (const lane of lanes) {
    await assert.rejects(lane, (e: unknown) => e instanceof InterruptedError && /interrupted \(SIGTERM\) while sending message 42$/.test(e.message));
  }
  // and every later wait, at once, whatever its promise does
  await assert.rejects(stop.wait(Promise.resolve(1)), InterruptedError);
});

test("a signal already aborted stops the first wait", async () => {
  const controller = new AbortController();
  controller.abort("SIGINT");
  using stop = new StopWatch(controller.signal, () => "receiving message 1");
  await assert.rejects(stop.wait(Promise.resolve(1)), /interrupted \(SIGINT\) while receiving message 1/);
});

test("a peer's notice ends the waits with its own error; a later abort does not replace it", async () => {
  const controller = new AbortController();
  let tell!: (e: Error) => void;
  const notice = new Promise<never>((_, reject) => (tell = reject));
  using stop = new StopWatch(controller.signal, () => "step", [notice]);
  const waiting = stop.wait(never());
  tell(new Error("the DPU side stopped: interrupted (SIGINT)"));
  await assert.rejects(waiting, /the DPU side stopped/);
  controller.abort("SIGTERM");
  await assert.rejects(stop.wait(never()), /the DPU side stopped/);
});

test("disposing it removes its listener: an abort after the loop is not its stop", async () => {
  const controller = new AbortController();
  const stop = new StopWatch(controller.signal, () => "step");
  stop[Symbol.dispose]();
  controller.abort("SIGINT");
  assert.equal(await stop.wait(Promise.resolve(5)), 5);
});

test("no signal: only the peer's notice and the promises themselves end waits", async () => {
  using stop = new StopWatch(undefined, () => "step");
  assert.equal(await stop.wait(Promise.resolve("x")), "x");
});

test("an idle limit ends waits that go on with none settling, and only then", { timeout: 60_000 }, async () => {
  let n = 0;
  // sized for a loaded machine: a 200 ms timer may fire late, not seven times late
  using stop = new StopWatch(undefined, () => "step", [], { ms: 1_500, error: () => new Error(`gave up after 1.5 s (${++n})`) });
  // waits that settle keep the loop alive past the limit
  for (let i = 0; i < 12; i++) await stop.wait(new Promise((r) => setTimeout(r, 200)));
  // idle time with nothing under way does not count against the next wait
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(await stop.wait(Promise.resolve("fresh")), "fresh");
  const stuck = stop.wait(new Promise(() => {}));
  const started = performance.now();
  await assert.rejects(stuck, /gave up after 1.5 s \(1\)/);
  assert.ok(performance.now() - started < 15_000, "ended within a few checks");
  await assert.rejects(stop.wait(Promise.resolve(1)), /\(1\)/); // the same stop for every later wait
});
