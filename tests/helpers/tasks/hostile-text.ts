/**
 * Text a hostile peer sends to reach the user's terminal: an OSC window title, clear screen, a CR that overwrites
 * the line, a forged "no problems found" line, a C1 CSI (\x9b), a bidi override, a zero-width joiner's cousin, NUL,
 * and invisible format characters (word joiner, deprecated format controls, an interlinear annotation, a tag
 * character beyond U+FFFF, a soft hyphen, a Hangul filler).
 */
export const HOSTILE_TEXT = "\x1b]0;owned\x07\x1b[2J\rFORGED no problems found\n\x9b31m\u202eevil\u200f\0end" +
  "\u2060\u206a\ufff9\u{e0041}\u00ad\u3164";
/** The same without NUL, for command-line arguments (argv cannot carry NUL). */
export const HOSTILE_ARG = HOSTILE_TEXT.replace("\0", "");
/** Every raw character that must never reach the output. */
export const FORBIDDEN = ["\x1b", "\x07", "\r", "\x9b", "\u202e", "\u200f", "\0", "\u2060", "\u206a", "\ufff9", "\u{e0041}", "\u00ad", "\u3164"];

/** Fails (returns the problem) when `output` carries a raw control character or a forged line. */
export function terminalProblem(output: string): string | undefined {
  for (const c of FORBIDDEN) if (output.includes(c)) return `raw ${JSON.stringify(c)} reached the output`;
  if (/^FORGED/m.test(output)) return "a forged line reached the output";
  return undefined;
}
