/**
 * The head every task's main shares: its flags parsed (exit 2 on a bad one, through UsageError) and --help and
 * --version answered.
 */
import type { ParseArgsConfig } from "node:util";
import { parseFlags } from "./cli.ts";
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
