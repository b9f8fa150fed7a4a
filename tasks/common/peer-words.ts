/**
 * One wording for one situation, in every task that waits for a peer (dma-copy, rdma-copy, rdma-ping, comch-client,
 * comch-server, comch-stream):
 *   - nobody came:    "no host connected within 5 s (--timeout); likely causes: …" (what was waited for, how long,
 *                     then the causes in the order to check them, as dma-copy lists them);
 *   - the peer went silent: "gave up waiting for X after 5 s (--timeout): the DPU side did not send it in time";
 *   - the peer stopped and said so: "the receiver stopped: interrupted (SIGINT) while …" (peerEnded);
 *   - the peer failed and said why: "the receiver failed: …" (peerEnded);
 *   - the peer gave up on us and said so: "the DPU side gave up waiting for X after 5 s (--timeout): …" (peerEnded);
 *   - the peer vanished without a word (connection reset, not connected, disconnected): "the receiver disconnected
 *     while … (…)" (peerVanished, meansPeerGone).
 * The peer is named by its role in words ("the host side", "the receiver", "the echoing side"). The task's name
 * comes in front from runMain, as on every line.
 */
import { DocaError, TimeoutError } from "../../ffi/native/errors.ts";
import { softwareDeviceFolderNote } from "./environment.ts";

const seconds = (timeoutMs: number) => `${timeoutMs / 1000} s (--timeout)`;

/** "`nobody` within 5 s (--timeout); likely causes: `causes`". */
export function noPeerWithin(nobody: string, timeoutMs: number, causes: string): string {
  return `${nobody} within ${seconds(timeoutMs)}; likely causes: ${causes}`;
}

/**
 * "gave up `doing` after 5 s (--timeout): `peer` did not send it in time" (doing: "waiting for …"; for a send the peer
 * never took, `didNot` "take it").
 */
export function peerSilent(doing: string, timeoutMs: number, peer: string, didNot = "send it"): string {
  return `gave up ${doing} after ${seconds(timeoutMs)}: ${peer} did not ${didNot} in time`;
}

/**
 * The causes of a Comch peer that never came, as dma-copy lists them: `other` (how the other side is started) not
 * started yet or exited; another server name; on the software device, another DOCA_SIM_DIR or user.
 */
export function comchCauses(other: string, nameFlag: string, name: string): string {
  return `${other} is not started yet or has already exited; it uses another ${nameFlag} (this side uses "${name}"); ` +
    `on the software device, the two sides must share DOCA_SIM_DIR (here ${softwareDeviceFolderNote()}) and run as ` +
    `the same user`;
}

/** `p`, with a TimeoutError (the FFI's "timed out after N ms waiting for …") replaced by `message()`. */
export async function wordTimeout<T>(p: Promise<T>, message: () => string): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof TimeoutError) throw new Error(message(), { cause: e });
    throw e;
  }
}

/**
 * A side label the peer's own reason may start with (older doca-ts sent "host: …", "DPU: …", "echoing side: …"): the
 * peer is named here by its role, so it is not said twice.
 */
const SIDE_LABEL = /^(host|DPU|echoing side|pinging side): /;

/**
 * The peer ended the run and said why (`reason`, already escaped): "PEER stopped: interrupted (SIGINT) while …"
 * when it was stopped (Ctrl-C, SIGTERM, SIGHUP, a closed output), "PEER failed: …" for anything else.
 */
export function peerEnded(peer: string, reason: string): string {
  const text = reason.replace(SIDE_LABEL, "");
  // a peer that gave up waiting for us says so in its own words: "the DPU side gave up waiting for … after 5 s …"
  if (/^gave up /.test(text)) return `${peer} ${text}`;
  return `${peer} ${/^interrupted \(/.test(text) ? "stopped" : "failed"}: ${text}`;
}

/** The peer vanished without a word: "PEER disconnected while `what` (`detail`)". */
export function peerVanished(peer: string, detail: string, what?: string): string {
  return `${peer} disconnected${what ? ` while ${what}` : ""} (${detail})`;
}

/** DOCA's codes for a connection the peer is no longer at the other end of. */
const PEER_GONE = new Set(["DOCA_ERROR_CONNECTION_RESET", "DOCA_ERROR_NOT_CONNECTED", "DOCA_ERROR_CONNECTION_ABORTED"]);

/** Whether `e` is DOCA saying the peer is gone (connection reset, not connected, aborted). */
export function meansPeerGone(e: unknown): boolean {
  return e instanceof DocaError && PEER_GONE.has(e.docaName);
}

/**
 * A value a peer sent, as a message shows it: an integer exactly (2^60 is 1152921504606846976, where JSON's
 * shortest form says 1152921504606847000, a number the peer never sent), anything else as JSON; at most `max`
 * characters (a longer integer in JSON's exponent form, never cut into another number).
 */
export function peerValue(value: unknown, max = 40): string {
  if (typeof value === "number" && Number.isInteger(value)) {
    const exact = BigInt(value).toString();
    if (exact.length <= max) return exact;
  }
  return String(JSON.stringify(value)).slice(0, max);
}
