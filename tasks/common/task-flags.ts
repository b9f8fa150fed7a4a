/**
 * The head every task's main shares: its flags parsed (exit 2 on a bad one, through UsageError) and --help and
 * --version answered.
 */
import type { ParseArgsConfig } from "node:util";
import { parseFlags, UsageError } from "./cli.ts";
import { print } from "./main.ts";
import { versionLine } from "./version.ts";

/** The flags' values; undefined when --help or --version was given and answered (the task exits 0). */
export function parseTaskFlags<T extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: T,
  help: string,
  task: string,
): ReturnType<typeof parseFlags<T>>["values"] | undefined {
  const { values } = parseFlags(argv, options);
  const asked = values as { help?: boolean; version?: boolean };
  if (asked.help) {
    print(help);
    return undefined;
  }
  if (asked.version) {
    print(versionLine(task));
    return undefined;
  }
  return values;
}

/** The named string flags, each of which must be given (exit 2 naming the first one missing). */
export function requireFlags<K extends string>(values: { [key in K]?: string | boolean }, names: readonly K[]): Record<K, string> {
  for (const name of names) if (values[name] === undefined) throw new UsageError(`--${name} is required`);
  return values as Record<K, string>;
}
