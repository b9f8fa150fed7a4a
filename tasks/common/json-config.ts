/**
 * Reads a DOCA argp style JSON configuration (-j/--json FILE): keys are the long flag names. Accepts a flat object
 * or DOCA's sections ("doca_general_flags", "doca_program_flags"), and C/C++ style comments as NVIDIA's sample
 * configurations contain.
 */
import { printable } from "../../ffi/engine/printable.ts";
import { readFlagFile, readSmallRegularFile } from "./input-file.ts";
import { isMissingPermission } from "./permission.ts";

/** Removes // and /* *\/ comments outside JSON strings. */
export function stripJsonComments(text: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      out += c;
    }
  }
  return out;
}

/** The largest flags file read: a few hundred bytes is typical; /dev/zero or a huge file must not fill the memory. */
const MAX_CONFIG_BYTES = 1 << 20;

/**
 * Flag values from the file, keyed by long flag name, as strings/booleans like the command line gives them.
 * `path` is resolved as every path the user gives (user-path.ts: relative to the folder the command ran from); the
 * errors name the path as given (`shownAs`) and quote the JSON parser's text escaped, so it stays on one line.
 */
export function readJsonConfig(path: string, shownAs = path): Record<string, string | boolean> {
  let bytes: Uint8Array;
  try {
    bytes = readSmallRegularFile(path, MAX_CONFIG_BYTES, shownAs);
  } catch (e) {
    if (isMissingPermission(e)) throw e;
    throw new Error(`-j/--json: ${(e as Error).message}`, { cause: e });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripJsonComments(new TextDecoder().decode(bytes)));
  } catch (e) {
    throw new Error(`-j/--json ${shownAs}: not valid JSON: ${printable(e instanceof Error ? e.message : String(e), 300)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`-j/--json ${shownAs}: expected a JSON object of flag names`);
  }
  const out: Record<string, string | boolean> = {};
  const take = (obj: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(obj)) {
      if (key === "doca_general_flags" || key === "doca_program_flags") {
        if (typeof value !== "object" || value === null) throw new Error(`-j/--json ${shownAs}: "${key}" must be an object`);
        take(value as Record<string, unknown>);
      } else if (typeof value === "string" || typeof value === "boolean") {
        out[key] = value;
      } else if (typeof value === "number") {
        out[key] = String(value);
      } else {
        throw new Error(`-j/--json ${shownAs}: "${key}" must be a string, number or boolean`);
      }
    }
  };
  take(parsed as Record<string, unknown>);
  return out;
}

/**
 * The JSON value of a small file a flag names (a step's descriptor file): resolved and read as readFlagFile does;
 * a file that is no JSON is "FLAG PATH: not valid JSON: …", the parser's text escaped onto the same line.
 */
export function readJsonFlagFile(flag: string, given: string, maxBytes = MAX_CONFIG_BYTES): unknown {
  const { path, bytes } = readFlagFile(flag, given, maxBytes);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Error(`${flag} ${path}: not valid JSON: ${printable(e instanceof Error ? e.message : String(e), 300)}`);
  }
}
