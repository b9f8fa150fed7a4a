/**
 * The head every task's main shares: one table of the flags that mean the same in every task, the task's flags
 * parsed (exit 2 on a bad one, through UsageError) and --help and --version answered.
 */
import type { ParseArgsConfig } from "node:util";
import { parseFlags, UsageError } from "./cli.ts";
import { print } from "./main.ts";
import { versionLine } from "./version.ts";

type FlagTable = NonNullable<ParseArgsConfig["options"]>;

/**
 * The flags that mean the same wherever a task takes them, defined once so that a flag's kind and its letter
 * (-p is always the device's PCI address, -r the representor's, -o the output) cannot drift apart between tasks.
 * A task whose flag of the same name means something else (dma-copy's --json FILE) defines its own.
 */
export const SHARED_FLAGS = {
  input: { type: "string", short: "i" },
  output: { type: "string", short: "o" },
  force: { type: "boolean", short: "f" },
  "chunk-size": { type: "string" },
  "pci-addr": { type: "string", short: "p" },
  "rep-pci": { type: "string", short: "r" },
  device: { type: "string", short: "d" },
  side: { type: "string" },
  listen: { type: "string" },
  connect: { type: "string" },
  exchange: { type: "string" },
  count: { type: "string" },
  size: { type: "string" },
  length: { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** A task's flag table: its own flags and the named shared ones (which must not be among its own). */
export function taskFlags<const Own extends FlagTable, const Shared extends keyof typeof SHARED_FLAGS>(
  own: Own,
  ...shared: Shared[]
): Own & Pick<typeof SHARED_FLAGS, Shared> {
  const table: FlagTable = { ...own };
  for (const name of shared) {
    if (name in own) throw new Error(`flag --${name} is both the task's own and a shared one`);
    table[name] = SHARED_FLAGS[name];
  }
  return table as Own & Pick<typeof SHARED_FLAGS, Shared>;
}

/**
 * What a task's own parser makes of its command line (dma-copy, rdma-copy, rdma-ping parse to this so tests can
 * check the options without running anything): --help, --version, or the options to run with.
 */
export type ParsedCommand<Options> = { kind: "help" } | { kind: "version" } | { kind: "run"; options: Options };

/** The options to run with; undefined when the command asked for --help or --version, which is then printed. */
export function optionsToRun<Options>(parsed: ParsedCommand<Options>, help: string, task: string): Options | undefined {
  if (parsed.kind === "help") print(help);
  else if (parsed.kind === "version") print(versionLine(task));
  else return parsed.options;
  return undefined;
}

/** The flags' values and operands; undefined when --help or --version was given and answered (the task exits 0). */
export function parseTaskCommand<T extends FlagTable>(
  argv: string[],
  options: T,
  help: string,
  task: string,
  opts: { positionals?: boolean } = {},
): ReturnType<typeof parseFlags<T>> | undefined {
  const parsed = parseFlags(argv, options, opts);
  const asked = parsed.values as { help?: boolean; version?: boolean };
  if (asked.help) {
    print(help);
    return undefined;
  }
  if (asked.version) {
    print(versionLine(task));
    return undefined;
  }
  return parsed;
}

/** The flags' values; undefined when --help or --version was given and answered (the task exits 0). */
export function parseTaskFlags<T extends FlagTable>(
  argv: string[],
  options: T,
  help: string,
  task: string,
): ReturnType<typeof parseFlags<T>>["values"] | undefined {
  return parseTaskCommand(argv, options, help, task)?.values;
}

/** The named string flags, each of which must be given (exit 2 naming the first one missing). */
export function requireFlags<K extends string>(values: { [key in K]?: string | boolean }, names: readonly K[]): Record<K, string> {
  for (const name of names) if (values[name] === undefined) throw new UsageError(`--${name} is required`);
  return values as Record<K, string>;
}
