/**
 * The DPU of tests/ffi-memory-chain.test.ts, run by spawnRuntime with DOCA_SIM_SIDE=dpu under the caller's runtime:
 * it imports the host's PCI exports (thread safe, as NVIDIA's storage DPU program does) and re-exports each for RDMA,
 * and serves an RDMA peer through one connection; its own memory never holds the peer's bytes.
 * Reads one JSON request per stdin line, answers one JSON line on stdout; exits on EOF.
 *
 * Requests: open {pci} · chain {descriptor: base64} (answers {id, rdma: base64, range}) · connect {details: base64}
 * (an Rdma context connected to the peer's details; answers its own) · drop {id} (closes that import).
 */
import { createInterface } from "node:readline";
import process from "node:process";
import { Buffer } from "node:buffer";
import { Access, Device, Mmap, ProgressEngine, Rdma } from "../../mod.ts";

let device: Device | undefined;
let pe: ProgressEngine | undefined;
let rdma: Rdma | undefined;
const imports = new Map<number, Mmap>();
let nextId = 1;

function reply(message: unknown): void {
  process.stdout.write(JSON.stringify(message) + "\n");
}

async function handle(req: Record<string, unknown>): Promise<unknown> {
  switch (req.op) {
    case "open":
      device = Device.open(String(req.pci));
      pe = new ProgressEngine();
      return { ok: true };
    case "chain": {
      if (!device) throw new Error("open first");
      const map = Mmap.fromExport(new Uint8Array(Buffer.from(String(req.descriptor), "base64")), device, { threadSafe: true });
      const id = nextId++;
      imports.set(id, map);
      try {
        return { id, rdma: Buffer.from(map.exportRdma(device)).toString("base64"), range: map.range };
      } catch (e) {
        // the import stays, so the test can drop it like any other
        return { id, refused: (e as { docaName?: string }).docaName ?? String(e) };
      }
    }
    case "connect": {
      if (!device || !pe) throw new Error("open first");
      rdma = await Rdma.create(device, pe, { permissions: Access.LOCAL_READ_WRITE | Access.RDMA_READ | Access.RDMA_WRITE });
      const { connection, details } = rdma.exportConnection();
      connection.connect(new Uint8Array(Buffer.from(String(req.details), "base64")));
      return { details: Buffer.from(details).toString("base64") };
    }
    case "drop": {
      const map = imports.get(Number(req.id));
      if (!map) throw new Error(`no import ${String(req.id)}`);
      map.close();
      imports.delete(Number(req.id));
      return { ok: true };
    }
  }
  throw new Error(`unknown op ${String(req.op)}`);
}

const lines = createInterface({ input: process.stdin });
let chain = Promise.resolve();
lines.on("line", (line) => {
  chain = chain.then(async () => {
    try {
      reply(await handle(JSON.parse(line)));
    } catch (e) {
      reply({ error: e instanceof Error ? `${e.name}: ${e.message}` : String(e), docaName: (e as { docaName?: string }).docaName });
    }
  });
});
lines.on("close", () => {
  void chain.then(async () => {
    await rdma?.close().catch(() => {});
    for (const map of imports.values()) map.close();
    pe?.close();
    device?.close();
    process.exit(0);
  });
});
