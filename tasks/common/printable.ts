/**
 * Text that came from a peer (failure reasons, names) shown on the user's terminal or in logs: control characters
 * (C0, DEL, C1, and the Unicode line/paragraph separators and bidi overrides) are escaped, so a peer cannot move the
 * cursor, rewrite the line with a CR, colour the terminal or forge a second log line. Length is bounded too.
 */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string, maxLength = 1000): string {
  const escaped = text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return escaped.length > maxLength ? `${escaped.slice(0, maxLength)}… (${escaped.length - maxLength} more characters)` : escaped;
}
