/**
 * Memory is bound to pages, and the /proc/PID/mem fallback reaches no more than process_vm_readv/writev (issue 17
 * §1, §2; docs/FAULTS.md "Memory bound to pages"). The exporter changes what lies at its exported addresses (munmap,
 * a file, shared memory or fresh memory mapped over them, mremap, mprotect, PROT_NONE, exec, MADV_DONTNEED, a
 * truncated shared file; and what must keep working: a forked child's exec, protections changed and restored) or destroys its mmap while the importer streams writes: sim/tests/pages_bound.c, one scenario per run, each
 * on both paths (DOCA_SIM_FORCE_PROC_MEM=1 is the test-only switch to the fallback), which must print the same lines.
 * The cross-process DMA cases of sim/tests/dma_remote.c run on the fallback too.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { FaultCounters, faultSpace, removeSpaces, repoRoot } from "./helpers/faults/common.ts";

const counters = new FaultCounters("fault-pages");
after(() => {
  removeSpaces();
  counters.print();
});

const bin = (name: string) => join(repoRoot, "build", "sim", "bin", name);

function run(name: string, scenario: string, forceProcMem: boolean): string {
  const program = bin(name);
  assert.ok(existsSync(program), `${program} is missing: run \`deno task sim:build\` first`);
  const w = faultSpace(`pages-${scenario}`);
  const env = { ...process.env, DOCA_SIM_DIR: w.sim, DOCA_SIM_LOG: "1", DOCA_SIM_STRICT: "1" } as Record<string, string>;
  delete env.DOCA_SIM_CONFIG;
  delete env.DOCA_SIM_SIDE;
  delete env.DOCA_SIM_TRACE;
  if (forceProcMem) env.DOCA_SIM_FORCE_PROC_MEM = "1";
  else delete env.DOCA_SIM_FORCE_PROC_MEM;
  const r = spawnSync(program, [scenario], { env, encoding: "utf8", timeout: 120_000 });
  counters.inputs++;
  counters.faults++;
  assert.equal(r.signal, null, `${name} ${scenario} crashed (${r.signal}); stderr:\n${r.stderr}`);
  assert.equal(r.status, 0, `${name} ${scenario}${forceProcMem ? " (fallback)" : ""} failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, new RegExp(`^PASS ${name} ${scenario}$`, "m"));
  // out_of_range does what DOCA leaves undefined on purpose; every other scenario is a clean DOCA program
  if (scenario !== "out_of_range") assert.doesNotMatch(r.stderr, /strict:/, "no strict-mode report");
  return r.stdout;
}

/** What each scenario must print on both paths (the anonymous cases depend on the kernel: see pages_bound.c) */
const pages: Record<string, RegExp> = {
  munmap: /ok read after munmap: DOCA_ERROR_NOT_PERMITTED.*\nok write after munmap: DOCA_ERROR_NOT_PERMITTED/,
  anon_over: /ok read after anon_over: DOCA_(ERROR_NOT_PERMITTED|SUCCESS)/,
  file_over: /ok read after file_over: DOCA_ERROR_NOT_PERMITTED.*\nok write after file_over: DOCA_ERROR_NOT_PERMITTED, the host's memory and files unchanged/,
  mremap: /ok read after mremap: DOCA_(ERROR_NOT_PERMITTED|SUCCESS)/,
  mprotect_ro: /ok write after mprotect_ro: DOCA_ERROR_NOT_PERMITTED, the host's memory and files unchanged/,
  prot_none: /ok read after prot_none: DOCA_ERROR_NOT_PERMITTED.*\nok write after prot_none: DOCA_ERROR_NOT_PERMITTED/,
  exec: /ok read after exec: DOCA_ERROR_IO_FAILED.*\nok write after exec: DOCA_ERROR_IO_FAILED, the host's memory and files unchanged/,
  shm_over: /ok read after shm_over: DOCA_ERROR_NOT_PERMITTED.*\nok write after shm_over: DOCA_ERROR_NOT_PERMITTED, the host's memory and files unchanged/,
  dontneed: /ok read after dontneed: DOCA_SUCCESS.*\nok write after dontneed: DOCA_SUCCESS/,
  fork_exec: /ok read after fork_exec: DOCA_SUCCESS.*\nok write after fork_exec: DOCA_SUCCESS/,
  reprotect: /ok read after reprotect: DOCA_SUCCESS.*\nok write after reprotect: DOCA_SUCCESS/,
  truncate: /ok read after truncate: DOCA_ERROR_IO_FAILED.*\nok write after truncate: DOCA_ERROR_IO_FAILED/,
  destroy_race: /ok 20 rounds: no byte changed after doca_mmap_destroy returned; \d+ writes submitted after it all failed/,
};

describe("memory is bound to pages: the exporter changes its memory after the import", () => {
  for (const [scenario, expected] of Object.entries(pages)) {
    test(`${scenario}: refused on process_vm_* and on /proc/PID/mem alike`, { timeout: 300_000 }, () => {
      const primary = run("pages_bound", scenario, false);
      const fallback = run("pages_bound", scenario, true);
      assert.match(primary, expected);
      // The same verdicts, line for line (the race's count of refused writes varies with timing)
      const verdicts = (out: string) => out.split("\n").filter((l) => l.startsWith("ok ")).map((l) => l.replace(/\d+ writes/, "N writes"));
      assert.deepEqual(verdicts(fallback), verdicts(primary));
    });
  }
});

describe("the /proc/PID/mem fallback gives what process_vm_* give on every cross-process DMA case", () => {
  for (const scenario of ["to_host", "from_host", "ro_write", "revoked", "host_reads_dpu", "out_of_range", "vanished"]) {
    test(scenario, { timeout: 300_000 }, () => {
      const primary = run("dma_remote", scenario, false);
      const fallback = run("dma_remote", scenario, true);
      const verdicts = (out: string) => out.split("\n").filter((l) => l.startsWith("ok "));
      assert.deepEqual(verdicts(fallback), verdicts(primary));
    });
  }
});
