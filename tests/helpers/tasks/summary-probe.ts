/** Prints the REPL summary (toString) of the first device, written raw: the summary itself must be escaped. */
import process from "node:process";
import { openDevice } from "../../../mod.ts";

using dev = openDevice();
process.stdout.write(`${String(dev)}\n`);
