/**
 * A task kind on the one task path (engine/task-path.ts) that only says how to allocate its DOCA task: the path does
 * slots, queueing, submit, completion (native ring or JS callback), errors as DocaError naming the task kind, and the
 * flush on stop. Used by the accelerator contexts (erasure coding, AES-GCM), one kind per DOCA task type.
 */
import { doca } from "../../native/library.ts";
import type { Native, TaskKind } from "../../engine/task-path.ts";

type Raw = ReturnType<typeof doca>["raw"];
/** (raw functions, context, slot, a, b, user data, out) → doca_error_t; leaves the typed task in scratch slot 0. */
export type AllocFn<A, B> = (raw: Raw, ctx: Native, slot: number, a: A, b: B, ud: Native, out: Native) => number;

/**
 * What every kind on the task path keeps to allocate its DOCA task: the bound context, the raw functions, scratch slot
 * 0 as alloc_init's out-parameter and the zero user data alloc_init takes (the path sets the real one right after).
 */
export abstract class NativeKind {
  task: Native = 0;
  protected ctx: Native = 0;
  protected readonly raw: Raw = doca().raw;
  protected readonly scratch: ReturnType<typeof doca>["scratch"] = doca().scratch;
  protected readonly out: Native = doca().scratch.slotNative(0);
  protected readonly noUserData: Native = doca().backend.native(0);

  bind(ctx: Native): void {
    this.ctx = ctx;
  }

  /** The typed task a successful alloc_init left in scratch slot 0. */
  protected allocated(): Native {
    return this.scratch.u64Native(0);
  }
}

export class AllocKind<A, B> extends NativeKind implements TaskKind<A, B> {
  /**
   * @param taskName DOCA's name of the task type ("doca_ec_task_create"), named in errors
   * @param allocName its allocate function, named when allocation fails
   * @param noun what one task is called in "closed before/while" errors
   * @param retain copies what the caller may change while a request waits in the queue
   */
  constructor(
    readonly taskName: string,
    readonly allocName: string,
    readonly noun: string,
    readonly alloc: AllocFn<A, B>,
    readonly asTask: (raw: Raw, typed: Native) => Native,
    readonly retain?: (a: A, b: B) => [A, B],
  ) {
    super();
  }

  allocInit(slot: number, a: A, b: B): number {
    const rc = this.alloc(this.raw, this.ctx, slot, a, b, this.noUserData, this.out);
    if (rc === 0) this.task = this.asTask(this.raw, this.allocated());
    return rc;
  }
}
