/**
 * Child of tests/ffi-rdma.test.ts: one RDMA CM server and one client in this process take N connections in a row
 * (connect, established on both sides, client disconnects, server sees it). Run with DOCA_SIM_RDMA_CONN_OBJECTS set
 * in the environment it starts with (a variable set later, from JavaScript, does not reach the native getenv on
 * every runtime). Prints one JSON line: { connections, grew } where grew = live DOCA objects after the last
 * connection minus after the first.
 */
import process from "node:process";
import { liveObjects, ProgressEngine, Rdma } from "../../mod.ts";
import { rdmaDevice } from "./rdma-pair.ts";
import { listenOnTestPort } from "../../tools/ports.ts";

const count = Number(process.argv[2] ?? 12);
const dev = rdmaDevice();
using pe = new ProgressEngine();
await using server = await Rdma.create(dev, pe, { maxConnections: 2 });
await using client = await Rdma.create(dev, pe, { maxConnections: 2 });
// A random port; another test may hold it: try again elsewhere
const port = listenOnTestPort(server);
let afterFirst = 0;
for (let i = 0; i < count; i++) {
  const [s, c] = await Promise.all([server.accept({ timeoutMs: 10_000 }), client.connectTo("127.0.0.1", port)]);
  if (s.state !== "connected" || c.state !== "connected") throw new Error(`connection ${i}: ${s.state} / ${c.state}`);
  const serverSawIt = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`connection ${i}: the server never saw the disconnection`)), 10_000);
    s.onDisconnect(() => (clearTimeout(timer), resolve()));
  });
  c.disconnect();
  pe.demand(); // nothing else is outstanding: keep the engine pumped until the event arrives
  try {
    await serverSawIt;
  } finally {
    pe.release();
  }
  if (i === 0) afterFirst = liveObjects() ?? 0;
}
console.log(JSON.stringify({ connections: count, grew: (liveObjects() ?? 0) - afterFirst }));
