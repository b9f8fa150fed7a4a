/**
 * The run-time check of a task function's options object (tasks/mod.ts). TypeScript checks them at compile time only:
 * from plain JavaScript `decryptFile({ key: "/path" })` took the path's characters as key bytes, and
 * `ecRecover({ input: DIR })` (the CLI's flag name instead of `inputDir`) failed deep in node:fs naming no option.
 * Every exported task function states its options here, once; an unknown key is an error naming it (and, when it is
 * one of the CLI's flags, the option that flag sets), a missing required one or a wrong type names the option and the
 * type expected.
 */

/** What an option holds. An array: one of these strings. */
export type OptionType = "string" | "number" | "integer" | "boolean" | "bytes" | "function" | "signal" | "object" | readonly string[];

export interface OptionRule {
  type: OptionType;
  required?: boolean;
  /** The CLI flag(s) setting this option under another name, as the CLI's --help spells them: "-i/--input". */
  flag?: string;
  /** Said after a wrong type: what to give instead. */
  hint?: string;
}

export type OptionRules = Readonly<Record<string, OptionRule>>;

/** An options object that does not fit the function's options: names the function, the option and why. */
export class OptionsError extends TypeError {
  override name = "OptionsError";
}

/** Checks `options` against `rules` for function `fn`; throws an OptionsError saying what is wrong. */
export function checkOptions(fn: string, options: unknown, rules: OptionRules): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new OptionsError(`${fn}: expects an options object, got ${describe(options)}`);
  }
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (Object.hasOwn(rules, key)) continue;
    const named = Object.entries(rules).find(([, rule]) => rule.flag !== undefined && flagNames(rule.flag).includes(key));
    throw new OptionsError(
      named
        ? `${fn}: unknown option "${key}": the CLI's ${named[1].flag} is the option "${named[0]}" here`
        : `${fn}: unknown option "${key}" (its options: ${Object.keys(rules).join(", ")})`,
    );
  }
  for (const [name, rule] of Object.entries(rules)) {
    const value = given[name];
    if (value === undefined) {
      if (rule.required) throw new OptionsError(`${fn}: option "${name}" is missing: it must be ${expected(rule.type)}`);
      continue;
    }
    if (!fits(value, rule.type)) {
      throw new OptionsError(`${fn}: option "${name}" must be ${expected(rule.type)}, got ${describe(value)}${rule.hint ? ` (${rule.hint})` : ""}`);
    }
  }
}

/** "-i/--input" → ["i", "input"]. */
function flagNames(flag: string): string[] {
  return flag.split("/").map((f) => f.replace(/^-+/, ""));
}

function fits(value: unknown, type: OptionType): boolean {
  if (Array.isArray(type)) return typeof value === "string" && type.includes(value);
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case "boolean":
      return typeof value === "boolean";
    case "bytes":
      return value instanceof Uint8Array;
    case "function":
      return typeof value === "function";
    case "signal":
      return typeof value === "object" && value !== null && typeof (value as AbortSignal).aborted === "boolean" &&
        typeof (value as AbortSignal).addEventListener === "function";
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
  }
  return false;
}

function expected(type: OptionType): string {
  if (Array.isArray(type)) return `one of ${type.map((t) => JSON.stringify(t)).join(", ")}`;
  return {
    string: "a string",
    number: "a finite number",
    integer: "a whole number (0 or more)",
    boolean: "true or false",
    bytes: "a Uint8Array",
    function: "a function",
    signal: "an AbortSignal",
    object: "an object",
  }[type as string]!;
}

/** A value, briefly, for an error message (a string's start only: it may be a secret). */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value instanceof Uint8Array) return `a ${value.constructor.name} of ${value.length} bytes`;
  switch (typeof value) {
    case "string":
      return `a string of ${value.length} characters`;
    case "number":
    case "bigint":
    case "boolean":
      return `${typeof value} ${String(value)}`;
    case "undefined":
      return "undefined";
    case "function":
      return "a function";
    default:
      return `an object (${(value as object).constructor?.name ?? "no prototype"})`;
  }
}

/** Options most task functions share. */
export const PCI_ADDR_OPTION: OptionRule = { type: "string", flag: "-p/--pci-addr", hint: "a PCI address like 0000:03:00.1" };
export const SIGNAL_OPTION: OptionRule = { type: "signal", hint: "aborting it stops the task: stopOnSignals() gives one for Ctrl-C" };
export const PROGRESS_OPTION: OptionRule = { type: "function", hint: "called with (done, total) bytes" };
/** timeoutMs of the tasks that wait on a peer, in milliseconds (their --timeout takes seconds). */
export const TIMEOUT_OPTION: OptionRule = { type: "number", required: true, flag: "--timeout" };
/**
 * The options a file task on a device ends with (compress, decompress, ec-encode, ec-recover): which device, the
 * signal that stops it, the progress callback. Spread last, so "its options: …" lists them in this order.
 */
export const DEVICE_FILE_OPTIONS: OptionRules = { pciAddr: PCI_ADDR_OPTION, signal: SIGNAL_OPTION, onProgress: PROGRESS_OPTION };
/** A file path: the caller resolves it (userPath) before, as the CLIs do. */
export const PATH = (flag?: string): OptionRule => ({ type: "string", required: true, flag });

/** The second argument of the tasks that take `{ signal }` beside their options (dmaCopy, rdmaCopy, rdmaPing). */
export function checkRunOptions(fn: string, run: unknown, progress = false): void {
  checkOptions(fn, run, progress ? { signal: SIGNAL_OPTION, progress: { type: "boolean" } } : { signal: SIGNAL_OPTION });
}
