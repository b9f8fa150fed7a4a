/**
 * Typed send/receive of DMA Copy messages over one Comch connection, for the steps and the application alike.
 *
 * The peer is not trusted: every wait has one deadline, fixed when the wait starts, that nothing the peer sends
 * (FAILURE_REASON texts, repeated messages) moves; a peer's text is kept escaped whole, line breaks included (ffi/engine/printable.ts) and only
 * the first reason counts; an AbortSignal (Ctrl-C) ends any wait at once. Losing the peer reads the same in every
 * direction: "the DPU side disconnected while <what> (<DOCA detail>)"; a peer that says why it ended is "the host side
 * stopped: interrupted (SIGINT) while …" or "the host side failed: …" (tasks/common/peer-words.ts).
 */
import { printable } from "../../ffi/engine/printable.ts";
import { afterGrace, InterruptedError, interruption } from "../common/interrupt.ts";
import { TimeoutError } from "../../ffi/native/errors.ts";
import { peerEnded, peerSilent, peerVanished } from "../common/peer-words.ts";
import {
  decodeMessage,
  encodeFailureReason,
  encodeStatus,
  expectType,
  type Msg,
  MsgType,
  msgTypeName,
  sendingWhat,
  ProtocolError,
} from "./protocol.ts";

/** What the messenger needs from a connection (ComchConnection satisfies it; tests use an in-memory pair). */
export interface MessageChannel {
  readonly maxMsgSize: number;
  /** False once the peer is known to be gone (optional: in-memory channels may not say). */
  readonly connected?: boolean;
  send(bytes: Uint8Array): Promise<void>;
  recv(opts?: { timeoutMs?: number }): Promise<Uint8Array>;
}

/** The peer said it failed (FAILURE_REASON / STATUS(false)). */
export class PeerFailedError extends Error {
  override name = "PeerFailedError";
}

/**
 * The peer went away or stayed silent past the deadline. `silent`: it stayed silent, so it may still be connected
 * (stopped, swapped out, stuck) and read why this side gave up, once it goes on.
 */
export class PeerLostError extends Error {
  override name = "PeerLostError";
  readonly silent: boolean;
  constructor(message: string, options?: ErrorOptions & { silent?: boolean }) {
    super(message, options);
    this.silent = options?.silent ?? false;
  }
}

export interface MessengerOptions {
  /** Every wait's deadline, in milliseconds from the moment the wait starts. */
  timeoutMs: number;
  /** How messages name the other side: "the DPU side" or "the host side". */
  peer?: string;
  /** Aborting it (Ctrl-C) ends the current and every later wait with an InterruptedError. */
  signal?: AbortSignal;
}

/** How long a side that lost its peer waits for the peer's own reason before reporting the loss. */
export const LAST_WORDS_GRACE_MS = 1_000;

export class Messenger {
  #reason: string | undefined;
  /**
   * The peer said it failed (its failure STATUS arrived), whichever waiter read it: two waiters (a chunk loop and a
   * failed send's look at the queue) can split the reason, the STATUS and the disconnect between them. A reason
   * alone is not a failure (a peer may send reasons and go on; only the STATUS ends the copy).
   */
  #peerSaidFailure = false;
  /** The peer's DIRECTION said it speaks doca-ts (it then understands FAILURE_REASON). */
  #peerDocaTs = false;
  readonly timeoutMs: number;
  readonly peer: string;
  readonly signal: AbortSignal | undefined;

  constructor(readonly channel: MessageChannel, options: MessengerOptions | number) {
    const o = typeof options === "number" ? { timeoutMs: options } : options;
    this.timeoutMs = o.timeoutMs;
    this.peer = o.peer ?? "the peer";
    this.signal = o.signal;
  }

  /** The peer's first failure reason, escaped for printing (undefined if it sent none). */
  get reason(): string | undefined {
    return this.#reason;
  }

  async send(bytes: Uint8Array, what: string = sendingWhat(new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true))): Promise<void> {
    if (bytes.length > this.channel.maxMsgSize) {
      throw new ProtocolError(`message of ${bytes.length} bytes exceeds the Comch max message size ${this.channel.maxMsgSize}`);
    }
    if (this.signal?.aborted) throw interruption(this.signal, what);
    try {
      await this.channel.send(bytes);
    } catch (e) {
      // A peer that failed says why and goes away: prefer its queued reason over "connection closed".
      throw await this.lostOrFailed(what, e);
    }
  }

  /**
   * The error for losing the peer while doing `what`, with the underlying detail after it; a peer that said it failed
   * before it left is reported by its own reason instead (it stopped; the disconnect only followed).
   */
  lost(what: string, cause: unknown): PeerLostError | PeerFailedError {
    if (this.#peerSaidFailure) return this.peerFailure(what);
    const detail = cause instanceof Error ? cause.message : String(cause);
    const timedOut = cause instanceof TimeoutError;
    const text = timedOut ? peerSilent(what, this.timeoutMs, this.peer) : peerVanished(this.peer, detail, what);
    return new PeerLostError(text, { cause, silent: timedOut });
  }

  /**
   * The error to report when something failed because the peer may have gone (a failed send, a DMA into memory it
   * revoked): its own reason when one is already on the way (it says why, then leaves), otherwise the loss.
   */
  async lostOrFailed(what: string, cause: unknown): Promise<PeerFailedError | PeerLostError> {
    return (await this.failureOnTheWay()) ?? this.lost(what, cause);
  }

  /**
   * The peer's failure when it is on its way (its failure STATUS among the next queued messages, 1 s at most), for
   * an error the peer's stopping may have caused (an import of an export it just revoked): its reason beats ours.
   */
  failureOnTheWay(): Promise<PeerFailedError | undefined> {
    return this.#queuedFailure();
  }

  /**
   * A failure STATUS already received or arriving (looked for among the next few queued messages), if any. The grace
   * is sized for a loaded 2-core machine: a stopped peer sends its reason, then exits, and its revoked export can fail
   * our DMA well before its last message is read here (300 ms lost the reason under load).
   */
  async #queuedFailure(): Promise<PeerFailedError | undefined> {
    const deadline = Date.now() + LAST_WORDS_GRACE_MS;
    for (let i = 0; i < 16; i++) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      let m: Msg;
      try {
        m = await this.#next(left);
      } catch {
        return undefined;
      }
      if (m.type === MsgType.STATUS && !m.isSuccess) return this.peerFailure("the peer");
    }
    return undefined;
  }

  #keepReason(text: string): void {
    this.#reason ??= printable(text, 1000);
  }

  /**
   * Every message from the peer passes here first, in arrival order, whoever waits for it: a failure reason is kept
   * before any waiter sees the STATUS that follows it (two waiters, say a chunk loop and a failed DMA's look at the
   * queue, must not race each other to it).
   */
  #next(timeoutMs: number): Promise<Msg> {
    return this.channel.recv({ timeoutMs }).then((raw) => {
      const m = decodeMessage(raw);
      if (m.type === MsgType.FAILURE_REASON) this.#keepReason(m.text);
      else if (m.type === MsgType.STATUS && !m.isSuccess) this.#peerSaidFailure = true;
      else if (m.type === MsgType.DIRECTION && m.docaTs) this.#peerDocaTs = true;
      return m;
    });
  }

  /**
   * The next message, decoded, within one deadline (`timeoutMs` from now). Failure reasons are absorbed (they
   * precede a STATUS) without moving the deadline.
   */
  async recvAny(what: string, signal: AbortSignal | undefined = this.signal): Promise<Msg> {
    const waiting = `waiting for ${what}`;
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw this.lost(waiting, new TimeoutError(what, this.timeoutMs));
      const m = await this.#recvOne(left, waiting, signal);
      if (m.type === MsgType.FAILURE_REASON) continue;
      return m;
    }
  }

  async #recvOne(timeoutMs: number, waiting: string, signal: AbortSignal | undefined): Promise<Msg> {
    if (signal?.aborted) throw interruption(signal, waiting);
    const received = this.#next(timeoutMs);
    let onAbort: (() => void) | undefined;
    const aborted = signal
      ? new Promise<never>((_, reject) => {
        onAbort = () => reject(interruption(signal, waiting));
        signal.addEventListener("abort", onAbort, { once: true });
      })
      : undefined;
    try {
      return await (aborted ? Promise.race([received, aborted]) : received);
    } catch (e) {
      if (e instanceof InterruptedError) {
        received.catch(() => {});
        throw e;
      }
      if (e instanceof ProtocolError) throw e;
      throw this.lost(waiting, e);
    } finally {
      if (onAbort) signal!.removeEventListener("abort", onAbort);
    }
  }

  /** The next message, which must be `type`; a failure STATUS from the peer becomes PeerFailedError. */
  async recv<T extends Msg["type"]>(type: T, what: string = msgTypeName(type), signal: AbortSignal | undefined = this.signal): Promise<Extract<Msg, { type: T }>> {
    const m = await this.recvAny(what, signal);
    if (m.type === MsgType.STATUS && type !== MsgType.STATUS && !m.isSuccess) throw this.peerFailure(what);
    return expectType(m, type);
  }

  /**
   * The peer's last message of a copy (its final STATUS after it committed): like recv, but a stop takes effect only
   * FINAL_MESSAGE_GRACE_MS after it came, so a stop at the very end reports the completed copy, not a failure
   * while the peer kept the file.
   */
  recvFinal<T extends Msg["type"]>(type: T, what: string = msgTypeName(type)): Promise<Extract<Msg, { type: T }>> {
    return this.recv(type, what, afterGrace(this.signal));
  }

  /** The error for a peer's failure STATUS, carrying its (escaped) reason when it sent one. */
  peerFailure(what: string): PeerFailedError {
    return new PeerFailedError(
      this.#reason ? peerEnded(this.peer, this.#reason) : `${this.peer} answered failure status while we waited for ${what}`,
    );
  }

  /**
   * Sends a message that must not turn a completed copy into a failure (a final status after the file is durable):
   * an interruption does not stop it and a lost peer only earns a warning.
   */
  async sendBestEffort(bytes: Uint8Array, warning: string, log: { warn(msg: string): void }): Promise<void> {
    try {
      await this.channel.send(bytes);
    } catch (e) {
      log.warn(`${warning}: ${(e as Error).message}`);
    }
  }

  /**
   * Whether the peer said it speaks doca-ts, also looking at what already arrived unread (up to `waitMs`): a side
   * that fails while it waits for the peer's answer may have that answer queued. Reads (and drops) those messages:
   * for the failure path only.
   */
  async peerSpeaksDocaTs(waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    while (!this.#peerDocaTs) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        await this.#next(left);
      } catch {
        break;
      }
    }
    return this.#peerDocaTs;
  }

  /** Best effort: tells the peer why we stop (doca-ts peers only), then NVIDIA's failure status. Never throws. */
  async sendFailure(reason: string | undefined, peerIsDocaTs: boolean): Promise<void> {
    // Bounded: a peer that stopped reading (SIGSTOP, a full queue) must not keep this side from reporting its error
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, LAST_WORDS_GRACE_MS)));
    const send = async () => {
      if (peerIsDocaTs && reason) await this.channel.send(encodeFailureReason(reason, this.channel.maxMsgSize));
      await this.channel.send(encodeStatus(false));
    };
    // the connection may already be gone; the local error is what matters
    const sent = send().catch(() => {});
    await Promise.race([sent, giveUp]);
    clearTimeout(timer);
  }
}
