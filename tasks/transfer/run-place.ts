/**
 * Where this run's process ids mean something: a short tag of the machine's boot (the kernel's boot_id) and of this
 * process's pid namespace. Temporary files and lock files carry it beside the pid, so a later run that finds them
 * knows whether a signal-0 probe of that pid is about the very process that wrote them: same tag and ESRCH, the
 * owner is gone (removed or taken over at once); another tag (another host sharing the folder, a container, a
 * reboot since) or none (an older doca-ts), and a pid that looks dead may be alive elsewhere, so only age tells.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { createHash } from "node:crypto";

const PROBE = "cat /proc/sys/kernel/random/boot_id && readlink /proc/self/ns/pid";

let cached: string | null | undefined;

/** The two facts, read directly (Node, Bun) or by a child in the same namespace (Deno guards /proc behind --allow-all). */
function facts(): string | undefined {
  try {
    return `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}\n${readlinkSync("/proc/self/ns/pid")}`;
  } catch { /* Deno without --allow-all, or no /proc */ }
  // Deno: a child reads them. --allow-run, which the tasks that write files have for the signal-0 probe, covers it;
  // a script without it is not asked (no prompt in the middle of its work): the place is then unknown.
  const deno = (globalThis as { Deno?: DenoRun }).Deno;
  if (!deno?.Command || deno.permissions.querySync({ name: "run", command: "sh" }).state !== "granted") return undefined;
  try {
    const r = new deno.Command("sh", { args: ["-c", PROBE], clearEnv: true, env: { PATH: "/usr/bin:/bin" }, stdout: "piped", stderr: "null" }).outputSync();
    const lines = new TextDecoder().decode(r.stdout).trim().split("\n");
    return r.success && lines.length === 2 && /^pid:\[\d+\]$/.test(lines[1]) ? lines.join("\n") : undefined;
  } catch {
    return undefined; // no sh, no /proc: unknown, and the age rules apply
  }
}

/** The part of Deno's API this module uses (Deno.Command needs only --allow-run, node:child_process also --allow-env). */
interface DenoRun {
  permissions: { querySync(d: { name: "run"; command: string }): { state: string } };
  Command: new (cmd: string, o: { args: string[]; clearEnv: boolean; env: Record<string, string>; stdout: "piped"; stderr: "null" }) => {
    outputSync(): { success: boolean; stdout: Uint8Array };
  };
}

/** 8 hex digits naming this boot and pid namespace, or undefined when they cannot be read. */
export function runPlace(): string | undefined {
  if (cached === undefined) {
    const f = facts();
    cached = f ? createHash("sha256").update(f).digest("hex").slice(0, 8) : null;
  }
  return cached ?? undefined;
}
