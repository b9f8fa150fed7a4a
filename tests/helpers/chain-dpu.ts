/**
 * The DPU of tests/ffi-memory-chain.test.ts, run by spawnRuntime with DOCA_SIM_SIDE=dpu under the caller's runtime:
 * it imports the host's PCI exports (thread safe, as NVIDIA's storage DPU program does) and re-exports each for RDMA,
 * and serves an RDMA peer through one connection; its own memory never holds the peer's bytes.
 * Reads one JSON request per stdin line, answers one JSON line on stdout; exits on EOF.
 *
 * Requests: open {pci} · chain {descriptor: base64} (answers {id, rdma: base64, range}) · connect {details: base64}
 * (an Rdma context connected to the peer's details; answers its own) · drop {id} (closes that import).
 */
import { Buffer } from "node:buffer";
import { Access, Device, Mmap, ProgressEngine, Rdma } from "../../mod.ts";
import { serveJsonRequests } from "./json-requests.ts";

let device: Device | undefined;
let pe: ProgressEngine | undefined;
let rdma: Rdma | undefined;
const imports = new Map<number, Mmap>();
let nextId = 1;

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

serveJsonRequests(handle, async () => {
  await rdma?.close().catch(() => {});
  for (const map of imports.values()) map.close();
  pe?.close();
  device?.close();
});
