/**
 * The one function that makes text safe for a terminal or a log: every control character is escaped, so text that
 * came from elsewhere (a Comch peer, a DOCA library, a file name) cannot move the cursor, rewrite a line with a CR,
 * set the window title (OSC), clear the screen, switch charsets (C1, e.g. \x9b = CSI), reorder what is shown (bidi
 * overrides and isolates) or forge a second line. Escaped: C0 (including NUL, TAB, CR and LF), DEL, C1, U+061C,
 * U+200B-U+200F, U+2028/U+2029, U+202A-U+202E, U+2066-U+2069 and U+FEFF. A backslash is left alone, so escaping twice
 * changes nothing (peer text that spells "\x1b" stays visible as those four characters).
 *
 * Every line a task writes goes through it (tasks/common/output.ts, one call per line, so the program's own line
 * breaks survive and a peer's do not); JSON output uses the same set as JSON \u escapes (printableJson).
 */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every control character escaped (\xNN, \uNNNN); longer than `maxLength` → cut with a note. */
export function printable(text: string, maxLength = Infinity): string {
  const escaped = String(text).replace(CONTROL, escapeOne);
  return escaped.length > maxLength ? `${escaped.slice(0, maxLength)}… (${escaped.length - maxLength} more characters)` : escaped;
}

/** JSON.stringify, with the characters JSON leaves raw (DEL, C1, bidi, separators) as \u escapes too: still JSON. */
export function printableJson(value: unknown, space?: number): string {
  // A raw line break in JSON's output is only ever its own indentation (strings carry \n escaped): keep it.
  return JSON.stringify(value, null, space).replace(CONTROL, (c) => c === "\n" ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
