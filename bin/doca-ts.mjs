#!/usr/bin/env node
/**
 * `npx doca-ts TASK [flags]`: runs one of the package's tasks with this Node, from the package's built JavaScript
 * (tasks/TASK.js, written by `npm pack`'s prepack); in a repository checkout, where nothing is built, from the
 * TypeScript through tsx. The task sees its own file as the script being run, so it behaves (and names itself in
 * its messages) as `node tasks/TASK.js` would. A task that deno.json gives V8 flags (dma-copy) runs in a child Node
 * started with them (bin/task-flags.mjs); the others in this process.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TASKS } from "./task-list.mjs";
import { nodeFlagsFor } from "./task-flags.mjs";


const USAGE = `Usage: doca-ts TASK [flags]   (npx doca-ts TASK ...; TASK --help for its flags)
       doca-ts --version          (doca-ts's version; TASK --version also names the DOCA that TASK loads)

Tasks: ${TASKS.join(", ")}.
Each is also a module of "doca-ts/tasks"; the README says what each does.
Exit status: the task's; 2 for an unknown task.`;

const [name, ...args] = process.argv.slice(2);
if (name === undefined || name === "-h" || name === "--help") {
  (name === undefined ? process.stderr : process.stdout).write(`${USAGE}\n`);
  process.exit(name === undefined ? 2 : 0);
}
if (name === "--version") {
  // package.json is the one place the version is written (tests/tasks-conventions.test.ts keeps the tasks' equal)
  const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "package.json"), "utf8"));
  process.stdout.write(`doca-ts ${pkg.version} (the DOCA a task loads: doca-ts TASK --version, or doca-ts doctor)\n`);
  process.exit(0);
}
if (!TASKS.includes(name)) {
  process.stderr.write(`doca-ts: unknown task ${JSON.stringify(name)}; one of: ${TASKS.join(", ")}\n`);
  process.exit(2);
}

const tasks = join(dirname(fileURLToPath(import.meta.url)), "..", "tasks");
const built = join(tasks, `${name}.js`);
// The V8 flags deno.json gives the task (dma-copy: --max-semi-space-size=2), which Node takes only at start-up
const flags = nodeFlagsFor(name).filter((f) => !process.execArgv.includes(f));
if (existsSync(built) && flags.length === 0) {
  // The task decides "am I the program?" from process.argv[1] (Node 20 has no import.meta.main).
  process.argv.splice(1, 2, built);
  await import(pathToFileURL(built).href);
} else {
  // tsx resolved from here, not from the working folder (which need not have it)
  const script = existsSync(built) ? [built] : ["--import", import.meta.resolve("tsx"), join(tasks, `${name}.ts`)];
  const child = spawn(process.execPath, [...process.execArgv, ...flags, ...script, ...args], { stdio: "inherit" });
  // A stop aimed at this process reaches the task too (it handles SIGINT, SIGTERM and SIGHUP itself).
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("close", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 129)));
}
