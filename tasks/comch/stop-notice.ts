/**
 * comch-client tells its server why it stops, inside NVIDIA's comch_ctrl_path protocol (plain text messages, one
 * answer per message): the reason goes as one message that starts with a NUL byte. NVIDIA's sample server prints a
 * message with "%.*s", so to it the notice reads as one more, empty, message it answers to a client that is gone; no
 * text a sample sends starts with NUL, so a doca-ts side never mistakes a real message for a notice. The server
 * sends no notice: NVIDIA's sample client, waiting for its answer, would take it as that answer and end as if
 * served. A doca-ts client words the server's departure itself ("the DPU side closed the connection …").
 */
import { InterruptedError } from "../common/interrupt.ts";
import { printable } from "../../ffi/engine/printable.ts";

const MARK = "\0doca-ts stop: ";

/** The peer's own reason for stopping, as an error: preferred over the failure its departure causes here. */
export class PeerStoppedError extends Error {
  override name = "PeerStoppedError";
}

/** The reason in a stop notice, or undefined when `bytes` is an ordinary message. */
export function stopReason(bytes: Uint8Array): string | undefined {
  if (bytes[0] !== 0) return undefined;
  const text = new TextDecoder().decode(bytes);
  return text.startsWith(MARK) ? text.slice(MARK.length) : undefined;
}

/** `bytes` as an ordinary message, or a PeerStoppedError ("the host side stopped: …") when it is a stop notice. */
export function unlessStopNotice(bytes: Uint8Array, peer: string): Uint8Array {
  const reason = stopReason(bytes);
  if (reason !== undefined) throw new PeerStoppedError(`${peer} stopped: ${printable(reason, 500)}`);
  return bytes;
}

/**
 * Tells the peer why this side stops (best effort: the connection may be gone already), whatever ended it here: a
 * stop (Ctrl-C), a give-up on a silent peer, a failure. A peer that stopped first, or left, is not told back.
 */
export async function tellPeerWhy(conn: { connected: boolean; send(bytes: Uint8Array): Promise<void> }, e: unknown): Promise<void> {
  if (e instanceof PeerStoppedError || !conn.connected) return;
  await conn.send(new TextEncoder().encode(MARK + (e as Error).message)).catch(() => {});
}

/**
 * The failure the peer's departure causes here ("connection is closed", a send refused) in words: the peer's own
 * reason when its stop notice is among the messages that arrived before it left (a send of ours can fail before we
 * read them), else "the DPU side closed the connection … (it stopped or failed; its own output says why)";
 * anything else unchanged.
 */
export async function peerLeft(
  e: unknown,
  conn: { connected: boolean; recv(opts: { timeoutMs?: number }): Promise<Uint8Array> },
  peer: string,
  doing: string,
): Promise<unknown> {
  if (e instanceof InterruptedError || e instanceof PeerStoppedError || conn.connected) return e;
  // What is queued is handed out even after the disconnection; then recv rejects at once (nothing more can come)
  for (let i = 0; i < 10_000; i++) {
    const bytes = await conn.recv({ timeoutMs: 0 }).catch(() => undefined);
    if (bytes === undefined) break;
    const reason = stopReason(bytes);
    if (reason !== undefined) return new PeerStoppedError(`${peer} stopped: ${printable(reason, 500)}`, { cause: e });
  }
  return new Error(`${peer} closed the connection ${doing} (it stopped or failed; its own output says why)`, { cause: e });
}
