/**
 * The DMA Copy messenger (tasks/wire/messenger.ts) against an in-memory channel: a peer's failure reason is kept in
 * arrival order whoever waits for it, so the STATUS that follows it always carries it (before: a chunk loop and a
 * failed DMA's look at the queue raced, and the DMA's side reported "answered failure status" without the reason).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type MessageChannel, Messenger, PeerFailedError } from "../tasks/wire/messenger.ts";
import { encodeDirection, encodeFailureReason, encodeStatus, MsgType } from "../tasks/wire/protocol.ts";
import { TimeoutError } from "../mod.ts";

/** Messages are handed to waiters first come, first served, synchronously, as ComchConnection does from its callback. */
class MemoryChannel implements MessageChannel {
  readonly maxMsgSize = 4080;
  readonly #queue: Uint8Array[] = [];
  readonly #waiters: { resolve(b: Uint8Array): void; reject(e: Error): void }[] = [];
  send(_bytes: Uint8Array): Promise<void> {
    return Promise.resolve();
  }
  recv(opts: { timeoutMs?: number } = {}): Promise<Uint8Array> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      this.#waiters.push(waiter);
      setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1), reject(new TimeoutError("a message", opts.timeoutMs ?? 0));
      }, opts.timeoutMs ?? 1000);
    });
  }
  deliver(bytes: Uint8Array): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve(bytes);
    else this.#queue.push(bytes);
  }
  /** The peer went away: every waiter, now and later, fails as ComchConnection's do. */
  disconnect(): void {
    this.recv = () => Promise.reject(new Error("ComchClient: peer disconnected"));
    for (const w of this.#waiters.splice(0)) w.reject(new Error("ComchClient: peer disconnected"));
  }
}

test("two waiters: the one that gets the failure STATUS reports the reason another waiter received", async () => {
  const channel = new MemoryChannel();
  const messenger = new Messenger(channel, { timeoutMs: 300, peer: "the host side" });
  const chunkLoop = messenger.recvAny("the next chunk").catch((e) => e);
  const dmaFailed = messenger.lostOrFailed("the DMA ran", new Error("DOCA_ERROR_NOT_PERMITTED"));
  channel.deliver(encodeFailureReason("host: interrupted (SIGINT) while sending", channel.maxMsgSize));
  channel.deliver(encodeStatus(false));
  const error = await dmaFailed;
  assert.ok(error instanceof PeerFailedError, String(error));
  assert.match(error.message, /^the host side stopped: interrupted \(SIGINT\) while sending$/);
  await chunkLoop;
});

test("two waiters: the one that sees the disconnect reports the reason and STATUS the other took (issue 29 F3)", async () => {
  // The host's chunk loop waits for a release while its failed send looks at the queue: the stopped DPU's reason and
  // STATUS go to one, its disconnect to the other. Before, the chunk loop won with "the DPU side disconnected".
  for (const order of ["loop-first", "look-first"] as const) {
    const channel = new MemoryChannel();
    const messenger = new Messenger(channel, { timeoutMs: 2_000, peer: "the DPU side" });
    const first = order === "loop-first";
    const loop = () => messenger.recv(MsgType.CHUNK_DONE, "the DPU to finish a chunk").catch((e) => e);
    const look = () => messenger.failureOnTheWay();
    const a = first ? loop() : look();
    const b = first ? look() : loop();
    channel.deliver(encodeFailureReason("DPU: interrupted (SIGPIPE: stderr closed)", channel.maxMsgSize));
    channel.deliver(encodeStatus(false));
    await new Promise((r) => setTimeout(r, 5));
    channel.disconnect();
    const chunkLoop = await (first ? a : b);
    assert.ok(chunkLoop instanceof PeerFailedError, `${order}: ${chunkLoop}`);
    assert.match(chunkLoop.message, /the DPU side stopped: interrupted \(SIGPIPE: stderr closed\)/, order);
  }
});

test("one waiter: the reason then the status, in one call or across calls", async () => {
  for (const spread of [false, true]) {
    const channel = new MemoryChannel();
    const messenger = new Messenger(channel, { timeoutMs: 300, peer: "the DPU side" });
    const waiting = messenger.recv(MsgType.CHUNK_DONE, "the chunk's completion").catch((e) => e);
    channel.deliver(encodeFailureReason("DPU: disk full", channel.maxMsgSize));
    if (spread) await new Promise((r) => setTimeout(r, 5));
    channel.deliver(encodeStatus(false));
    const error = await waiting;
    assert.ok(error instanceof PeerFailedError, String(error));
    // a failure that is not a stop: "failed", the peer named once by its role (issue 32 n1 item 5)
    assert.equal(error.message, "the DPU side failed: disk full");
  }
});

test("a side stopped while the peer's answer waits unread still learns the peer speaks doca-ts (so it says why)", async () => {
  const cases: [string, Uint8Array[], boolean][] = [
    ["a doca-ts DIRECTION queued", [encodeDirection({ fileInHost: false, docaTs: true })], true],
    ["NVIDIA's DIRECTION queued", [encodeDirection({ fileInHost: false })], false],
    ["nothing arrives", [], false],
  ];
  for (const [what, queued, expected] of cases) {
    const channel = new MemoryChannel();
    const messenger = new Messenger(channel, { timeoutMs: 300, peer: "the DPU side" });
    for (const m of queued) channel.deliver(m);
    const t0 = Date.now();
    assert.equal(await messenger.peerSpeaksDocaTs(100), expected, what);
    assert.ok(Date.now() - t0 < 2_000, `${what}: bounded`);
  }
});

// An interruption or a loss says what this side was doing in the words of files and peers, not the protocol's
// message names ("while sending CHUNK_DONE" told a user nothing).
test("a send stopped by Ctrl-C says what it was doing in words a user knows", async () => {
  const { encodeChunk, sendingWhat } = await import("../tasks/wire/protocol.ts");
  for (const type of Object.values(MsgType)) assert.doesNotMatch(sendingWhat(type), /[A-Z]{2,}_|\b[A-Z]{4,}\b/, `type ${type}: ${sendingWhat(type)}`);
  const stop = new AbortController();
  stop.abort(Object.assign(new Error("SIGINT"), { signal: "SIGINT" }));
  const messenger = new Messenger(new MemoryChannel(), { timeoutMs: 300, peer: "the host side", signal: stop.signal });
  const error = await messenger.send(encodeChunk(MsgType.CHUNK_DONE, 0, 0, 4096)).catch((e) => e);
  assert.match(String(error?.message), /while handing a chunk back to the sender/);
  assert.doesNotMatch(String(error?.message), /CHUNK_DONE/);
});

test("rdma-copy and rdma-ping name each control message they send in words a user knows", async () => {
  const { readFileSync } = await import("node:fs");
  for (const file of ["../tasks/rdma-copy/transfer.ts", "../tasks/rdma-ping.ts"]) {
    const src = readFileSync(new URL(file, import.meta.url), "utf8");
    // each send is one line: the message, then what sending it does
    const sends = src.split("\n").filter((line) => line.includes("channel.send({"));
    assert.ok(sends.length > 0, file);
    for (const line of sends) assert.match(line, /\}, "[a-z][^"]+"\)/, `${file}: ${line.trim()} sends without saying what it does`);
  }
});
