/**
 * Paths as the user typed them. A relative path means "relative to where I ran the command": under `npm run`
 * (and so `npm run deno -- task ...`) the process starts in the package root and npm records the user's folder in
 * INIT_CWD, so that folder is the base. Messages keep showing the user's own spelling next to what it resolved to.
 */
import { isAbsolute, resolve } from "node:path";
import process from "node:process";

/** The folder the user ran the command from. */
export function userCwd(env: Record<string, string | undefined> = process.env): string {
  return env.INIT_CWD && isAbsolute(env.INIT_CWD) ? env.INIT_CWD : process.cwd();
}

/** `path` resolved against the user's folder (absolute paths unchanged). */
export function userPath(path: string, env: Record<string, string | undefined> = process.env): string {
  return isAbsolute(path) ? path : resolve(userCwd(env), path);
}
