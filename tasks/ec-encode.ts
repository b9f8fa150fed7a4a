#!/usr/bin/env -S deno run --no-prompt --allow-ffi --allow-env --allow-read --allow-write --allow-run
/**
 * ec-encode: a file into N data + M redundancy block files and a manifest, with DOCA erasure coding (create tasks);
 * ec-recover rebuilds it from any N of them. Layout and manifest: tasks/ec/codec.ts.
 */
import process from "node:process";
import { parseFlags, positiveInt, UsageError } from "./common/cli.ts";
import { versionLine } from "./common/version.ts";
import { progressText } from "./accel/progress.ts";
import { isMain, print, runMain } from "./common/main.ts";
import { printJson } from "./common/output.ts";
import { STOPPED_STATUSES, stopOnSignals } from "./common/interrupt.ts";
import { clearStatusLine, drawStatusLine, endStatusLine } from "./common/status-line.ts";
import { userPath } from "./common/user-path.ts";
import { formatBytes, formatRate } from "./common/units.ts";
import { ecEncode } from "./ec/codec.ts";

export { ecEncode };

/** Every flag this task accepts (tests/tasks-help.test.ts checks --help documents exactly these). */
export const FLAGS = {
  input: { type: "string", short: "i" },
  output: { type: "string", short: "o" },
  "data-blocks": { type: "string", short: "n" },
  "redundancy-blocks": { type: "string", short: "m" },
  matrix: { type: "string" },
  "block-size": { type: "string" },
  "pci-addr": { type: "string", short: "p" },
  json: { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

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
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    print(HELP);
    return 0;
  }
  if (values.version) return (print(versionLine("ec-encode")), 0);
  if (values.input === undefined) throw new UsageError("--input is required");
  if (values.output === undefined) throw new UsageError("--output is required");
  const n = values["data-blocks"] === undefined ? 4 : positiveInt(values["data-blocks"], "--data-blocks", 128);
  const m = values["redundancy-blocks"] === undefined ? 2 : positiveInt(values["redundancy-blocks"], "--redundancy-blocks", 128);
  const matrix = values.matrix ?? "cauchy";
  if (matrix !== "cauchy" && matrix !== "vandermonde") throw new UsageError("--matrix must be cauchy or vandermonde");
  let blockSize: number | undefined;
  if (values["block-size"] !== undefined) {
    blockSize = positiveInt(values["block-size"], "--block-size");
    if (blockSize % 64 !== 0) throw new UsageError("--block-size must be a multiple of 64");
  }
  const showProgress = !values.json && process.stderr.isTTY === true;
  let last = 0;
  let result;
  try {
    result = await ecEncode({
      input: userPath(values.input),
      outputDir: userPath(values.output),
      dataBlocks: n,
      redundancyBlocks: m,
      matrix,
      blockSize,
      pciAddr: values["pci-addr"],
      signal: stopOnSignals(),
      onProgress: (done, total) => {
        const now = performance.now();
        if (!showProgress || now - last < 200) return;
        last = now;
        drawStatusLine(progressText("ec-encode", done, total));
      },
    });
  } catch (e) {
    clearStatusLine();
    throw e;
  }
  endStatusLine();
  if (values.json) printJson(result);
  else {
    print(
      `encoded ${formatBytes(result.fileSize)} into ${n} data + ${m} redundancy blocks (${result.matrix}, ` +
        `${result.stripes} stripe(s) of ${formatBytes(result.blockSize)} blocks) in ${userPath(values.output)}, ` +
        `${formatRate(result.fileSize, result.seconds)}; any ${n} of the ${n + m} block files rebuild it`,
    );
  }
  return 0;
}

if (isMain(import.meta)) await runMain(() => main(process.argv.slice(2)));
