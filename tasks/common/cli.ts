/**
 * Command-line helpers every task shares: UsageError (runMain exits 2 with "see --help"), strict numeric flags, and
 * parseArgs wrapped so an unknown or malformed flag is a UsageError too.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { noteFromEnvironment } from "./environment.ts";
import { printable } from "../../ffi/engine/printable.ts";

export class UsageError extends Error {
  override name = "UsageError";
}

/** A whole number 1..max written in decimal ("12"; not "1e3", "0x10", "", "abc"). */
export function positiveInt(value: string, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  const range = max === Number.MAX_SAFE_INTEGER ? "≥ 1" : `1..${max}`;
  if (!/^\s*\d+\s*$/.test(value)) throw new UsageError(`${flag}: expected a whole number ${range}, got ${JSON.stringify(value)}`);
  // A whole number, just too large: say so and give the bound (not "expected a whole number").
  if (!Number.isSafeInteger(n) || n > max) throw new UsageError(`${flag}: ${value.trim()} is too large (at most ${max})`);
  if (n <= 0) throw new UsageError(`${flag}: expected a whole number ${range}, got ${JSON.stringify(value)}`);
  return n;
}

/** A whole number 0..max written in decimal. */
export function wholeNumber(value: string, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  return value.trim() === "0" ? 0 : positiveInt(value, flag, max);
}

/** A positive number of seconds ("2", "0.5"), returned in milliseconds; at most a day. */
export function positiveSecondsMs(value: string, flag: string): number {
  const n = Number(value);
  if (/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) && n > 86_400) {
    throw new UsageError(`${flag}: ${value.trim()} seconds is too long (at most 86400, a day)`);
  }
  if (!/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) || !(n > 0)) {
    throw new UsageError(`${flag}: expected a positive number of seconds (at most 86400), got ${JSON.stringify(value)}`);
  }
  return Math.max(1, Math.round(n * 1000));
}

/**
 * node:util parseArgs, strict, with its errors as UsageError; operands (file names) only where `positionals` says so. A flag given twice is an error too (parseArgs would keep
 * the last one silently: `--send a --send b` sends b), unless its option says `multiple`.
 */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: T,
  opts: { positionals?: boolean; valueHints?: Record<string, string> } = {},
) {
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv, options), options, strict: true, allowPositionals: opts.positionals === true, tokens: true });
  } catch (e) {
    throw new UsageError(parseErrorInTaskWords(e instanceof Error ? e.message : String(e), options, opts.valueHints ?? {}));
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== "option" || (options[token.name] as { multiple?: boolean } | undefined)?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/**
 * `--size -1` as `--size=-1`: parseArgs reads a value starting with "-" as the next flag and fails with a message
 * about "ambiguous" arguments; joined, the flag's own check says "--size: expected a whole number ≥ 1, got "-1"".
 * Only for flags that take a value and only for values that look like numbers ("-1", "-0.5").
 */
function joinNegativeValues(argv: string[], options: NonNullable<ParseArgsConfig["options"]>): string[] {
  const takesValue = (arg: string): boolean => {
    const long = /^--([^=]+)$/.exec(arg)?.[1];
    if (long !== undefined) return options[long]?.type === "string";
    const short = /^-([^-])$/.exec(arg)?.[1];
    return short !== undefined && Object.values(options).some((o) => o.short === short && o.type === "string");
  };
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--") return [...out, ...argv.slice(i)];
    if (takesValue(argv[i]) && /^-(\d|\.\d)/.test(argv[i + 1] ?? "")) {
      const flag = argv[i].startsWith("--") ? argv[i] : `--${Object.entries(options).find(([, o]) => o.short === argv[i][1])![0]}`;
      out.push(`${flag}=${argv[++i]}`);
    } else {
      out.push(argv[i]);
    }
  }
  return out;
}

/** A Comch server name given on the command line: not empty (the device checks its length against its own cap). */
export function serverName(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && value.length === 0) throw new UsageError(`${flag}: expected a Comch server name, got ""`);
  return value;
}

/** "--side host|dpu", else DOCA_SIM_SIDE, else `fallback`. */
export function parseSide(value: string | undefined, env: Record<string, string | undefined>, fallback: "host" | "dpu"): "host" | "dpu" {
  const side = value ?? env.DOCA_SIM_SIDE ?? fallback;
  if (side === "host" || side === "dpu") {
    if (value === undefined && env.DOCA_SIM_SIDE !== undefined && env.DOCA_SIM_SIDE !== fallback) {
      noteFromEnvironment("DOCA_SIM_SIDE", `DOCA_SIM_SIDE=${env.DOCA_SIM_SIDE} chose the side (--side ${fallback} overrides it)`);
    }
    return side;
  }
  // The bad value may not come from a flag at all: name where it came from
  if (value !== undefined) throw new UsageError(`--side: expected host or dpu, got ${JSON.stringify(printable(side, 100))}`);
  throw new UsageError(
    `the environment variable DOCA_SIM_SIDE=${JSON.stringify(printable(side, 100))} is neither host nor dpu (lower case): ` +
      `set it to host or dpu, unset it, or give --side`,
  );
}

/** How the tasks name a flag in messages: "-j/--json", "--quiet". */
function flagName(long: string, options: NonNullable<ParseArgsConfig["options"]>): string {
  const short = options[long]?.short;
  return short ? `-${short}/--${long}` : `--${long}`;
}

/**
 * parseArgs's errors (Node's texts, also on Deno and Bun: "Option '-j, --json <value>' argument missing", a
 * three-line "argument is ambiguous" text, "Unknown option '--x'", "Unexpected argument 'x'. This command ...") in
 * the tasks' own wording: the flag as --help spells it, one line, and for a flag that takes a value, what the task
 * says about it (`hints`, by long name: e.g. that -j/--json takes a file and --json-output prints JSON).
 */
export function parseErrorInTaskWords(message: string, options: NonNullable<ParseArgsConfig["options"]>, hints: Record<string, string>): string {
  const flagOf = /^Option '(?:-[^,' ]+, )?--([^ ']+)(?: <value>)?'/.exec(message)?.[1];
  const hint = (long: string) => (hints[long] ? ` (${hints[long]})` : "");
  if (flagOf !== undefined && / argument missing/.test(message)) {
    return `${flagName(flagOf, options)} needs a value${hint(flagOf)}`;
  }
  if (flagOf !== undefined && / argument is ambiguous/.test(message)) {
    return `${flagName(flagOf, options)} needs a value, and the word after it starts with "-" (a value that starts ` +
      `with "-" is written --${flagOf}=VALUE)${hint(flagOf)}`;
  }
  if (flagOf !== undefined && / does not take an argument/.test(message)) return `${flagName(flagOf, options)} takes no value`;
  const unknown = /^Unknown option '(.*?)'/.exec(message)?.[1];
  if (unknown !== undefined) return `unknown flag ${JSON.stringify(printable(unknown, 100))}`;
  const operand = /^Unexpected argument '(.*?)'/.exec(message)?.[1];
  if (operand !== undefined) return `unexpected operand ${JSON.stringify(printable(operand, 100))}: this task takes flags only`;
  // Any other text: its first line, escaped (one line per message)
  return printable(message.split("\n")[0]);
}
