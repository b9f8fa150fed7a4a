/**
 * A task kind on the one task path (engine/task-path.ts) that only says how to allocate its DOCA task: the path does
 * slots, queueing, submit, completion (native ring or JS callback), errors as DocaError naming the task kind, and the
 * flush on stop. Used by the accelerator contexts (erasure coding, AES-GCM), one kind per DOCA task type; a kind
 * with a Rearming has its tasks kept and re-armed (task reuse) instead of allocated and freed per task.
 */
import { doca } from "../../native/library.ts";
import type { Native, TaskKind } from "../../engine/task-path.ts";

type Raw = ReturnType<typeof doca>["raw"];
/** (raw functions, context, slot, a, b, user data, out) → doca_error_t; leaves the typed task in scratch slot 0. */
export type AllocFn<A, B> = (raw: Raw, ctx: Native, slot: number, a: A, b: B, ud: Native, out: Native) => number;

/**
 * Task reuse for a kind whose DOCA task has setters for everything alloc_init takes (TaskKind.rearm): the path keeps
 * a completed task in its slot and re-arms it for the next request instead of a free and an allocation (four FFI
 * calls per task: alloc_init, as_task, set_user_data, free). A kind remembers per slot what the task is armed with
 * and calls only the setters whose value changed.
 */
export interface Rearming<A, B> {
  /** A task was just allocated in `slot` for (a, b): what it is armed with now. */
  allocated(slot: number, a: A, b: B): void;
  /** Re-arms the slot's kept task (`typed`: the kind's own task type, as alloc_init gave it) for (a, b); doca_error_t. */
  rearm(typed: Native, slot: number, a: A, b: B): number;
}

/**
 * One value a kept task is armed with: `key` identifies it (what the slot remembers and compares: a Buf's handle, a
 * size), `set` hands it to the task type's setter: its doca_error_t, or nothing for DOCA's void setters.
 */
export interface ArmedField<A, B> {
  key(a: A, b: B): unknown;
  set(typed: Native, a: A, b: B): number | void;
}

/**
 * The one rearm step of every reusing kind: per slot, remember what each field is armed with and call a field's
 * setter only when its value changed (a request like the last one in its slot costs no FFI call at all). `always`
 * runs on every re-arm after the fields (a value that must never repeat, such as an IV). Stops at the first failing
 * setter and returns its doca_error_t; the field keeps its old value then, so the next re-arm sets it again.
 */
export function changedFieldsRearming<A, B>(
  fields: readonly ArmedField<A, B>[],
  always?: (typed: Native, slot: number, a: A, b: B) => number,
): Rearming<A, B> {
  const held: unknown[][] = fields.map(() => []);
  return {
    allocated(slot, a, b) {
      for (let i = 0; i < fields.length; i++) held[i][slot] = fields[i].key(a, b);
    },
    rearm(typed, slot, a, b) {
      for (let i = 0; i < fields.length; i++) {
        const field = fields[i], key = field.key(a, b);
        if (held[i][slot] === key) continue;
        const rc = field.set(typed, a, b);
        if (rc) return rc;
        held[i][slot] = key;
      }
      return always ? always(typed, slot, a, b) : 0;
    },
  };
}

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
  /** Per slot, the typed task alloc_init gave (what a Rearming's setters take). */
  readonly #typed: Native[] = [];
  readonly #rearming: Rearming<A, B> | undefined;
  /** Present only with a Rearming (the task path reuses tasks of kinds that have it). */
  readonly rearm?: (slot: number, a: A, b: B) => number;

  /**
   * @param taskName DOCA's name of the task type ("doca_ec_task_create"), named in errors
   * @param allocName its allocate function, named when allocation fails
   * @param noun what one task is called in "closed before/while" errors
   * @param retain copies what the caller may change while a request waits in the queue
   * @param rearming task reuse through the task type's setters (undefined: allocate and free per task)
   */
  constructor(
    readonly taskName: string,
    readonly allocName: string,
    readonly noun: string,
    readonly alloc: AllocFn<A, B>,
    readonly asTask: (raw: Raw, typed: Native) => Native,
    readonly retain?: (a: A, b: B) => [A, B],
    rearming?: Rearming<A, B>,
  ) {
    super();
    this.#rearming = rearming;
    if (rearming) this.rearm = (slot, a, b) => rearming.rearm(this.#typed[slot], slot, a, b);
  }

  allocInit(slot: number, a: A, b: B): number {
    const rc = this.alloc(this.raw, this.ctx, slot, a, b, this.noUserData, this.out);
    if (rc === 0) {
      const typed = this.allocated();
      this.task = this.asTask(this.raw, typed);
      if (this.#rearming) {
        this.#typed[slot] = typed;
        this.#rearming.allocated(slot, a, b);
      }
    }
    return rc;
  }
}
