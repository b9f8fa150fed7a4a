/**
 * The one function that makes text safe for a terminal or a log: every control character is escaped, so text that
 * came from elsewhere (a Comch peer, a DOCA library, a file name) cannot move the cursor, rewrite a line with a CR,
 * set the window title (OSC), clear the screen, switch charsets (C1, e.g. \x9b = CSI), reorder what is shown (bidi
 * overrides and isolates), hide text or forge a second line. Escaped: C0 (including NUL, TAB, CR and LF), DEL, C1,
 * U+2028/U+2029, every Unicode format character (category Cf: the bidi controls, zero-width characters, U+2060-U+206F,
 * U+FEFF, the soft hyphen, interlinear annotations, tag characters, ...) and the invisible Hangul fillers. A
 * backslash is left alone, so escaping twice changes nothing (peer text that spells "\x1b" stays visible as those four
 * characters). Characters beyond U+FFFF are written \u{XXXXX} (JSON: as their two \u escapes).
 *
 * Every line a task writes goes through it (tasks/common/output.ts, one call per line, so the program's own line
 * breaks survive and a peer's do not); JSON output uses the same set as JSON \u escapes (printableJson).
 */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}\u115f\u1160\u3164\uffa0]/gu;

function escapeOne(c: string): string {
  const code = c.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\u{${code.toString(16)}}`;
}

/** JSON's own escape: each UTF-16 unit as \uXXXX (a character beyond U+FFFF as its surrogate pair). */
function jsonEscape(c: string): string {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/** `text` with every control character escaped (\xNN, \uNNNN); longer than `maxLength` → cut with a note. */
export function printable(text: string, maxLength = Infinity): string {
  const escaped = String(text).replace(CONTROL, escapeOne);
  return escaped.length > maxLength ? `${escaped.slice(0, maxLength)}… (${escaped.length - maxLength} more characters)` : escaped;
}

/** JSON.stringify, with the characters JSON leaves raw (DEL, C1, format characters, separators) as \u escapes too: still JSON. */
export function printableJson(value: unknown, space?: number): string {
  // A raw line break in JSON's output is only ever its own indentation (strings carry \n escaped): keep it.
  return JSON.stringify(value, null, space).replace(CONTROL, (c) => c === "\n" ? c : jsonEscape(c));
}
