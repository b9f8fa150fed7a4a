/**
 * Reads a DOCA argp style JSON configuration (-j/--json FILE): keys are the long flag names. Accepts a flat object
 * or DOCA's sections ("doca_general_flags", "doca_program_flags"), and C/C++ style comments as NVIDIA's sample
 * configurations contain.
 */
import { readFileSync } from "node:fs";
import { rethrowMissingPermission } from "./permission.ts";

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

/** Flag values from the file, keyed by long flag name, as strings/booleans like the command line gives them. */
export function readJsonConfig(path: string): Record<string, string | boolean> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripJsonComments(readFileSync(path, "utf8")));
  } catch (e) {
    rethrowMissingPermission(e);
    throw new Error(`--json ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`--json ${path}: expected a JSON object of flag names`);
  }
  const out: Record<string, string | boolean> = {};
  const take = (obj: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(obj)) {
      if (key === "doca_general_flags" || key === "doca_program_flags") {
        if (typeof value !== "object" || value === null) throw new Error(`--json ${path}: "${key}" must be an object`);
        take(value as Record<string, unknown>);
      } else if (typeof value === "string" || typeof value === "boolean") {
        out[key] = value;
      } else if (typeof value === "number") {
        out[key] = String(value);
      } else {
        throw new Error(`--json ${path}: "${key}" must be a string, number or boolean`);
      }
    }
  };
  take(parsed as Record<string, unknown>);
  return out;
}
