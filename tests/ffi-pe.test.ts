import { describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { liveObjects, ProgressEngine } from "../mod.ts";

describe("ffi: progress engine", () => {
  test("an idle engine makes no progress", () => {
    using pe = new ProgressEngine();
    assert.equal(pe.progress(), false);
    assert.match(String(pe), /ProgressEngine \{/);
  });

  test("wait() sleeps for its timeout without spinning the CPU", async () => {
    using pe = new ProgressEngine();
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    const woke = await pe.wait(300);
    const wall = Date.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    assert.equal(woke, false, "nothing happened, so no event");
    assert.ok(wall >= 250, `waited ${wall} ms`);
    assert.ok(cpuMs < wall * 0.5, `used ${cpuMs} ms of CPU in ${wall} ms: that is spinning`);
  });

  test("close releases the engine; use after close throws", { skip: noLiveCounter }, () => {
    const before = liveObjects();
    const pe = new ProgressEngine();
    pe.close();
    pe.close();
    assert.throws(() => pe.progress(), /ProgressEngine is closed/);
    assert.equal(liveObjects(), before);
  });
});
