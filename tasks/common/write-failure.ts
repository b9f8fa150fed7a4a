/**
 * The error of a failed write, fsync or rename of a task's output, naming the output as the user gave it: the
 * runtime's own text ("No space left on device (os error 28)") names no file, and a task may write several.
 */

/** errno codes that mean "no more room here", with what to tell the user. */
const NO_ROOM: Record<string, string> = {
  ENOSPC: "the file system is full (ENOSPC)",
  EDQUOT: "the file system is full for this user: disk quota exceeded (EDQUOT)",
  EFBIG: "the file grew past the largest file this process may write (EFBIG: the file system's limit or `ulimit -f`)",
};

/** The errno code of `error` (Node's `code`; Deno's text carries "os error N" only for some). */
function codeOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (typeof code === "string") return code;
  const text = String((error as Error)?.message ?? error);
  if (/No space left on device|os error 28\b/.test(text)) return "ENOSPC";
  if (/Disk quota exceeded|os error 122\b/.test(text)) return "EDQUOT";
  if (/File too large|os error 27\b/.test(text)) return "EFBIG";
  return undefined;
}

/**
 * `error` (of writing `shownAs`, while `doing`: "writing", "flushing to disk", "writing block-003") as an Error
 * naming the output and, for ENOSPC, EDQUOT and EFBIG, saying why in words; `discarded` says what was dropped.
 */
export function writeFailure(error: unknown, shownAs: string, doing = "writing", discarded = "nothing was left under that name"): Error {
  const code = codeOf(error);
  // our own errors (a name that appeared meanwhile …) already say what happened; a system error says no file
  if (code === undefined) return error as Error;
  const why = code in NO_ROOM ? NO_ROOM[code] : String((error as Error)?.message ?? error);
  return new Error(`cannot write ${shownAs} (${doing}): ${why}; ${discarded}`, { cause: error });
}
