#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * encrypt: a file into the chunked AES-GCM format of tasks/crypt/format.ts, on the DOCA device (AES-GCM tasks), or
 * --generate-key FILE: a new private key file (mode 0600).
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { isMain, runMain } from "./common/main.ts";
import { STOPPED_STATUSES } from "./common/interrupt.ts";
import { ENCRYPT_FLAGS, runCrypt } from "./crypt/cli.ts";

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = ENCRYPT_FLAGS;
export { encryptFile } from "./crypt/stream.ts";

const HELP = `Usage: encrypt -i FILE -o FILE -k KEYFILE [--chunk-size BYTES] [-p PCI] [--json]
       encrypt --generate-key KEYFILE [--key-bits 128|256] [--json]

Encrypts a file with AES-GCM on the DOCA device, in chunks (each with its own IV and 16-byte tag, bound to the
file's header, its index and whether it is the last, so chunks cannot be changed, reordered or cut off unnoticed).
The output appears under its name only once complete (a temporary file, then a rename); it is never replaced.
  -i, --input FILE         file to encrypt
  -o, --output FILE        encrypted file to create (must not exist)
  -k, --key KEYFILE        key file: 32 or 64 hex digits (AES-128 / AES-256), readable by its owner only
      --chunk-size BYTES   plaintext per chunk, 4096 to 1048576 (default 1048576)
      --generate-key FILE  create a key file with a random key, mode 0600 (never replaces a file), and stop
      --key-bits N         with --generate-key: 128 or 256 (default 256)
  -p, --pci-addr PCI       device (default: the first one found)
      --json               print the result as one JSON object
      --version            print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help               this text
No peer and no waits. A progress line is drawn on a terminal. Exit status 0, 1 on any failure (no output file is
left), 2 for bad flags or an unusable key file (one group or others may read is refused), ${STOPPED_STATUSES}.
Format: see tasks/README.md (decrypt reverses it).`;

if (isMain(import.meta)) await runMain(() => runCrypt("encrypt", process.argv.slice(2), HELP));
