#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * decrypt: a file made by encrypt back into its plaintext, on the DOCA device (AES-GCM tasks); every chunk must
 * authenticate, or nothing is written.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { isMain, runMain } from "./common/main.ts";
import { STOPPED_STATUSES } from "./common/interrupt.ts";
import { DECRYPT_FLAGS, runCrypt } from "./crypt/cli.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = DECRYPT_FLAGS;
export { decryptFile } from "./crypt/stream.ts";

const HELP = `Usage: decrypt -i FILE -o FILE -k KEYFILE [-p PCI] [--json]

Decrypts a file made by encrypt with AES-GCM on the DOCA device. Every chunk must authenticate against the file's
header, its index and its place (the last one marked last): a changed byte, a wrong key, chunks swapped or the
file cut short fail, and then no output file is left (the plaintext goes to a temporary file, renamed only when
all of it verified).
  -i, --input FILE     encrypted file
  -o, --output FILE    plaintext file to create (must not exist)
  -k, --key KEYFILE    key file: 32 or 64 hex digits, readable by its owner only
  -p, --pci-addr PCI   device (default: the first one found)
      --json           print the result as one JSON object
      --version        print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help           this text
No peer and no waits. A progress line is drawn on a terminal. Exit status 0, 1 when anything fails to
authenticate or on any other failure (no output file is left), 2 for bad flags or an unusable key file, ${STOPPED_STATUSES}.`;

if (isMain(import.meta)) await runMain(() => runCrypt("decrypt", process.argv.slice(2), HELP));
