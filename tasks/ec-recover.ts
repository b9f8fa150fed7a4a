#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * ec-recover: the file an ec-encode folder holds, rebuilt from any N of its N + M block files (DOCA erasure coding
 * recover tasks), checked against the original's SHA-256 before it appears.
 */
import process from "node:process";
import { parseFlags, UsageError } from "./common/cli.ts";
import { versionLine } from "./common/version.ts";
import { progressText } from "./accel/progress.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { clearStatusLine, drawStatusLine, endStatusLine } from "./common/status-line.ts";
import { userPath } from "./common/user-path.ts";
import { formatBytes } from "./common/units.ts";
import { ecRecover } from "./ec/codec.ts";

export { ecRecover };

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = {
  input: { type: "string", short: "i" },
  output: { type: "string", short: "o" },
  "pci-addr": { type: "string", short: "p" },
  json: { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const HELP = `Usage: ec-recover -i DIR -o FILE [-p PCI] [--json]

Rebuilds the file an ec-encode folder holds. Each block file is checked against the SHA-256 in manifest.json; a
missing, short or changed one counts as lost. With at most M lost the file is rebuilt (DOCA erasure coding recover
tasks when a data block is lost) and its SHA-256 checked against the original's; only then does FILE appear (a
temporary file, then a rename; an existing FILE is never replaced).
  -i, --input DIR      folder made by ec-encode
  -o, --output FILE    file to create (must not exist)
  -p, --pci-addr PCI   device (default: the first one found)
      --json           print the result as one JSON object
      --version        print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help           this text
No peer and no waits. A progress line is drawn on a terminal. Exit status 0, 1 when more than M blocks are lost,
the manifest is invalid, the rebuilt file does not match, or on any other failure (no FILE is left),
2 for bad flags, ${STOPPED_STATUSES}.`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    print(HELP);
    return 0;
  }
  if (values.version) return (print(versionLine("ec-recover")), 0);
  if (values.input === undefined) throw new UsageError("--input is required");
  if (values.output === undefined) throw new UsageError("--output is required");
  const showProgress = !values.json && process.stderr.isTTY === true;
  let last = 0;
  let result;
  try {
    result = await ecRecover({
      inputDir: userPath(values.input),
      output: userPath(values.output),
      pciAddr: values["pci-addr"],
      signal: stopOnSignals(),
      onProgress: (done, total) => {
        const now = performance.now();
        if (!showProgress || now - last < 200) return;
        last = now;
        drawStatusLine(progressText("ec-recover", done, total));
      },
    });
  } catch (e) {
    clearStatusLine();
    throw e;
  }
  endStatusLine();
  const { manifest, lost, recovered, seconds } = result;
  if (values.json) printJson({ output: userPath(values.output), fileSize: manifest.fileSize, sha256: manifest.sha256, lost, recovered, seconds });
  else {
    print(
      `rebuilt ${userPath(values.output)} (${formatBytes(manifest.fileSize)}, sha256 ${manifest.sha256.slice(0, 16)}… matches)` +
        (lost.length ? `; lost blocks ${lost.join(", ")}${recovered ? " recomputed by DOCA erasure coding" : " were redundancy only"}` : "; no block lost"),
    );
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
