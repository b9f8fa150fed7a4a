/**
 * dma-copy's two sides started one by one in a workspace, for the tests that stop, kill or replace a side at a
 * moment of their choosing: each side copies its folder's f.bin on the software device's usual PCI addresses, with
 * `args` after those.
 */
import { join } from "node:path";
import { DPU_LISTENING, type RunningChild, startChild } from "../../../tasks/common/run-pair.ts";
import { task } from "./run-task.ts";
import { DPU_PCI, HOST_PCI, type Workspace } from "./workspace.ts";

const DMA_COPY = task("dma-copy.ts");

/** The DPU side, once it listens (60 s to get there); killed after `timeoutMs`. */
export async function startListeningDpu(w: Workspace, args: string[], timeoutMs: number): Promise<RunningChild> {
  const dpu = startChild(
    DMA_COPY,
    ["--side", "dpu", "-f", join(w.dpu, "f.bin"), "-p", DPU_PCI, "-r", HOST_PCI, ...args],
    { ...w.env, DOCA_SIM_SIDE: "dpu", DOCA_TS_ANNOUNCE_LISTEN: "1" },
    timeoutMs,
  );
  await dpu.waitForStderr(DPU_LISTENING, 60_000);
  return dpu;
}

/** The host side; killed after `timeoutMs`. */
export function startHost(w: Workspace, args: string[], timeoutMs: number): RunningChild {
  return startChild(DMA_COPY, ["--side", "host", "-f", join(w.host, "f.bin"), "-p", HOST_PCI, ...args], { ...w.env, DOCA_SIM_SIDE: "host" }, timeoutMs);
}
