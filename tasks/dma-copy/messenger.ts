/**
 * Typed send/receive of DMA Copy messages over one Comch connection, with a deadline on every wait. A peer's
 * FAILURE_REASON text is remembered so the STATUS(false) that follows surfaces as one clear PeerFailedError.
 */
import {
  decodeMessage,
  encodeFailureReason,
  encodeStatus,
  expectType,
  type Msg,
  MsgType,
  msgTypeName,
  ProtocolError,
} from "./protocol.ts";

/** What the messenger needs from a connection (ComchConnection satisfies it; tests use an in-memory pair). */
export interface MessageChannel {
  readonly maxMsgSize: number;
  send(bytes: Uint8Array): Promise<void>;
  recv(opts?: { timeoutMs?: number }): Promise<Uint8Array>;
}

export class PeerFailedError extends Error {
  override name = "PeerFailedError";
}

export class Messenger {
  #reason: string | undefined;
  constructor(readonly channel: MessageChannel, readonly timeoutMs: number) {}

  async send(bytes: Uint8Array): Promise<void> {
    if (bytes.length > this.channel.maxMsgSize) {
      throw new ProtocolError(`message of ${bytes.length} bytes exceeds the Comch max message size ${this.channel.maxMsgSize}`);
    }
    try {
      await this.channel.send(bytes);
    } catch (e) {
      // A peer that failed says why and goes away: prefer its queued reason over "connection closed".
      throw (await this.#queuedFailure()) ?? e;
    }
  }

  /** A failure STATUS already received (looked for among the next few queued messages), if any. */
  async #queuedFailure(): Promise<PeerFailedError | undefined> {
    for (let i = 0; i < 16; i++) {
      let m: Msg;
      try {
        m = decodeMessage(await this.channel.recv({ timeoutMs: 100 }));
      } catch {
        return undefined;
      }
      if (m.type === MsgType.FAILURE_REASON) this.#reason = m.text;
      else if (m.type === MsgType.STATUS && !m.isSuccess) return this.peerFailure("the peer");
    }
    return undefined;
  }

  /** The next message, decoded. Peer failure reasons are absorbed here (they precede a STATUS). */
  async recvAny(what: string): Promise<Msg> {
    for (;;) {
      let raw: Uint8Array;
      try {
        raw = await this.channel.recv({ timeoutMs: this.timeoutMs });
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        throw new Error(`while waiting for ${what} from the peer: ${msg}`, { cause: e });
      }
      const m = decodeMessage(raw);
      if (m.type === MsgType.FAILURE_REASON) {
        this.#reason = m.text;
        continue;
      }
      return m;
    }
  }

  /** The next message, which must be `type`; a failure STATUS from the peer becomes PeerFailedError. */
  async recv<T extends Msg["type"]>(type: T, what = msgTypeName(type)): Promise<Extract<Msg, { type: T }>> {
    const m = await this.recvAny(what);
    if (m.type === MsgType.STATUS && type !== MsgType.STATUS && !m.isSuccess) throw this.peerFailure(what);
    return expectType(m, type);
  }

  /** The error for a peer's failure STATUS, carrying its reason when it sent one. */
  peerFailure(what: string): PeerFailedError {
    return new PeerFailedError(
      this.#reason ? `peer failed: ${this.#reason}` : `peer answered failure status while we waited for ${what}`,
    );
  }

  /** Best effort: tells the peer why we stop (doca-ts peers only), then NVIDIA's failure status. Never throws. */
  async sendFailure(reason: string | undefined, peerIsDocaTs: boolean): Promise<void> {
    try {
      if (peerIsDocaTs && reason) await this.send(encodeFailureReason(reason, this.channel.maxMsgSize));
      await this.send(encodeStatus(false));
    } catch {
      // the connection may already be gone; the local error is what matters
    }
  }
}
