/**
 * Where a small DMA task's time goes, in ns per task, for the benchmark's breakdown rows. Each figure is a tight loop
 * of 64-byte local memcpy tasks, `depth` submitted then progressed to completion, on a DMA context of its own:
 *
 *   today        alloc_init + as_task + submit, a JS completion callback that frees the task (the path before the ring)
 *   jsCallback   the same loop with reused tasks and JS callbacks: today - jsCallback = alloc/free calls
 *   ring         reused tasks re-armed with set_src/set_dst + submit, native ring drained after progress
 *   submitOnly   reused tasks submitted as they are (no re-arm), native ring
 *   settle       the JS cost of one Promise per task (create, resolve, await), no DOCA at all
 *
 * The ring variants reserve ring entries like any context and drain through the library's own bridge
 * (drainCompletions): their DMA context's user data names a probe target registered like a context's task path, so
 * completions of other contexts still go to their own paths, and the figure includes the real routing cost.
 *
 * The software device's own work (the copy, its queues) is inside every DOCA figure; C's task time in the same run
 * is the floor. ring - submitOnly = the two re-arm calls; jsCallback - ring ≈ one native→JS callback per task.
 */
import { doca } from "../ffi/native/library.ts";
import { check } from "../ffi/native/errors.ts";
import { completionCallbacks, drainCompletions, registerOwner, routeTasks, unregisterOwner } from "../ffi/engine/callbacks.ts";
import type { Device } from "../ffi/doca/common/device.ts";
import type { ProgressEngine } from "../ffi/engine/pe.ts";
import type { Buf } from "../ffi/doca/common/buf.ts";
import { CALLBACKS } from "../ffi/native/symbols.ts";
import { HANDLE, NATIVE } from "../ffi/engine/resource.ts";

export interface TaskCost {
  today: number;
  jsCallback: number;
  ring?: number;
  submitOnly?: number;
  settle: number;
}

type Native = number | bigint;

/** ns per task of each variant; `pairs` are (src, dst) 64-byte buffers, `depth` of them in flight per round. */
export async function measureTaskCost(device: Device, pe: ProgressEngine, pairs: [Buf, Buf][], seconds: number): Promise<TaskCost> {
  const d = doca();
  const f = d.fns, raw = d.raw, b = d.backend;
  const depth = pairs.length;
  let done = 0;
  let freeOnDone = false;
  let failed = false;
  const onDone = (task: number) => {
    done++;
    if (freeOnDone) f.doca_task_free(task);
  };
  const jsOk = b.callback(CALLBACKS.taskCompletion, onDone);
  const jsErr = b.callback(CALLBACKS.taskCompletion, (task) => {
    failed = true;
    onDone(task);
  });
  // The ring variants' completion target, routed like a context's task path (task user data 0 → slot 0..depth).
  const probeId = registerOwner({ fail: () => (failed = true) });
  routeTasks(probeId, [{
    onTaskDone: (_task: number, _slot: number, ok: boolean) => {
      done++;
      if (!ok) failed = true;
    },
  }]);
  const ring = completionCallbacks(depth);
  const peNative = pe[NATIVE];
  const srcs = pairs.map(([s]) => s[NATIVE]), dsts = pairs.map(([, t]) => t[NATIVE]);

  const withDma = (ok: number, err: number, body: (dma: Native) => number): number => {
    d.scratch.clear(0);
    check(f.doca_dma_create(device[HANDLE], d.scratch.slot(0)), "doca_dma_create");
    const dma = d.scratch.u64(0);
    const ctx = f.doca_dma_as_ctx(dma);
    try {
      check(f.doca_ctx_set_user_data(ctx, probeId), "doca_ctx_set_user_data");
      check(f.doca_dma_task_memcpy_set_conf(dma, ok, err, depth), "doca_dma_task_memcpy_set_conf");
      check(f.doca_pe_connect_ctx(pe[HANDLE], ctx), "doca_pe_connect_ctx");
      check(f.doca_ctx_start(ctx), "doca_ctx_start");
      return body(b.native(dma));
    } finally {
      f.doca_ctx_stop(ctx);
      for (let i = 0; i < 1000 && f.doca_pe_progress(pe[HANDLE]); i++);
      f.doca_dma_destroy(dma);
    }
  };

  /** Runs `round` (submits depth tasks) then progresses until all completed; returns ns per task. */
  const timed = (round: () => void, drain: () => void): number => {
    const end = performance.now() + seconds * 1000;
    let tasks = 0;
    const t0 = performance.now();
    do {
      for (let r = 0; r < 64; r++) {
        done = 0;
        round();
        for (let spins = 0; done < depth; spins++) {
          raw.doca_pe_progress(peNative);
          drain();
          if (spins > 1_000_000) throw new Error(`measureTaskCost: ${depth - done} tasks never completed`);
        }
        if (failed) throw new Error("measureTaskCost: a task failed");
        tasks += depth;
      }
    } while (performance.now() < end);
    return ((performance.now() - t0) * 1e6) / tasks;
  };
  const noDrain = () => {};
  const ringDrain = () => void drainCompletions();

  const allocSubmit = (dma: Native) => {
    const s = d.scratch;
    for (let i = 0; i < depth; i++) {
      raw.doca_buf_reset_data_len(dsts[i]);
      check(raw.doca_dma_task_memcpy_alloc_init(dma, srcs[i], dsts[i], b.native(i), s.slotNative(0)), "alloc_init");
      check(raw.doca_task_submit(raw.doca_dma_task_memcpy_as_task(s.u64Native(0))), "doca_task_submit");
    }
  };
  /** Allocates depth tasks once; returns (memcpy task, task) native handles. */
  const allocAll = (dma: Native) => {
    const s = d.scratch;
    const memcpyTasks: Native[] = [], tasks: Native[] = [];
    for (let i = 0; i < depth; i++) {
      check(raw.doca_dma_task_memcpy_alloc_init(dma, srcs[i], dsts[i], b.native(i), s.slotNative(0)), "alloc_init");
      memcpyTasks.push(s.u64Native(0));
      tasks.push(raw.doca_dma_task_memcpy_as_task(s.u64Native(0)));
    }
    return { memcpyTasks, tasks, free: () => tasks.forEach((t) => raw.doca_task_free(t)) };
  };
  const reuse = (dma: Native, rearm: boolean, drain: () => void) => {
    const { memcpyTasks, tasks, free } = allocAll(dma);
    let shift = 0;
    try {
      return timed(() => {
        shift = rearm ? (shift + 1) % depth : 0;
        for (let i = 0; i < depth; i++) {
          // re-armed with another pair's buffers each round, so that every re-arm really changes the task
          const j = (i + shift) % depth;
          raw.doca_buf_reset_data_len(dsts[j]);
          if (rearm) {
            raw.doca_dma_task_memcpy_set_src(memcpyTasks[i], srcs[j]);
            raw.doca_dma_task_memcpy_set_dst(memcpyTasks[i], dsts[j]);
          }
          raw.doca_task_submit(tasks[i]);
        }
      }, drain);
    } finally {
      free();
    }
  };

  try {
    freeOnDone = true;
    const today = withDma(jsOk.address, jsErr.address, (dma) => timed(() => allocSubmit(dma), noDrain));
    freeOnDone = false;
    const jsCallback = withDma(jsOk.address, jsErr.address, (dma) => reuse(dma, true, noDrain));
    const result: TaskCost = { today, jsCallback, settle: await measureSettle(depth, seconds) };
    if (ring.ring) {
      result.ring = withDma(ring.ok, ring.error, (dma) => reuse(dma, true, ringDrain));
      result.submitOnly = withDma(ring.ok, ring.error, (dma) => reuse(dma, false, ringDrain));
    }
    return result;
  } finally {
    ring.release();
    unregisterOwner(probeId);
    jsOk.close();
    jsErr.close();
  }
}

/** ns per Promise: `depth` created, resolved in a later loop (as completions are), awaited by their creators. */
async function measureSettle(depth: number, seconds: number): Promise<number> {
  const resolvers: (() => void)[] = new Array(depth);
  let settled = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  do {
    const waits = [];
    for (let i = 0; i < depth; i++) waits.push(new Promise<void>((r) => (resolvers[i] = r)).then(() => settled++));
    for (let i = 0; i < depth; i++) resolvers[i]();
    await Promise.all(waits);
  } while (performance.now() < end);
  return ((performance.now() - t0) * 1e6) / settled;
}
