/**
 * sha256sum's list format, both ways, as GNU coreutils (9.x) writes and reads it: "DIGEST  NAME" (or "DIGEST *NAME",
 * binary mode); a NAME holding a backslash, a line feed or a carriage return is written escaped (\\, \n, \r) and its
 * line starts with a backslash; the BSD tag form "SHA256 (NAME) = DIGEST" is read too; CRLF line ends are accepted.
 * A check list is read line by line with a bounded line length, so /dev/zero or a huge file cannot fill the memory.
 */
import { closeSync, readSync } from "node:fs";
import { openRegularFile } from "../common/input-file.ts";

/** sha256sum's line: a name with a backslash, newline or carriage return is escaped and the line starts with "\". */
export function listLine(digest: string, name: string): string {
  if (!/[\\\n\r]/.test(name)) return `${digest}  ${name}`;
  return `\\${digest}  ${escapeName(name)}`;
}

function escapeName(name: string): string {
  return name.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll("\r", "\\r");
}

/**
 * A name as `--check` prints it, as GNU sha256sum -c (9.x) prints it: as it is, unless it holds a line feed, then with
 * a leading backslash and \\, \n, \r escapes (a backslash alone does not escape a name: "back\slash: OK"). Beyond
 * sha256sum, any other control character (TAB, CR, ESC...) escapes the name the same way, with \t or \xHH, so no name
 * can put a raw control character on the terminal or forge an "OK" line (sha256sum prints a CR as it is).
 */
export function checkedName(name: string): string {
  // deno-lint-ignore no-control-regex
  if (!/[\x00-\x1f\x7f]/.test(name)) return name;
  // deno-lint-ignore no-control-regex
  return "\\" + escapeName(name).replace(/[\x00-\x1f\x7f]/g, (c) => c === "\t" ? "\\t" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

const TAG_NAMES: Record<string, string> = { sha1: "SHA1", sha256: "SHA256", sha512: "SHA512" };

/** Parses a list line ("DIGEST  NAME", "DIGEST *NAME", the escaped forms, "SHA256 (NAME) = DIGEST"); undefined when malformed. */
export function parseListLine(line: string, hexLength: number, algorithm = "sha256"): { digest: string; name: string } | undefined {
  const escaped = line.startsWith("\\");
  const body = escaped ? line.slice(1) : line;
  const plain = new RegExp(`^([0-9a-fA-F]{${hexLength}}) [ *](.+)$`).exec(body);
  const tag = plain ? undefined : new RegExp(`^${TAG_NAMES[algorithm] ?? "-"} \\((.+)\\) = ([0-9a-fA-F]{${hexLength}})$`).exec(body);
  if (!plain && !tag) return undefined;
  let name = plain ? plain[2] : tag![1];
  const digest = plain ? plain[1] : tag![2];
  if (escaped) {
    // an escaped line holds only \\, \n and \r escapes; anything else after a backslash is malformed, as for sha256sum
    if (/\\(?![\\nr])/.test(name.replace(/\\[\\nr]/g, ""))) return undefined;
    name = name.replace(/\\([\\nr])/g, (_, c) => (c === "n" ? "\n" : c === "r" ? "\r" : "\\"));
  }
  return { digest: digest.toLowerCase(), name };
}

/** Longest line of a check list (a digest, a path of PATH_MAX and some): longer lines are reported malformed. */
export const MAX_LIST_LINE = 64 * 1024;

/** One line of a check list: its text (CRLF/LF removed; not UTF-8: decoded with U+FFFD), undefined when too long. */
export interface ListLine {
  number: number;
  text: string | undefined;
  problem?: "not UTF-8" | "too long";
}

/**
 * The lines of the check list at `path` (a regular file), read 64 KiB at a time: memory stays bounded whatever the
 * file holds. `shownAs`: the name the user gave.
 */
export function* readListLines(path: string, shownAs = path): Generator<ListLine> {
  const fd = openRegularFile(path, shownAs, "a check list is read as a file");
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    const buf = new Uint8Array(64 * 1024);
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let tooLong = false;
    let number = 0;
    const finish = (): ListLine => {
      number++;
      const bytes = concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      if (tooLong) return (tooLong = false, { number, text: undefined, problem: "too long" });
      const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
      try {
        return { number, text: decoder.decode(bytes.subarray(0, end)) };
      } catch {
        return { number, text: new TextDecoder().decode(bytes.subarray(0, end)), problem: "not UTF-8" };
      }
    };
    const keep = (part: Uint8Array): void => {
      if (tooLong || part.length === 0) return;
      if (pendingBytes + part.length > MAX_LIST_LINE) {
        tooLong = true; // the rest of this line is dropped: it is reported as malformed
        pending = [];
        pendingBytes = 0;
        return;
      }
      pending.push(part.slice());
      pendingBytes += part.length;
    };
    let position = 0;
    while (true) {
      const n = readSync(fd, buf, 0, buf.length, position);
      if (n === 0) break;
      position += n;
      let start = 0;
      for (let i = 0; i < n; i++) {
        if (buf[i] !== 0x0a) continue;
        keep(buf.subarray(start, i));
        yield finish();
        start = i + 1;
      }
      keep(buf.subarray(start, n));
    }
    if (pendingBytes > 0 || tooLong) yield finish();

  } finally {
    closeSync(fd);
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
}
