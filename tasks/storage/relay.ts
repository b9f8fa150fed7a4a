/**
 * The DPU side of NVIDIA's storage reference application, zero-copy flow (what their comch_to_rdma_zero_copy does),
 * in TypeScript: NVIDIA's initiator_comch (host) and target_rdma (storage server) talk to it unmodified.
 *
 * Control: a Comch server for the host, a TCP connection to the storage target; each host request is forwarded to the
 * target under a message id of ours and answered with the target's answer (tasks/storage/wire.ts). At init the host's
 * memory, exported over PCI, is imported and re-exported for RDMA (a memory chain): the target's RDMA reads and
 * writes then land in the host's memory directly, never in this process's (docs/FAULTS.md, "Memory chains").
 * Data path: each 64-byte io request from the host's producer (our Comch consumer) goes to the target as an RDMA send
 * on the control connection; each answer the target sends back is marked a result and goes to the host's consumer
 * through our producer.
 */
import { connect, type Socket } from "node:net";
import {
  Access,
  BufInventory,
  type ComchConnection,
  type ComchConsumer,
  type ComchProducer,
  type ComchServer,
  type Device,
  Mmap,
  NativeMemory,
  type ProgressEngine,
  Rdma,
  type RdmaConnection,
} from "../../mod.ts";
import { InterruptedError, interruption, raceAbort } from "../common/interrupt.ts";
import { meansPeerGone, peerVanished } from "../common/peer-words.ts";
import { type ControlMessage, encode, Framer, IO_MESSAGE_SIZE, markResult, type MessageTypeName, RdmaRole, WireError } from "./wire.ts";

export const DEFAULT_CHANNEL = "doca_storage_comch";
/** The most transactions a host may ask for: one Comch fast-path buffer each way per transaction (at most 4096). */
export const MAX_TRANSACTIONS = 4096;
const RDMA_ACCESS = Access.LOCAL_READ_WRITE | Access.RDMA_READ | Access.RDMA_WRITE;

/**
 * Messages no reader has asked for yet, at most, per link. The session asks one question at a time, so a peer
 * following the protocol leaves at most a few unread; one that sends what nobody asked for (answers to no request,
 * as fast as it can) would otherwise grow this side's memory without bound.
 */
export const MAX_UNREAD_MESSAGES = 64;

/** A peer sent more than MAX_UNREAD_MESSAGES messages nobody asked for (wireError names the peer). */
class UnaskedError extends Error {}

/** Messages arriving on one link, in order; a reader waits for the next, or for the one answering an id. */
class Inbox {
  #queue: ControlMessage[] = [];
  #waiters: { want: (m: ControlMessage) => boolean; resolve: (m: ControlMessage) => void; reject: (e: Error) => void }[] = [];
  #error: Error | undefined;

  constructor(readonly name: string) {}

  deliver(m: ControlMessage): void {
    const i = this.#waiters.findIndex((w) => w.want(m));
    if (i >= 0) this.#waiters.splice(i, 1)[0].resolve(m);
    else if (this.#queue.length < MAX_UNREAD_MESSAGES) this.#queue.push(m);
    else throw new UnaskedError(`sent more than ${MAX_UNREAD_MESSAGES} control messages nothing asked for (the last a ${m.type})`);
  }

  fail(e: Error): void {
    this.#error ??= e;
    for (const w of this.#waiters.splice(0)) w.reject(e);
  }

  next(want: (m: ControlMessage) => boolean, timeoutMs: number, what: string): Promise<ControlMessage> {
    const i = this.#queue.findIndex(want);
    if (i >= 0) return Promise.resolve(this.#queue.splice(i, 1)[0]);
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      const waiter = {
        want,
        resolve: (m: ControlMessage) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`no ${what} from the ${this.name} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }
}

export interface RelayOptions {
  device: Device;
  rep: ReturnType<Device["openRepresentor"]>;
  pe: ProgressEngine;
  /** host:port of the storage target (its --listen-port). */
  storage: { host: string; port: number };
  channel?: string;
  /** Every wait on a peer; default 5 s as NVIDIA's --control-timeout (accepting the host waits without limit). */
  timeoutMs?: number;
  startServer: (name: string) => ComchServer;
  log?: (line: string) => void;
  /** Aborting it (Ctrl-C) ends every wait with an InterruptedError; everything opened is closed. */
  signal?: AbortSignal;
}

export interface RelayStats {
  /** io requests relayed host → target and answers target → host. */
  requests: number;
  answers: number;
  seconds: number;
}

/** Runs one whole session (query, init, start, stop, shutdown) for one host; resolves when the host has shut down. */
export async function runStorageRelay(opts: RelayOptions): Promise<RelayStats> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const log = opts.log ?? (() => {});
  const stats: RelayStats = { requests: 0, answers: 0, seconds: 0 };
  const storageInbox = new Inbox("storage target"), hostInbox = new Inbox("host");
  const target = `the storage target ${opts.storage.host}:${opts.storage.port}`;
  const socket = await raceAbort(connectTcp(opts.storage.host, opts.storage.port, timeoutMs), opts.signal, "connecting to the storage target");
  const onAbort = () => {
    const e = interruption(opts.signal!, "relaying the storage session");
    storageInbox.fail(e);
    hostInbox.fail(e);
  };
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  // The target gone ends the session whatever the relay is waiting for (the host included): every wait watches it
  let targetLost!: (e: Error) => void;
  const targetGone = new Promise<never>((_, reject) => (targetLost = reject));
  targetGone.catch(() => {});
  const loseTarget = (e: Error) => {
    storageInbox.fail(e);
    hostInbox.fail(e);
    targetLost(e);
    socket.destroy();
  };
  const tcpFramer = new Framer();
  const tcpStall = stallWatch(tcpFramer, target, timeoutMs, loseTarget);
  socket.on("data", (chunk: Uint8Array) => {
    try {
      for (const m of tcpFramer.push(new Uint8Array(chunk))) storageInbox.deliver(m);
      tcpStall.check();
    } catch (e) {
      loseTarget(wireError(e, target));
    }
  });
  socket.on("close", () => loseTarget(new Error(`${target} closed the connection`)));
  socket.on("error", (e) => loseTarget(new Error(`${target}: ${e.message}`)));
  log(`storage-relay: connected to ${target}`);

  const server = opts.startServer(opts.channel ?? DEFAULT_CHANNEL);
  const owned: { close(): unknown }[] = [];
  let consumer: ComchConsumer | undefined, producer: ComchProducer | undefined;
  let ctrl: Rdma | undefined, data: Rdma | undefined;
  let running = false;
  let pumps: Promise<void>[] = [];
  const hostFramer = new Framer();
  const hostStall = stallWatch(hostFramer, "the host", timeoutMs, (e) => hostInbox.fail(e));
  try {
    const host = await Promise.race([
      raceAbort(server.accept(), opts.signal, "waiting for the host"),
      targetGone.catch((e: Error) => {
        throw new Error(`${e.message} while the relay waited for the host`);
      }),
    ]);
    log("storage-relay: host connected");
    void (async () => {
      try {
        for (;;) {
          for (const m of hostFramer.push(await host.recv())) hostInbox.deliver(m);
          hostStall.check();
        }
      } catch (e) {
        hostInbox.fail(wireError(e, "the host"));
      }
    })();

    let nextId = 1;
    const toStorage = (type: MessageTypeName, correlation: number, payload: ControlMessage["payload"]) => {
      const m: ControlMessage = { type, id: nextId++, correlation, payload };
      socket.write(encode(m));
      return m;
    };
    const toHost = (request: ControlMessage, answer: ControlMessage) =>
      host.send(encode({ type: answer.type, id: request.id, correlation: request.correlation, payload: answer.payload }));
    /** Forwards a host request to the target; its answer (or error) goes back under the host's id. */
    const forward = async (request: ControlMessage, answerType: MessageTypeName, payload: ControlMessage["payload"] = { kind: "none" }) => {
      const sent = toStorage(request.type, request.correlation, payload);
      const answer = await storageInbox.next((m) => m.id === sent.id, timeoutMs, `answer to ${request.type}`);
      if (answer.type !== answerType && answer.type !== "error_response") {
        throw new Error(`${target} answered ${request.type} with ${answer.type}`);
      }
      return answer;
    };
    const hostRequest = (type: MessageTypeName) => hostInbox.next(() => true, 24 * 3600_000, type).then((m) => {
      if (m.type !== type) throw new Error(`the host sent ${m.type} while ${type} was expected`);
      return m;
    }, (e) => {
      // the host gone: one line in every task's words ("the host disconnected while …"), not Comch's "peer disconnected"
      if (e instanceof InterruptedError || host.connected) throw e;
      throw new Error(peerVanished("the host", "its Comch connection closed", `the relay waited for its ${type}`), { cause: e });
    });

    /** A connection of `rdma` to the target in `role`, details exchanged through the control link. */
    const connectRdma = async (rdma: Rdma, role: number, correlation: number): Promise<RdmaConnection> => {
      const { connection, details } = rdma.exportConnection();
      const sent = toStorage("create_rdma_connection_request", correlation, { kind: "rdma", contextIdx: 0, role, details });
      const answer = await storageInbox.next((m) => m.id === sent.id, timeoutMs, "create_rdma_connection_response");
      if (answer.payload.kind !== "rdma") throw new Error(`${target} answered a connection request with ${answer.type}`);
      try {
        connection.connect(answer.payload.details);
      } catch (e) {
        const which = role === RdmaRole.io_data ? "data" : "control";
        throw new Error(`${target} sent RDMA connection details (its ${which} connection) that cannot be connected to: ${(e as Error).message}`, { cause: e });
      }
      return connection;
    };

    // query: the storage's size, as the target reports it
    const query = await hostRequest("query_storage_request");
    await toHost(query, await forward(query, "query_storage_response"));

    // init: the host's memory chained on to the target, the fast path to the host, two RDMA connections to the target
    const init = await hostRequest("init_storage_request");
    // validated before anything reaches the target: a request refused here leaves the target as it was
    if (init.payload.kind !== "init") throw new Error("the host sent init_storage_request without its payload");
    const { coreCount, transactionCount: transactions } = init.payload;
    if (coreCount !== 1) throw new Error(`the host's init_storage_request asks for ${coreCount} cores: one core is served`);
    if (transactions < 1 || transactions > MAX_TRANSACTIONS) {
      throw new Error(`the host's init_storage_request asks for ${transactions} transactions: from 1 to ${MAX_TRANSACTIONS} are served`);
    }
    let hostMemory: Mmap;
    try {
      hostMemory = Mmap.fromExport(init.payload.mmapExport, opts.device, { threadSafe: true });
    } catch (e) {
      throw new Error(`the host's descriptor (its memory exported over PCI) cannot be imported: ${(e as Error).message}`, { cause: e });
    }
    owned.push(hostMemory);
    let chained: Uint8Array;
    try {
      chained = hostMemory.exportRdma(opts.device);
    } catch (e) {
      throw new Error(`the host's memory cannot be re-exported to the storage target: ${(e as Error).message}`, { cause: e });
    }
    const initAnswer = await forward(init, "init_storage_response", {
      kind: "init",
      transactionCount: transactions * 2,
      coreCount: 1,
      mmapExport: chained,
    });
    if (initAnswer.type === "init_storage_response") {
      consumer = await host.createConsumer({ bufferSize: IO_MESSAGE_SIZE, buffers: transactions, timeoutMs });
      producer = await host.createProducer({ bufferSize: IO_MESSAGE_SIZE, buffers: transactions, timeoutMs });
      ctrl = await Rdma.create(opts.device, opts.pe, { permissions: RDMA_ACCESS, receives: transactions * 2, receiveSize: IO_MESSAGE_SIZE, maxTasks: transactions * 2, timeoutMs });
      data = await Rdma.create(opts.device, opts.pe, { permissions: RDMA_ACCESS, maxTasks: 1, timeoutMs });
      await connectRdma(data, RdmaRole.io_data, init.correlation);
      const ctrlConn = await connectRdma(ctrl, RdmaRole.io_control, init.correlation);
      pumps = [];
      const startDataPath = (hostConsumer: number) => {
        running = true;
        // a pump that fails stops the session: the host then sees its requests unanswered and times out
        const failed = (e: unknown) => {
          // the host gone is said once, by the session's end ("the host disconnected while …"), not here too
          if (running && !meansPeerGone(e)) log(`storage-relay: data path failed: ${(e as Error).message}`);
          running = false;
        };
        pumps = [pumpRequests(consumer!, ctrlConn, transactions).catch(failed), pumpAnswers(ctrl!, producer!, hostConsumer).catch(failed)];
      };
      await toHost(init, initAnswer);

      // start: once the target runs, the data path
      const start = await hostRequest("start_storage_request");
      const startAnswer = await forward(start, "start_storage_response");
      if (startAnswer.type === "start_storage_response") startDataPath(await host.waitForRemoteConsumer({ timeoutMs }));
      const started = performance.now();
      await toHost(start, startAnswer);

      // stop: the target stops first, then our side of the data path
      const stop = await hostRequest("stop_storage_request");
      const stopAnswer = await forward(stop, "stop_storage_response");
      stats.seconds = (performance.now() - started) / 1000;
      running = false;
      // the host's requests pump ends with our consumer; the answers pump with the control context (below)
      await consumer.close();
      await producer.close();
      await toHost(stop, stopAnswer);
    } else {
      await toHost(init, initAnswer);
    }

    // shutdown: once the host's consumers are gone, the target's turn, then ours
    const shutdown = await hostRequest("shutdown_request");
    const deadline = Date.now() + timeoutMs;
    while (host.remoteConsumers.length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await toHost(shutdown, await forward(shutdown, "shutdown_response"));
    log(`storage-relay: shut down after ${stats.requests} requests, ${stats.answers} answers`);
    return stats;

  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    hostStall.stop();
    tcpStall.stop();
    running = false;
    await consumer?.close().catch(() => {});
    await producer?.close().catch(() => {});
    await ctrl?.close().catch(() => {});
    await data?.close().catch(() => {});
    await Promise.allSettled(pumps);
    for (const o of owned.reverse()) o.close();
    await server.close();
    socket.destroy();
  }

  /** The next message `recv` gives, or undefined when it failed because the relay is stopping. */
  async function receiveUntilStopped<T>(recv: () => Promise<T>): Promise<T | undefined> {
    try {
      return await recv();
    } catch (e) {
      if (!running) return undefined;
      throw e;
    }
  }

  /** Host → target: each request copied into a send slot of ours and sent; at most `slots` in flight. */
  async function pumpRequests(from: ComchConsumer, to: RdmaConnection, slots: number): Promise<void> {
    using memory = NativeMemory.alloc(slots * IO_MESSAGE_SIZE);
    using map = Mmap.create({ memory, permissions: Access.LOCAL_READ_WRITE, devices: [opts.device] });
    using inv = new BufInventory(slots);
    const bufs = Array.from({ length: slots }, (_, i) => inv.bufByData(map, memory.address + i * IO_MESSAGE_SIZE, IO_MESSAGE_SIZE));
    const free = bufs.map((_, i) => i);
    const freed: (() => void)[] = [];
    const inFlight = new Set<Promise<void>>();
    // A send that fails (the target gone mid-run) ends the pump with its error at the next turn; each send's own
    // Promise is handled here, never left to reject with nobody listening
    let sendError: unknown;
    while (running && sendError === undefined) {
      const message = await receiveUntilStopped(() => from.recv());
      if (message === undefined) break;
      while (free.length === 0 && sendError === undefined) await new Promise<void>((r) => freed.push(r));
      if (sendError !== undefined) break;
      const slot = free.pop()!;
      memory.bytes.set(message.bytes.subarray(0, IO_MESSAGE_SIZE), slot * IO_MESSAGE_SIZE);
      stats.requests++;
      const sent: Promise<void> = to.send(bufs[slot]).catch((e) => {
        sendError ??= e;
      }).finally(() => {
        inFlight.delete(sent);
        free.push(slot);
        freed.shift()?.();
      });
      inFlight.add(sent);
    }
    await Promise.allSettled([...inFlight]);
    if (sendError !== undefined) throw sendError;
  }

  /** Target → host: each answer marked a result and produced to the host's consumer. */
  async function pumpAnswers(from: Rdma, to: ComchProducer, hostConsumer: number): Promise<void> {
    while (running) {
      const message = await receiveUntilStopped(() => from.recv());
      if (message === undefined) break;
      markResult(message.bytes);
      stats.answers++;
      await to.send(message.bytes, hostConsumer);
    }
  }
}

/** A peer's undecodable bytes as an error naming that peer (other errors pass as they are). */
function wireError(e: unknown, peer: string): Error {
  if (e instanceof WireError) return new WireError(`${peer} sent bytes that are not a storage control message: ${e.message}`, { cause: e });
  if (e instanceof UnaskedError) return new Error(`${peer} ${e.message}`, { cause: e });
  return e as Error;
}

/**
 * Bounds a partial message: once `framer` holds part of one, the rest must come within `timeoutMs` or `fail` is told
 * (a peer that sends half a message and stalls would otherwise hold the relay forever). `check` after each push.
 */
function stallWatch(framer: Framer, peer: string, timeoutMs: number, fail: (e: Error) => void): { check(): void; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  return {
    check() {
      if (framer.pendingBytes === 0) stop();
      else {
        timer ??= setTimeout(() => {
          fail(new WireError(`${peer} sent ${framer.pendingBytes} bytes of a control message and not the rest within ${timeoutMs / 1000} s`));
        }, timeoutMs);
      }
    },
    stop,
  };
}

function connectTcp(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no connection to the storage target ${host}:${port} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.setNoDelay(true);
      resolve(socket);
    });
    socket.once("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot reach the storage target ${host}:${port}: ${e.message}`));
    });
  });
}

export type { ComchConnection };
