/**
 * Received messages and the readers waiting for them (a Comch connection's, a consumer's): recv() takes one,
 * recvBatch() up to its max, and readers waiting together are served in call order. A message goes straight to a
 * waiting reader only when a recv() waits first and nothing is queued; otherwise it is queued, and a microtask after
 * the burst (the progress that delivered it) hands the queue out in waiter order, so a batch reader gets everything
 * that arrived together and no later reader is served before an earlier one.
 */
import { type Pump, Waiters } from "./waiters.ts";

export interface InboxOptions<M> {
  /** What a reader waits for, in timeout errors. */
  what: string;
  /** A queued message as recv() hands it out: in a buffer of its own (a slab view is copied out). */
  own(message: M): M;
  /**
   * The unread bound, if any: the bytes a queued message counts for, and where changes of the total go. Messages
   * that arrive while readers wait for them are not unread unless no reader is left for them once they are served.
   */
  unread?: { weight(message: M): number; note(delta: number): void };
}

export class Inbox<M> {
  readonly #queue: M[] = [];
  /** recv() and recvBatch() readers, in call order; a recvBatch reader's tag is its max. */
  readonly #waiters: Waiters<M | M[]>;
  readonly #opts: InboxOptions<M>;
  /** A microtask will serve the waiters (#serve). */
  #serving = false;
  /** Messages at the end of the queue that arrived while readers waited for them (not counted as unread). */
  #claimed = 0;

  constructor(pump: Pump, opts: InboxOptions<M>) {
    this.#waiters = new Waiters(pump);
    this.#opts = opts;
  }

  /** Messages queued. */
  get length(): number {
    return this.#queue.length;
  }

  /** Readers waiting. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Whether a message arriving now goes straight to a reader: a recv() waits first and nothing is queued. */
  direct(): boolean {
    return this.#waiters.size > 0 && this.#queue.length === 0 && this.#waiters.nextTag === undefined;
  }

  /** A message arrived (inside progress). */
  put(message: M): void {
    if (this.direct()) {
      this.#waiters.resolveNext(message);
      return;
    }
    this.#queue.push(message);
    if (this.#waiters.size > 0) {
      this.#claimed++; // a reader waits for it: not unread
      if (!this.#serving) {
        this.#serving = true;
        queueMicrotask(this.serve);
      }
    } else if (this.#opts.unread) {
      this.#opts.unread.note(this.#opts.unread.weight(message));
    }
  }

  /** recv(): the next queued message, in a buffer of its own, unless nothing is queued or readers wait before it. */
  takeOne(): M | undefined {
    return this.#queue.length > 0 && this.#waiters.size === 0 ? this.#opts.own(this.#take(1)[0]) : undefined;
  }

  /** recvBatch(): up to `max` queued messages, unless nothing is queued or readers wait before it. */
  takeMany(max: number): M[] | undefined {
    return this.#queue.length > 0 && this.#waiters.size === 0 ? this.#take(max) : undefined;
  }

  /** Waits for one message (max undefined: recv) or a batch of up to `max` (recvBatch). */
  wait(timeoutMs: number | undefined, max?: number): Promise<M | M[]> {
    return this.#waiters.wait(this.#opts.what, timeoutMs, max === undefined ? undefined : { max });
  }

  /** Hands queued messages to the waiters in call order (also called before a close or failure rejects them). */
  readonly serve = (): void => {
    this.#serving = false;
    while (this.#queue.length > 0 && this.#waiters.size > 0) {
      const tag = this.#waiters.nextTag as { max: number } | undefined;
      this.#waiters.resolveNext(tag ? this.#take(tag.max) : this.#opts.own(this.#take(1)[0]));
    }
    if (this.#claimed > 0) {
      // Their readers timed out or took their max: unread now, like any message nobody waits for.
      const unread = this.#opts.unread;
      let bytes = 0;
      if (unread) for (let i = this.#queue.length - this.#claimed; i < this.#queue.length; i++) bytes += unread.weight(this.#queue[i]);
      this.#claimed = 0;
      if (bytes > 0) unread!.note(bytes);
    }
  };

  rejectAll(error: unknown): void {
    this.#waiters.rejectAll(error);
  }

  /** Drops everything queued (the caller settles the unread total); returns how many were dropped. */
  clear(): number {
    const dropped = this.#queue.length;
    this.#queue.length = 0;
    this.#claimed = 0;
    return dropped;
  }

  /** Takes up to `max` from the head; the unread among them are no longer unread. */
  #take(max: number): M[] {
    const unreadCount = this.#queue.length - this.#claimed;
    const taken = this.#queue.splice(0, max);
    const counted = Math.min(taken.length, unreadCount);
    this.#claimed -= taken.length - counted;
    const unread = this.#opts.unread;
    if (unread && counted > 0) {
      let bytes = 0;
      for (let i = 0; i < counted; i++) bytes += unread.weight(taken[i]);
      unread.note(-bytes);
    }
    return taken;
  }
}
