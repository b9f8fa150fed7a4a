/**
 * Child of tests/tasks-api-role-side.test.ts: a library user's script that calls one Comch function of tasks/mod.ts
 * with no DOCA_SIM_SIDE set, as it would call dmaCopy(): the role alone (server/consumer on the DPU, client/producer
 * on the host) must choose the software device's side. Prints the function's result as JSON on stdout.
 */
import process from "node:process";
import { runComchClient, runComchServer, streamConsumer, streamProducer } from "../../../tasks/mod.ts";

const HOST_PCI = "0000:b1:00.1"; // the host function's representor, as the software device lists it on the DPU
const [role, name] = process.argv.slice(2);
const timeoutMs = 60_000;
const run: Record<string, () => Promise<unknown>> = {
  server: () => runComchServer({ repPci: HOST_PCI, name, timeoutMs, onListening: () => console.error("role-side: listening") }),
  client: () => runComchClient({ name, text: "hello", timeoutMs }),
  consumer: () => {
    console.error("role-side: listening"); // streamConsumer has no hook; the producer retries its connect anyway
    return streamConsumer({ repPci: HOST_PCI, name, timeoutMs });
  },
  producer: () => streamProducer({ name, count: 100, size: 64, inflight: 4, timeoutMs }),
};
console.log(JSON.stringify(await run[role]()));
