/** Running a task script as a child process in the tests of single-process tasks (ec, encrypt, compress, sha). */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startChild } from "../../../tasks/common/run-pair.ts";

/** The path of tasks/`name`. */
export const task = (name: string): string => fileURLToPath(new URL(`../../../tasks/${name}`, import.meta.url));

/** tasks/`name` run to its end (killed after 60 s). */
export async function run(name: string, args: string[], env: Record<string, string>) {
  return await startChild(task(name), args, env, 60_000).done;
}

/** Like run, but it must exit 0: its stdout. */
export async function ok(name: string, args: string[], env: Record<string, string>): Promise<string> {
  const r = await run(name, args, env);
  assert.equal(r.code, 0, `${name} ${args.join(" ")} exited ${r.code ?? r.signal}:\n${r.stderr}`);
  return r.stdout;
}
