#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * ec-encode: a file into N data + M redundancy block files and a manifest, with DOCA erasure coding (create tasks);
 * ec-recover rebuilds it from any N of them. Layout and manifest: tasks/ec/codec.ts.
 */
import "./common/early-stop.ts"; // first: a stop while the modules below load is reported like any other (early-stop.ts)
import process from "node:process";
import { positiveInt, UsageError } from "./common/cli.ts";
import { withProgress } from "./accel/progress.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { userPath } from "./common/user-path.ts";
import { formatBytes, formatRate } from "./common/units.ts";
import { ecEncode } from "./ec/codec.ts";
import { parseTaskFlags, requireFlags, taskFlags } from "./common/task-flags.ts";

export { ecEncode };

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = taskFlags(
  {
    "data-blocks": { type: "string", short: "n" },
    "redundancy-blocks": { type: "string", short: "m" },
    matrix: { type: "string" },
    "block-size": { type: "string" },
  },
  "input", "output", "pci-addr", "json", "version", "help",
);

const HELP = `Usage: ec-encode -i FILE -o DIR [-n N] [-m M] [--matrix cauchy|vandermonde] [--block-size BYTES] [-p PCI] [--json]

Cuts FILE into N data blocks and M redundancy blocks with DOCA erasure coding, one file per block (block-000 …)
and manifest.json (geometry, sizes, the SHA-256 of the file and of every block) in the new folder DIR; ec-recover
rebuilds FILE from any N of the N + M blocks. DIR appears only when complete (built under a temporary name).
  -i, --input FILE              file to encode
  -o, --output DIR              folder to create (must not exist)
  -n, --data-blocks N           data blocks, 1 to 128 (default 4)
  -m, --redundancy-blocks M     redundancy blocks: how many may be lost, 1 to 128 (default 2)
      --matrix TYPE             cauchy (default: any N blocks rebuild) or vandermonde (some choices may not)
      --block-size BYTES        bytes per block per stripe, a multiple of 64 (default: FILE in one stripe when it
                                fits the device's max block size, else that size)
  -p, --pci-addr PCI            device (default: the first one found)
      --json                    print the manifest and timing as one JSON object
      --version                 print the versions of doca-ts and of the DOCA it loads, and exit
  -h, --help                    this text
No peer and no waits. A progress line is drawn on a terminal. Exit status 0, 1 on any failure (DIR is not left
behind), 2 for bad flags, ${STOPPED_STATUSES}.`;

async function main(argv: string[]): Promise<number> {
  const values = parseTaskFlags(argv, FLAGS, HELP, "ec-encode");
  if (values === undefined) return 0;
  const { input, output } = requireFlags(values, ["input", "output"]);
  const n = values["data-blocks"] === undefined ? 4 : positiveInt(values["data-blocks"], "--data-blocks", 128);
  const m = values["redundancy-blocks"] === undefined ? 2 : positiveInt(values["redundancy-blocks"], "--redundancy-blocks", 128);
  const matrix = values.matrix ?? "cauchy";
  if (matrix !== "cauchy" && matrix !== "vandermonde") throw new UsageError("--matrix must be cauchy or vandermonde");
  let blockSize: number | undefined;
  if (values["block-size"] !== undefined) {
    blockSize = positiveInt(values["block-size"], "--block-size");
    if (blockSize % 64 !== 0) throw new UsageError("--block-size must be a multiple of 64");
  }
  const result = await withProgress(values.json ? undefined : "ec-encode", (onProgress) =>
    ecEncode({
      input: userPath(input),
      outputDir: userPath(output),
      dataBlocks: n,
      redundancyBlocks: m,
      matrix,
      blockSize,
      pciAddr: values["pci-addr"],
      signal: stopOnSignals(),
      onProgress,
    }));
  if (values.json) printJson(result);
  else {
    print(
      `ec-encode: encoded ${formatBytes(result.fileSize)} into ${n} data + ${m} redundancy blocks (${result.matrix}, ` +
        `${result.stripes} stripe(s) of ${formatBytes(result.blockSize)} blocks) in ${userPath(output)}, ` +
        `${formatRate(result.fileSize, result.seconds)}; any ${n} of the ${n + m} block files rebuild it`,
    );
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
