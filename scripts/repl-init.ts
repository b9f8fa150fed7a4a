/// <reference lib="deno.ns" />
import console from "node:console";
// Loaded by `deno task repl`: the whole API as `doca` (e.g. doca.listDevices(), doca.Device.open("03:00.1")).
// deno repl evaluates this file as if typed at the prompt, so a relative import would resolve from the working
// directory (`deno task` runs in the repository root): build the URL from there, keep the types from the file.
const doca: typeof import("../mod.ts") = await import(new URL("mod.ts", `file://${Deno.cwd()}/`).href);
(globalThis as Record<string, unknown>).doca = doca;
// The tasks and their steps (dmaCopy, exportMmap, sendDescriptor, dmaTransfer, ...) as `tasks`.
(globalThis as Record<string, unknown>).tasks = await import(new URL("tasks/mod.ts", `file://${Deno.cwd()}/`).href);

try {
  const info = doca.loadDoca();
  console.log(`doca-ts: DOCA ${info.version} from ${info.dir}${info.isSoftwareDevice ? " (software device)" : ""}`);
  console.log(`devices: ${doca.listDevices().map((d) => d.pciAddr).join(", ") || "none"} — try doca.Device.open(...)`);
} catch (e) {
  console.log(e instanceof Error ? e.message : String(e));
}
