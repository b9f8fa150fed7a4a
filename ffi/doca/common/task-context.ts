/**
 * What every task context of one device on one progress engine holds (Dma, Rdma, Compress, Sha, AesGcm,
 * ErasureCoding): its device, its progress engine (both its parents: they outlive it), the tasks it may have
 * allocated, and how it prints.
 */
import { doca, missingLibraryReason } from "../../native/library.ts";
import type { OptionalDocaLibrary } from "../../load/types.ts";
import { check } from "../../native/errors.ts";
import { CtxResource } from "../../engine/ctx.ts";
import type { ProgressEngine } from "../../engine/pe.ts";
import { HANDLE } from "../../engine/resource.ts";
import type { Device } from "./device.ts";

/**
 * A new native context on `device` from its library's doca_<library>_create, `create` named `name`: its handle, or
 * the DocaError (with `detail`) that create returned.
 */
export function createContext(device: Device, create: (dev: number, out: number) => number, name: string, detail?: string): number {
  const d = doca();
  d.scratch.clear(0);
  check(create(device[HANDLE], d.scratch.slot(0)), name, detail);
  return d.scratch.u64(0);
}

/**
 * Why this DOCA cannot run a library's tasks, for its caps: the reason the software device gives for a missing
 * backend (`backendMissing`, doca_sim_<library>_backend_missing, absent on a real DOCA), or no `library` at all
 * (`create` absent: its file missing, or present but not loadable); undefined when neither.
 */
export function missingReason(backendMissing: (() => number) | undefined, create: unknown, library: OptionalDocaLibrary): string | undefined {
  const why = backendMissing?.();
  if (why) return doca().backend.cstring(why);
  // "this DOCA has no libdoca_sha", or the file that is there but could not be loaded, and why
  return create ? undefined : missingLibraryReason(library);
}

export abstract class TaskContext<H extends number = number> extends CtxResource<H> {
  readonly device: Device;
  readonly pe: ProgressEngine;
  readonly maxTasks: number;

  protected constructor(handle: number, device: Device, pe: ProgressEngine, maxTasks: number) {
    super(handle, [device, pe]);
    this.device = device;
    this.pe = pe;
    this.maxTasks = maxTasks;
  }

  /** Tasks submitted and not completed yet. */
  abstract get inflight(): number;

  /** Its device, its state, the tasks in flight and its handle. */
  protected summary(): string {
    return this.taskSummary(this.device, this.inflight);
  }
}
