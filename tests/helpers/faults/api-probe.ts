/**
 * Risky calls into the TypeScript API, run in a child process by tests/fault-input.test.ts (a crash of the runtime
 * would otherwise kill the test process). Runs the cases named on the command line (or all), one at a time, printing
 * {"start": name} before and {"case": name, threw, name, message, docaName} after each; exits 0 when it got through
 * all of them. A case that crashes the runtime leaves its "start" line last.
 */
import process from "node:process";
import {
  Access,
  BufInventory,
  ComchClient,
  ComchServer,
  Device,
  Dma,
  liveObjects,
  Mmap,
  NativeMemory,
  ProgressEngine,
} from "../../../mod.ts";

const HOST_PCI = "0000:b1:00.1";
// deno-lint-ignore no-explicit-any
type Any = any;

function setup() {
  const dev = Device.open(HOST_PCI);
  const pe = new ProgressEngine();
  const mem = NativeMemory.alloc(8192);
  const map = Mmap.create({
    memory: mem,
    permissions: Access.LOCAL_READ_WRITE | Access.PCI_READ_WRITE,
    devices: [dev],
  });
  const inv = new BufInventory(8);
  const close = () => {
    inv.close();
    map.close();
    mem.close();
    pe.close();
    dev.close();
  };
  return { dev, pe, mem, map, inv, close };
}

/** `probe` with the setup() objects and a Dma on them, all closed afterwards (the Dma first). */
async function withDma(probe: (s: ReturnType<typeof setup>, dma: Dma) => Promise<unknown>): Promise<unknown> {
  const s = setup();
  const dma = new Dma(s.dev, s.pe);
  try {
    return await probe(s, dma);
  } finally {
    dma.close();
    s.close();
  }
}

/** Mmap.fromExport of `descriptor` (anything a caller might pass) through the host's device, closed afterwards. */
function importOnHost(descriptor: unknown): unknown {
  const dev = Device.open(HOST_PCI);
  try {
    return Mmap.fromExport(descriptor as Uint8Array, dev);
  } finally {
    dev.close();
  }
}

/** ComchClient.connect with `opts` through the host's device and a progress engine of its own, both closed afterwards. */
async function connectOnHost(opts: { name: string; timeoutMs: number; maxMsgSize?: number }): Promise<unknown> {
  const dev = Device.open(HOST_PCI);
  const pe = new ProgressEngine();
  try {
    return await ComchClient.connect({ device: dev, pe, ...opts });
  } finally {
    pe.close();
    dev.close();
  }
}

const cases: Record<string, () => unknown | Promise<unknown>> = {
  "alloc-negative": () => NativeMemory.alloc(-1),
  "alloc-zero": () => NativeMemory.alloc(0),
  "alloc-nan": () => NativeMemory.alloc(NaN),
  "alloc-fraction": () => NativeMemory.alloc(1.5),
  "alloc-huge": () => NativeMemory.alloc(2 ** 52),
  "alloc-string": () => NativeMemory.alloc("4096" as Any),
  "mmap-js-heap-view": () => {
    const dev = Device.open(HOST_PCI);
    try {
      return Mmap.create({ memory: new Uint8Array(4096) as Any, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
    } finally {
      dev.close();
    }
  },
  "mmap-js-arraybuffer": () => {
    const dev = Device.open(HOST_PCI);
    try {
      return Mmap.create({
        memory: new ArrayBuffer(4096) as Any,
        permissions: Access.LOCAL_READ_WRITE,
        devices: [dev],
      });
    } finally {
      dev.close();
    }
  },
  "mmap-negative-length": () => {
    const s = setup();
    try {
      return Mmap.create({ memory: s.mem, length: -5, permissions: Access.LOCAL_READ_WRITE, devices: [s.dev] });
    } finally {
      s.close();
    }
  },
  "mmap-nan-offset": () => {
    const s = setup();
    try {
      return Mmap.create({ memory: s.mem, offset: NaN, permissions: Access.LOCAL_READ_WRITE, devices: [s.dev] });
    } finally {
      s.close();
    }
  },
  "mmap-past-end": () => {
    const s = setup();
    try {
      return Mmap.create({
        memory: s.mem,
        offset: 4096,
        length: 8192,
        permissions: Access.LOCAL_READ_WRITE,
        devices: [s.dev],
      });
    } finally {
      s.close();
    }
  },
  "buf-outside-map": () => {
    const s = setup();
    try {
      return s.inv.bufByData(s.map, s.mem.address + 8192, 16);
    } finally {
      s.close();
    }
  },
  "buf-negative-length": () => {
    const s = setup();
    try {
      return s.inv.bufByData(s.map, s.mem.address, -1);
    } finally {
      s.close();
    }
  },
  "buf-nan-address": () => {
    const s = setup();
    try {
      return s.inv.bufByAddr(s.map, NaN, 16);
    } finally {
      s.close();
    }
  },
  "buf-huge-length": () => {
    const s = setup();
    try {
      return s.inv.bufByData(s.map, s.mem.address, 2 ** 53);
    } finally {
      s.close();
    }
  },
  "inventory-negative": () => new BufInventory(-1),
  "inventory-nan": () => new BufInventory(NaN),
  "from-export-empty": () => importOnHost(new Uint8Array(0)),
  "from-export-short": () => importOnHost(new Uint8Array(3)),
  "from-export-js-array": () => importOnHost([1, 2, 3]),
  "device-garbage-pci": () => Device.open("not-a-pci-address"),
  "device-unknown-pci": () => Device.open("0000:99:00.7"),
  "memcpy-not-bufs": () => withDma((_s, dma) => dma.memcpy({} as Any, { handle: 12345 } as Any)),
  "memcpy-forged-handles": () => withDma(async (_s, dma) => {
    // Objects that look like Bufs (a handle field) but are not: must be refused before any native call.
    const fake = { handle: 4096, native: 4096, address: 4096, length: 16 } as Any;
    return await dma.memcpy(fake, fake);
  }),
  "memcpy-dst-too-small": () => withDma(async (s, dma) => {
    const src = s.inv.bufByData(s.map, s.mem.address, 4096);
    const dst = s.inv.bufByAddr(s.map, s.mem.address + 4096, 100);
    return await dma.memcpy(src, dst);
  }),
  "use-after-close-memory": () => {
    const m = NativeMemory.alloc(100);
    m.close();
    return m.bytes;
  },
  "use-after-close-mmap": () => {
    const s = setup();
    s.inv.close();
    s.map.close();
    try {
      return s.map.exportPci(s.dev);
    } finally {
      s.mem.close();
      s.pe.close();
      s.dev.close();
    }
  },
  "use-after-close-device": () => {
    const dev = Device.open(HOST_PCI);
    dev.close();
    return dev.listRepresentors();
  },
  "use-after-close-dma": async () => {
    const s = setup();
    const dma = new Dma(s.dev, s.pe);
    const src = s.inv.bufByData(s.map, s.mem.address, 16);
    const dst = s.inv.bufByAddr(s.map, s.mem.address + 4096, 16);
    dma.close();
    try {
      return await dma.memcpy(src, dst);
    } finally {
      s.close();
    }
  },
  "use-after-close-pe": () => {
    const pe = new ProgressEngine();
    pe.close();
    return pe.progress();
  },
  "stale-view-write": () => {
    // A view taken before close() must not reach unmapped memory (it throws, or writes nowhere).
    const m = NativeMemory.alloc(1 << 20);
    const view = m.bytes;
    m.close();
    try {
      view[12345] = 7;
      view.fill(1);
    } catch {
      // a detached buffer may throw on some runtimes: fine
    }
    return "no crash";
  },
  "double-close-everything": () => {
    const s = setup();
    const dma = new Dma(s.dev, s.pe);
    const buf = s.inv.bufByData(s.map, s.mem.address, 16);
    for (const r of [buf, buf, dma, dma] as { close(): void }[]) r.close();
    s.close();
    s.close();
    return "closed twice";
  },
  "parent-closed-first": () => {
    // Closing a parent with children open: children are closed first (or the call is refused), never a dangling handle.
    const s = setup();
    const buf = s.inv.bufByData(s.map, s.mem.address, 16);
    s.dev.close();
    try {
      return buf.dataLength;
    } finally {
      s.close();
    }
  },
  "comch-name-too-long": () => connectOnHost({ name: "x".repeat(5000), timeoutMs: 500 }),
  "comch-server-on-host": () => {
    const dev = Device.open(HOST_PCI);
    const pe = new ProgressEngine();
    try {
      return ComchServer.start({ device: dev, rep: dev as Any, name: "no", pe });
    } finally {
      pe.close();
      dev.close();
    }
  },
  "comch-connect-timeout": () => connectOnHost({ name: "nobody-listens", timeoutMs: 300 }),
  "comch-bad-max-msg": () => connectOnHost({ name: "x", timeoutMs: 300, maxMsgSize: -1 }),
};

export const CASES: string[] = Object.keys(cases);

if (import.meta.url === `file://${process.argv[1]}` || (import.meta as { main?: boolean }).main) {
  const names = process.argv.slice(2).length ? process.argv.slice(2) : CASES;
  const emit = (m: unknown) => process.stdout.write(JSON.stringify(m) + "\n");
  const before = liveObjects();
  for (const name of names) {
    emit({ start: name });
    try {
      const r = await cases[name]();
      emit({ case: name, threw: false, result: String(r).slice(0, 200) });
    } catch (e) {
      const err = e as Error & { docaName?: string };
      emit({ case: name, threw: true, name: err?.name, message: String(err?.message ?? e), docaName: err?.docaName });
    }
  }
  emit({ liveBefore: before, liveAfter: liveObjects() });
  process.exit(0);
}
