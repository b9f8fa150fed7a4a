/**
 * What encrypt.ts and decrypt.ts share on the command line: flags, their checks (exit 2 naming the flag), the
 * progress line and the report.
 */
import process from "node:process";
import { parseFlags, positiveInt, UsageError } from "../common/cli.ts";
import { versionLine } from "../common/version.ts";
import { progressText } from "../accel/progress.ts";
import { print } from "../common/main.ts";
import { printJson } from "../common/output.ts";
import { clearStatusLine, drawStatusLine, endStatusLine } from "../common/status-line.ts";
import { stopOnSignals } from "../common/interrupt.ts";
import { userPath } from "../common/user-path.ts";
import { formatBytes, formatRate } from "../common/units.ts";
import { type CryptOptions, type CryptResult, decryptFile, encryptFile } from "./stream.ts";
import { DEFAULT_CHUNK, generateKeyFile, MAX_CHUNK, MIN_CHUNK, readKeyFile } from "./format.ts";

export const ENCRYPT_FLAGS = {
  input: { type: "string", short: "i" },
  output: { type: "string", short: "o" },
  key: { type: "string", short: "k" },
  "generate-key": { type: "string" },
  "key-bits": { type: "string" },
  "chunk-size": { type: "string" },
  "pci-addr": { type: "string", short: "p" },
  json: { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export const DECRYPT_FLAGS = {
  input: { type: "string", short: "i" },
  output: { type: "string", short: "o" },
  key: { type: "string", short: "k" },
  "pci-addr": { type: "string", short: "p" },
  json: { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function runCrypt(mode: "encrypt" | "decrypt", argv: string[], help: string): Promise<number> {
  const { values } = parseFlags(argv, mode === "encrypt" ? ENCRYPT_FLAGS : DECRYPT_FLAGS) as {
    values: Record<string, string | boolean | undefined>;
  };
  if (values.help) {
    print(help);
    return 0;
  }
  if (values.version) return (print(versionLine(mode)), 0);
  const str = (name: string) => values[name] as string | undefined;
  if (mode === "encrypt" && str("generate-key") !== undefined) {
    const bits = str("key-bits") === undefined ? 256 : positiveInt(str("key-bits")!, "--key-bits");
    if (bits !== 128 && bits !== 256) throw new UsageError("--key-bits must be 128 or 256");
    for (const other of ["input", "output", "key", "chunk-size"]) {
      if (str(other) !== undefined) throw new UsageError(`--generate-key makes a key and nothing else: drop --${other}`);
    }
    const path = userPath(str("generate-key")!);
    generateKeyFile(path, bits);
    if (values.json) printJson({ keyFile: path, bits });
    else print(`wrote a ${bits}-bit key to ${path} (mode 0600)`);
    return 0;
  }
  if (str("key-bits") !== undefined) throw new UsageError("--key-bits goes with --generate-key");
  for (const flag of ["input", "output", "key"]) if (str(flag) === undefined) throw new UsageError(`--${flag} is required`);
  let chunkSize = DEFAULT_CHUNK;
  if (str("chunk-size") !== undefined) {
    chunkSize = positiveInt(str("chunk-size")!, "--chunk-size", MAX_CHUNK);
    if (chunkSize < MIN_CHUNK) throw new UsageError(`--chunk-size must be ${MIN_CHUNK} to ${MAX_CHUNK} bytes`);
  }
  const input = userPath(str("input")!), output = userPath(str("output")!);
  if (input === output) throw new UsageError("--output must differ from --input");
  const key = readKeyFile(userPath(str("key")!), "--key");
  const showProgress = !values.json && process.stderr.isTTY === true;
  let last = 0;
  const options: CryptOptions = {
    input,
    output,
    key,
    chunkSize,
    pciAddr: str("pci-addr"),
    signal: stopOnSignals(),
    onProgress: (done, total) => {
      const now = performance.now();
      if (!showProgress || now - last < 200) return;
      last = now;
      drawStatusLine(progressText(mode, done, total));
    },
  };
  let result: CryptResult;
  try {
    result = await (mode === "encrypt" ? encryptFile(options) : decryptFile(options));
  } catch (e) {
    clearStatusLine();
    throw e;
  }
  endStatusLine();
  if (values.json) printJson({ mode, ...result });
  else {
    print(
      `${mode}ed ${result.input} → ${result.output}: ${formatBytes(result.inputBytes)} in ${result.chunks} chunk(s) ` +
        `with AES-${result.keyBits}-GCM, ${formatRate(result.inputBytes, result.seconds)}`,
    );
  }
  return 0;
}
