/**
 * One RDMA connection between two doca-ts tasks (rdma-copy, rdma-ping), set up either by RDMA CM (one side
 * listens on a port, the other connects to address:port; the software device's CM runs over its own sockets) or by
 * exchanging exported connection details over a TCP socket on that port (out of band, like NVIDIA's samples do with
 * files). Then a small control channel: JSON messages over RDMA send/receive, every one from the peer untrusted.
 */
import { createConnection, createServer, isIP, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import process from "node:process";
import { setNativeEnv } from "../../ffi/diagnostics.ts";
import { printable } from "../../ffi/engine/printable.ts";
import { peerEnded, peerValue, peerVanished } from "../common/peer-words.ts";
import { Access, DocaErrorCode } from "../../ffi/native/constants.ts";
import { Device, listDevices } from "../../ffi/doca/common/device.ts";
import { loadDoca } from "../../ffi/native/library.ts";
import type { ProgressEngine } from "../../ffi/engine/pe.ts";
import { Rdma, type RdmaConnection } from "../../ffi/doca/rdma/rdma.ts";
import { NativeMemory } from "../../ffi/doca/common/memory.ts";
import { Mmap } from "../../ffi/doca/common/mmap.ts";
import { type Buf, BufInventory } from "../../ffi/doca/common/buf.ts";
import { DocaError, TimeoutError } from "../../ffi/native/errors.ts";
import { afterGrace, InterruptedError, raceAbort } from "../common/interrupt.ts";
import { UsageError } from "../common/cli.ts";
import type { OptionRules } from "../common/options-check.ts";
import { noPeerWithin, peerSilent, wordTimeout } from "../common/peer-words.ts";

export type Exchange = "cm" | "tcp";

/** Where this side meets the peer: listen on a port, or connect to host:port. */
export type Endpoint = { listen: true; host?: string; port: number } | { listen: false; host: string; port: number };

/** "--listen [ADDR:]PORT" / "--connect HOST:PORT" → Endpoint (UsageError naming the flag). */
export function parseEndpoint(listen: string | undefined, connect: string | undefined): Endpoint {
  if ((listen === undefined) === (connect === undefined)) throw new UsageError("give exactly one of --listen [ADDR:]PORT and --connect HOST:PORT");
  const text = (listen ?? connect)!;
  const flag = listen !== undefined ? "--listen" : "--connect";
  // [IPv6]:PORT, IPv4:PORT, or PORT alone (IPv6 needs its brackets: "::1:7471" would be ambiguous).
  const m = /^(?:(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):)?(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  const host = m ? m[1] ?? m[2] : undefined;
  if (!m || !(port >= 1 && port <= 65535)) throw new UsageError(`${flag}: expected ${listen !== undefined ? "[ADDR:]PORT" : "HOST:PORT"} with a port from 1 to 65535, got ${JSON.stringify(text)}`);
  if (listen === undefined && !host) throw new UsageError(`${flag}: expected HOST:PORT (an IPv4/IPv6 address and a port), got ${JSON.stringify(text)}`);
  // An address, checked as the system would parse it (256.1.1.1 or 1:2:3 are not addresses): RDMA CM resolves no names
  if (host !== undefined && isIP(host) === 0) {
    throw new UsageError(`${flag}: ${listen !== undefined ? "ADDR" : "HOST"} must be an IPv4 or IPv6 address (RDMA CM resolves no names), got ${JSON.stringify(host)}`);
  }
  return listen !== undefined ? { listen: true, host, port } : { listen: false, host: host!, port };
}

/** rdmaCopy's and rdmaPing's rules (options-check.ts) for the options that say how their link is made. */
export const LINK_OPTIONS: OptionRules = {
  endpoint: { type: "object", required: true, flag: "--listen/--connect", hint: "{ listen: true, port } or { listen: false, host, port }" },
  exchange: { type: ["cm", "tcp"], required: true, flag: "--exchange" },
};

export interface LinkOptions {
  device: Device;
  pe: ProgressEngine;
  endpoint: Endpoint;
  exchange: Exchange;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Access the peer gets through this context (RDMA_WRITE for a write target, RDMA_READ for a read source). */
  permissions: number;
  maxTasks?: number;
  /** Told once this side waits for the peer (listening), e.g. to print "listening on port N". */
  onListening?: (what: string) => void;
  /** The peer's role in words, for what it did ("the receiver", "the echoing side"; default "the peer"). */
  peer?: string;
}

/** The RDMA context and its one connection, plus a control channel; close() releases all of it. */
export class Link implements AsyncDisposable {
  private constructor(readonly rdma: Rdma, readonly connection: RdmaConnection, readonly channel: Channel) {}

  static async open(opts: LinkOptions): Promise<Link> {
    const rdma = await Rdma.create(opts.device, opts.pe, {
      permissions: opts.permissions | Access.LOCAL_READ_WRITE,
      maxTasks: opts.maxTasks ?? 64,
      receives: Channel.RECEIVES,
      receiveSize: Channel.MAX_MESSAGE,
      timeoutMs: opts.timeoutMs,
    });
    try {
      const connection = await raceAbort(connect(rdma, opts), opts.signal, "connecting to the peer");
      const channel = new Channel(rdma, connection, opts.timeoutMs, opts.signal, opts.peer);
      return new Link(rdma, connection, channel);
    } catch (e) {
      await rdma.close().catch(() => {});
      throw e;
    }
  }

  /** Disconnects, stops the context (in-flight tasks are flushed), then frees the channel's buffers. */
  async close(): Promise<void> {
    try {
      this.connection.disconnect();
    } catch { /* the peer may be gone already */ }
    try {
      await this.rdma.close();
    } finally {
      this.channel.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

async function connect(rdma: Rdma, opts: LinkOptions): Promise<RdmaConnection> {
  const { endpoint, timeoutMs } = opts;
  if (opts.exchange === "cm") {
    if (!endpoint.listen) {
      return await untilListening((ms) => rdma.connectTo(endpoint.host, endpoint.port, { timeoutMs: ms }), opts);
    }
    opts.onListening?.(`listening for RDMA CM on ${listenWhere(endpoint)}`);
    rdma.listen(endpoint.port);
    return await wordTimeout(rdma.accept({ timeoutMs }), () => nobodyConnected(endpoint, timeoutMs));
  }
  // Out of band: each side sends its exported details over one TCP socket (length-prefixed), then connects.
  const { connection, details } = rdma.exportConnection();
  const peer = endpoint.listen
    ? await wordTimeout(exchangeOverTcp(endpoint, details, timeoutMs, opts.onListening), () => nobodyConnected(endpoint, timeoutMs))
    : await untilListening((ms) => exchangeOverTcp(endpoint, details, ms), opts);
  connection.connect(peer);
  return connection;
}

/** A listening side that no peer reached: the same sentence as every task's (tasks/common/peer-words.ts). */
function nobodyConnected(endpoint: Endpoint, timeoutMs: number): string {
  return noPeerWithin(
    `no peer connected to port ${endpoint.port}`,
    timeoutMs,
    `the connecting side (--connect HOST:${endpoint.port}) is not started yet or has already exited, or connects to ` +
      `another address or port or with another --exchange`,
  );
}

/**
 * Where RDMA CM will listen, set up before it does: `--listen ADDR:PORT` binds ADDR on the software device
 * (DOCA_SIM_RDMA_LISTEN_ADDR: a receiver told 127.0.0.1 must not accept RDMA writes from the network); DOCA's own
 * RDMA CM listens on every address of the device, which the line then says.
 */
function listenWhere(endpoint: Endpoint): string {
  if (endpoint.host === undefined) return `port ${endpoint.port} (every address; --listen ADDR:PORT names one)`;
  if (!loadDoca().isSoftwareDevice) {
    return `port ${endpoint.port} on every address of the device (DOCA's RDMA CM cannot bind ${endpoint.host} alone)`;
  }
  process.env.DOCA_SIM_RDMA_LISTEN_ADDR = endpoint.host;
  setNativeEnv("DOCA_SIM_RDMA_LISTEN_ADDR", endpoint.host);
  return `${endpoint.host.includes(":") ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
}

/** Pause between attempts of a connecting side whose peer does not listen yet. */
const RETRY_MS = 250;

/** The peer is not listening (yet): nothing answered at its address, so trying again may work. */
function notListening(e: unknown): boolean {
  if (e instanceof DocaError) return e.code === DocaErrorCode.CONNECTION_ABORTED;
  // the TCP exchange: Node's socket error (the cause of ours) names its errno
  const cause = (e as { cause?: unknown })?.cause ?? e;
  return (cause as { code?: unknown })?.code === "ECONNREFUSED";
}

/**
 * A connecting side started before its peer listens waits for it within --timeout, as dma-copy's host waits for its
 * DPU: it says once that it waits, tries again every RETRY_MS, and fails at the deadline naming the address.
 */
async function untilListening<T>(attempt: (msLeft: number) => Promise<T>, opts: LinkOptions): Promise<T> {
  const { endpoint, timeoutMs, signal } = opts;
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    try {
      return await attempt(Math.max(1, deadline - Date.now()));
    } catch (e) {
      if (!notListening(e) || signal?.aborted) throw e;
      // A last attempt at the deadline itself: giving up a retry early would wait less than --timeout promises
      if (Date.now() >= deadline) {
        throw new Error(
          noPeerWithin(
            `nobody listened at ${endpoint.host}:${endpoint.port}`,
            timeoutMs,
            `the listening side (--listen ${endpoint.port}) is not started yet or has already exited, or listens on ` +
              `another port or with another --exchange`,
          ),
          { cause: e },
        );
      }
      if (!said) opts.onListening?.(`waiting for the peer to listen at ${endpoint.host}:${endpoint.port} (up to ${timeoutMs / 1000} s)`);
      said = true;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(RETRY_MS, deadline - Date.now()))));
    }
  }
}

/** Largest connection details accepted from a peer (the software device's are a few dozen bytes). */
const MAX_DETAILS = 4096;

function exchangeOverTcp(endpoint: Endpoint, mine: Uint8Array, timeoutMs: number, onListening?: (what: string) => void): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    let server: ReturnType<typeof createServer> | undefined;
    let socket: Socket | undefined;
    const timer = setTimeout(() => finish(new TimeoutError(`the peer's connection details on TCP port ${endpoint.port}`, timeoutMs)), timeoutMs);
    let settled = false;
    const finish = (error: Error | undefined, value?: Uint8Array) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      server?.close();
      // On success end() (our details may still be in flight to the peer: destroy() could drop them); on failure
      // drop the connection at once.
      if (error) socket?.destroy();
      else socket?.end();
      if (error) reject(error);
      else resolve(value!);
    };
    const talk = (s: Socket) => {
      socket = s;
      const header = Buffer.alloc(4);
      header.writeUInt32BE(mine.length);
      s.write(Buffer.concat([header, Buffer.from(mine)]));
      let got = Buffer.alloc(0);
      s.on("data", (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        if (got.length < 4) return;
        const length = got.readUInt32BE(0);
        if (length === 0 || length > MAX_DETAILS) return finish(new Error(`the peer sent ${length} bytes of connection details (expected 1..${MAX_DETAILS})`));
        if (got.length > 4 + length) return finish(new Error("the peer sent more than its connection details"));
        if (got.length === 4 + length) finish(undefined, new Uint8Array(got.subarray(4)));
      });
      // the socket's error stays the cause: whether the peer was not listening yet is decided on its errno code
      s.on("error", (e) => finish(new Error(`TCP exchange of connection details failed: ${e.message}`, { cause: e })));
      s.on("end", () => finish(new Error("the peer closed the TCP exchange before sending its connection details")));
    };
    if (endpoint.listen) {
      server = createServer((s) => {
        if (socket) return void s.destroy(); // one peer only
        server!.close();
        talk(s);
      });
      server.on("error", (e) => finish(new Error(`cannot listen on TCP port ${endpoint.port}: ${e.message}`)));
      server.listen(endpoint.port, endpoint.host, () => onListening?.(`listening on TCP port ${endpoint.port} for the peer's connection details`));
    } else {
      talk(createConnection({ host: endpoint.host, port: endpoint.port }));
    }
  });
}

/** A control message: a JSON object with a string `type`; every other field is checked by whoever reads it. */
export type Message = { type: string } & Record<string, unknown>;

export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/**
 * JSON control messages over RDMA send/receive. Sends go from a small ring of registered buffers (each reused only
 * after its send completed); receives are the context's posted buffers (Rdma { receives }). Waits are bounded by
 * one deadline each, end when the connection drops, and end at once on the abort signal.
 */
export class Channel {
  static readonly MAX_MESSAGE = 4096;
  static readonly RECEIVES = 64;
  static readonly SENDS = 16;
  readonly #memory: NativeMemory;
  readonly #mmap: Mmap;
  readonly #inventory: BufInventory;
  readonly #bufs: Buf[] = [];
  readonly #pending: (Promise<void> | undefined)[] = [];
  #next = 0;
  #sendSeq = 0;
  #recvSeq = 0;
  readonly #held = new Map<number, Message>();
  #lost: Error | undefined;
  /** What DOCA said when the connection ended (for "the receiver disconnected while … (detail)"). */
  #lostDetail = "";
  /** The peer's ABORT once read, whoever read it (a wait abandoned after another part failed may have). */
  #peerAbort: PeerAbortError | undefined;
  /** The peer's ABORT when it came ahead of messages it sent before it: those are delivered first, then it. */
  #abortAhead: { seq: number; error: PeerAbortError } | undefined;
  readonly #lostWaiters = new Set<(e: Error) => void>();

  constructor(readonly rdma: Rdma, readonly connection: RdmaConnection, readonly timeoutMs: number, readonly signal?: AbortSignal, readonly peer = "the peer") {
    this.#memory = NativeMemory.alloc(Channel.SENDS * Channel.MAX_MESSAGE);
    this.#mmap = Mmap.create({ memory: this.#memory, permissions: Access.LOCAL_READ_WRITE, devices: [rdma.device] });
    this.#inventory = new BufInventory(Channel.SENDS);
    for (let i = 0; i < Channel.SENDS; i++) {
      this.#bufs.push(this.#inventory.bufByAddr(this.#mmap, this.#memory.address + i * Channel.MAX_MESSAGE, Channel.MAX_MESSAGE));
    }
    connection.onDisconnect((reason) => {
      this.#lostDetail = reason instanceof Error ? reason.message : String(reason);
      this.#lost = new Error(peerVanished(this.peer, this.#lostDetail));
      for (const w of this.#lostWaiters) w(this.#lost);
    });
  }

  /** `what` names the send as the user understands it (an interruption or a loss says "while …" it). */
  async send(message: Message, what: string = `sending a ${message.type} message to the peer`): Promise<void> {
    return await this.#send(message, this.signal, what);
  }

  async #send(message: Message, signal: AbortSignal | undefined, what: string): Promise<void> {
    // Numbered when called: DOCA promises no order among completions (the receiver's queue may not be the wire's
    // order, and a send waiting for its ring slot may leave after a later one), so the receiver restores it.
    const bytes = new TextEncoder().encode(JSON.stringify({ ...message, seq: this.#sendSeq++ }));
    if (bytes.length > Channel.MAX_MESSAGE) throw new Error(`control message of ${bytes.length} bytes exceeds ${Channel.MAX_MESSAGE}`);
    const i = this.#next;
    this.#next = (i + 1) % Channel.SENDS;
    await this.#pending[i]?.catch(() => {});
    const buf = this.#bufs[i];
    this.#memory.bytes.set(bytes, i * Channel.MAX_MESSAGE);
    buf.setData(buf.address, bytes.length);
    const sent = this.connection.send(buf);
    this.#pending[i] = sent;
    await this.#bounded(sent, what, signal);
  }

  /**
   * Our last message of a copy (the checksum the receiver commits on): like send, but a stop takes effect only
   * FINAL_MESSAGE_GRACE_MS after it came. The peer may hold the message before our send has completed here (on a
   * loaded machine, long before): a stop then must not cut the exchange that finishes the copy (see recvFinal).
   */
  async sendFinal(message: Message, what: string): Promise<void> {
    return await this.#send(message, afterGrace(this.signal), what);
  }

  /** The next message; `expect` lists the types allowed here (anything else, or ABORT, is an error). */
  async recv(what: string, ...expect: string[]): Promise<Message> {
    return await this.#recv(what, expect, this.signal);
  }

  /**
   * The peer's last message of a copy (its receipt after it committed): like recv, but a stop takes effect only
   * FINAL_MESSAGE_GRACE_MS after it came, so a stop at the very end reports the completed copy.
   */
  async recvFinal(what: string, ...expect: string[]): Promise<Message> {
    return await this.#recv(what, expect, afterGrace(this.signal));
  }

  async #recv(what: string, expect: string[], signal: AbortSignal | undefined): Promise<Message> {
    const msg = await this.#nextInOrder(what, signal);
    if (expect.length && !expect.includes(msg.type)) {
      throw new ProtocolError(`the peer sent ${JSON.stringify(msg.type.slice(0, 40))} while ${what} (expected ${expect.join(" or ")})`);
    }
    return msg;
  }

  /**
   * Messages in the peer's order (its `seq`), whatever order their receives completed in. An ABORT ends the wait at
   * its turn: at once when nothing the peer sent before it is missing; else after those messages (a DONE the peer
   * sent just before it stopped still counts), or as soon as a wait for them fails (its reason is then the answer).
   */
  async #nextInOrder(what: string, signal: AbortSignal | undefined): Promise<Message> {
    for (;;) {
      const held = this.#held.get(this.#recvSeq);
      if (held) {
        this.#held.delete(this.#recvSeq++);
        return held;
      }
      if (this.#abortAhead?.seq === this.#recvSeq) throw this.#abortAhead.error;
      const m = this.#parse((await this.#bounded(this.rdma.recv(), what, signal).catch((e) => {
        if (this.#abortAhead && !(e instanceof InterruptedError)) throw this.#abortAhead.error;
        // A receive that failed took a message our posted buffers could not hold: say so, not only DOCA's code
        if (e instanceof DocaError && e.fn === "doca_rdma_task_receive") {
          throw new ProtocolError(`the peer sent a control message this side could not receive while ${what} (at most ${Channel.MAX_MESSAGE} bytes; ${e.message})`);
        }
        throw e;
      })).bytes, what);
      if (m.type === "ABORT") {
        const error = this.#peerAbort = peerGaveUp(m.reason, this.peer);
        const ahead = typeof m.seq === "number" && Number.isSafeInteger(m.seq) && m.seq > this.#recvSeq && m.seq <= this.#recvSeq + Channel.RECEIVES;
        if (!ahead || this.#abortAhead) throw error;
        this.#abortAhead = { seq: m.seq as number, error };
        continue;
      }
      const seq = m.seq;
      // At most RECEIVES messages can be ahead of the one awaited (each took one of our posted receives)
      if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < this.#recvSeq || seq > this.#recvSeq + Channel.RECEIVES || this.#held.has(seq)) {
        throw new ProtocolError(`the peer sent a control message out of sequence while ${what} (seq ${peerValue(seq, 20)}, expected ${this.#recvSeq})`);
      }
      if (seq === this.#recvSeq) {
        this.#recvSeq++;
        return m;
      }
      this.#held.set(seq, m);
    }
  }

  #parse(bytes: Uint8Array, what: string): Message {
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch {
      throw new ProtocolError(`the peer sent a control message that is not UTF-8 JSON while ${what}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || typeof (parsed as Message).type !== "string") {
      throw new ProtocolError(`the peer sent a control message without a type while ${what}`);
    }
    return parsed as Message;
  }

  /** Races `p` with the connection dropping, the deadline and the abort signal. */
  #bounded<T>(p: Promise<T>, what: string, signal = this.signal): Promise<T> {
    if (this.#lost) {
      // Gone, but what it sent before leaving (its ABORT reason, a receipt) may already be here: let `p` settle
      // first if it can, within this turn; otherwise the loss is the answer.
      const lost = this.#lost;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(lost), 0);
        p.then((v) => (clearTimeout(timer), resolve(v)), () => (clearTimeout(timer), reject(lost)));
      });
    }
    const raced = new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(peerSilent(what, this.timeoutMs, this.peer))), this.timeoutMs);
      // The peer's disconnection is delivered inside the progress call that may also have completed `p` (a send
      // acknowledged just before the peer closed): let `p` settle first, so what did complete counts.
      const onLost = () => setTimeout(() => done(new Error(peerVanished(this.peer, this.#lostDetail, what))), 0);
      const done = (e: Error | undefined, v?: T) => {
        clearTimeout(timer);
        this.#lostWaiters.delete(onLost);
        if (e) reject(e);
        else resolve(v as T);
      };
      this.#lostWaiters.add(onLost);
      p.then((v) => done(undefined, v), (e) => done(e instanceof Error ? e : new Error(String(e))));
    });
    return raceAbort(raced, signal, what);
  }

  /** Whether the connection has ended under us (the peer left or disconnected). */
  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /**
   * Best effort: tells the peer why we stop (never throws, bounded). The send is not cut short by the stop signal
   * (a stop is what it reports): it waits, one second at most, until the ABORT has left, since the close that
   * follows drops what is still queued behind the writes in flight.
   */
  async abort(reason: string): Promise<void> {
    if (this.#lost) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#send({ type: "ABORT", reason: reason.slice(0, 1000) }, undefined, "telling the peer why this side stopped").catch(() => {}),
      new Promise((r) => (timer = setTimeout(r, 1000))),
    ]);
    clearTimeout(timer);
  }

  /**
   * After the connection failed under us (a send of ours refused, the disconnection event): the peer's ABORT, if it
   * sent one before leaving. Its receive can complete after the failure we saw, so this waits up to `graceMs` for
   * it, reading past the messages still queued (their order no longer matters).
   */
  async lastWords(graceMs = 1_000): Promise<PeerAbortError | undefined> {
    const until = Date.now() + graceMs;
    for (;;) {
      if (this.#peerAbort) return this.#peerAbort;
      const left = until - Date.now();
      if (left <= 0 || this.rdma.closed) return undefined;
      let bytes: Uint8Array;
      try {
        // Short waits: a receive still pending elsewhere (an abandoned wait) may take the ABORT meanwhile
        bytes = (await this.rdma.recv({ timeoutMs: Math.min(left, 50) })).bytes;
      } catch {
        continue; // a flushed receive; later ones may still hold the reason (the deadline bounds this)
      }
      let m: Message;
      try {
        m = this.#parse(bytes, "reading the peer's last messages");
      } catch {
        continue;
      }
      if (m.type === "ABORT") return (this.#peerAbort = peerGaveUp(m.reason, this.peer));
    }
  }

  close(): void {
    this.#inventory.close();
    this.#mmap.close();
    this.#memory.close();
  }
}

export class PeerAbortError extends Error {
  override name = "PeerAbortError";
}

/**
 * The error for a peer's ABORT, in the words every task uses (tasks/common/peer-words.ts): "the receiver stopped:
 * interrupted (SIGINT) while …" or "the receiver failed: …", `peer` its role in words. Its reason is escaped whole
 * where it enters (its line breaks too, so it cannot add a line of its own to our output) and cut to 500
 * characters; a reason that is not text is not shown.
 */
export function peerGaveUp(reason: unknown, peer = "the peer"): PeerAbortError {
  const text = typeof reason === "string" ? printable(reason, 500) : reason === undefined ? "no reason" : "a reason that is not text";
  return new PeerAbortError(peerEnded(peer, text));
}

/**
 * The device an RDMA task uses: `name` is a PCI address or an IB device name (as NVIDIA's samples take with -d);
 * default the first device that has RDMA. A DOCA without libdoca_rdma, or no RDMA device, says so.
 */
export function openRdmaDevice(name: string | undefined): Device {
  const devices = listDevices();
  const rdmaCapable = devices.filter((d) => (d.caps.rdma?.tasks.length ?? 0) > 0);
  if (!devices.some((d) => d.caps.rdma)) {
    const info = loadDoca();
    const broken = info.optionalUnloadable.find((u) => u.library === "rdma");
    throw new Error(
      (broken ? `${broken.path} could not be loaded (${broken.reason})` : `this DOCA (${info.dir}) has no libdoca_rdma`) +
        ": RDMA tasks need it (the software device builds it with `deno task sim:build`)",
    );
  }
  if (name === undefined) {
    if (!rdmaCapable[0]) throw new Error("no DOCA device with RDMA found (see the devices task)");
    return Device.open(rdmaCapable[0].pciAddr);
  }
  const match = devices.find((d) => d.ibdevName === name) ?? devices.find((d) => d.pciAddr === name || d.pciAddr.endsWith(name));
  if (!match) {
    const names = devices.map((d) => `${d.pciAddr} (${d.ibdevName})`).join(", ");
    throw new UsageError(`-d/--device: no DOCA device ${JSON.stringify(name)}; available: ${names || "none"}`);
  }
  return Device.open(match.pciAddr);
}
