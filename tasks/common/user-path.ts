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

/**
 * The path-valued variables the software device and the library read. `deno task` (and npm run) start the task in
 * the repository, not where the user typed the command, so a relative DOCA_SIM_DIR=relsim made a folder in the
 * repository; they are resolved against the user's folder like every path argument. DOCA_SIM_LIBCRYPTO is a
 * dlopen name: a bare "libcrypto.so.3" (no slash) is searched for, only a path with a slash is resolved.
 */
export const PATH_VARIABLES = ["DOCA_SIM_DIR", "DOCA_SIM_CONFIG", "DOCA_LIB_DIR", "DOCA_SIM_LIBCRYPTO"] as const;

/**
 * Rewrites every relative PATH_VARIABLES value in `env` (process.env: Deno and Node hand the change to C's
 * environment; on Bun the library does when DOCA is loaded) to its absolute path under the user's folder. Called
 * before DOCA is loaded (runMain); a no-op where the task runs in the user's own folder.
 */
export function resolvePathVariables(env: Record<string, string | undefined> = process.env): void {
  for (const name of PATH_VARIABLES) {
    const value = env[name];
    if (!value || isAbsolute(value)) continue;
    if (name === "DOCA_SIM_LIBCRYPTO" && !value.includes("/")) continue;
    env[name] = userPath(value, env);
  }
}
