#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * ec-recover: the file an ec-encode folder holds, rebuilt from any N of its N + M block files (DOCA erasure coding
 * recover tasks), checked against the original's SHA-256 before it appears.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { withProgress } from "./accel/progress.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { userPath } from "./common/user-path.ts";
import { formatBytes, formatRate } from "./common/units.ts";
import { ecRecover } from "./ec/codec.ts";
import { parseTaskFlags, requireFlags, taskFlags } from "./common/task-flags.ts";

export { ecRecover };

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags({}, "input", "output", "pci-addr", "json", "version", "help");

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
  const values = parseTaskFlags(argv, FLAGS, HELP, "ec-recover");
  if (values === undefined) return 0;
  const { input, output } = requireFlags(values, ["input", "output"]);
  const result = await withProgress(values.json ? undefined : "ec-recover", (onProgress) =>
    ecRecover({
      inputDir: userPath(input),
      output: userPath(output),
      pciAddr: values["pci-addr"],
      signal: stopOnSignals(),
      onProgress,
    }));
  const { manifest, lost, recovered, seconds } = result;
  if (values.json) {
    printJson({ output: userPath(output), fileSize: manifest.fileSize, sha256: manifest.sha256, lost, recovered, seconds, bytesPerSecond: result.bytesPerSecond });
  }
  else {
    print(
      `ec-recover: rebuilt ${userPath(output)} (${formatBytes(manifest.fileSize)}, sha256 ${manifest.sha256.slice(0, 16)}… matches)` +
        (lost.length ? `; lost blocks ${lost.join(", ")}${recovered ? " recomputed by DOCA erasure coding" : " were redundancy only"}` : "; no block lost") +
        `, ${formatRate(manifest.fileSize, seconds)}`,
    );
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
