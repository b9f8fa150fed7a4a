/**
 * What encrypt.ts and decrypt.ts share on the command line: flags, their checks (exit 2 naming the flag), the
 * progress line and the report.
 */
import { positiveInt, UsageError } from "../common/cli.ts";
import { withProgress } from "../accel/progress.ts";
import { print } from "../common/main.ts";
import { printJson } from "../common/output.ts";
import { stopOnSignals } from "../common/interrupt.ts";
import { userPath } from "../common/user-path.ts";
import { formatBytes, formatRate } from "../common/units.ts";
import { type CryptOptions, decryptFile, encryptFile } from "./stream.ts";
import { refuseOutputIsInput } from "../common/same-file.ts";
import { DEFAULT_CHUNK, generateKeyFile, MAX_CHUNK, MIN_CHUNK, readKeyFile } from "./format.ts";
import { parseTaskFlags, requireFlags, taskFlags } from "../common/task-flags.ts";

export const ENCRYPT_FLAGS = taskFlags(
  {
    key: { type: "string", short: "k" },
    "generate-key": { type: "string" },
    "key-bits": { type: "string" },
  },
  "input", "output", "chunk-size", "pci-addr", "json", "version", "help",
);

export const DECRYPT_FLAGS = taskFlags(
  {
    key: { type: "string", short: "k" },
  },
  "input", "output", "pci-addr", "json", "version", "help",
);

export async function runCrypt(mode: "encrypt" | "decrypt", argv: string[], help: string): Promise<number> {
  const values = parseTaskFlags(argv, mode === "encrypt" ? ENCRYPT_FLAGS : DECRYPT_FLAGS, help, mode) as
    | Record<string, string | boolean | undefined>
    | undefined;
  if (values === undefined) return 0;
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
    else print(`encrypt: wrote a ${bits}-bit key to ${path} (mode 0600)`);
    return 0;
  }
  if (str("key-bits") !== undefined) throw new UsageError("--key-bits goes with --generate-key");
  const required = requireFlags(values, ["input", "output", "key"]);
  let chunkSize = DEFAULT_CHUNK;
  if (str("chunk-size") !== undefined) {
    chunkSize = positiveInt(str("chunk-size")!, "--chunk-size", MAX_CHUNK);
    if (chunkSize < MIN_CHUNK) throw new UsageError(`--chunk-size must be ${MIN_CHUNK} to ${MAX_CHUNK} bytes`);
  }
  const input = userPath(required.input), output = userPath(required.output);
  refuseOutputIsInput(output, [{ path: input, shownAs: required.input, flag: "-i/--input" }, {
    path: userPath(required.key),
    shownAs: required.key,
    flag: "-k/--key",
  }], required.output);
  const key = readKeyFile(userPath(required.key), "--key");
  const signal = stopOnSignals();
  const result = await withProgress(values.json ? undefined : mode, (onProgress) => {
    const options: CryptOptions = { input, output, key, chunkSize, pciAddr: str("pci-addr"), signal, onProgress };
    return mode === "encrypt" ? encryptFile(options) : decryptFile(options);
  });
  if (values.json) printJson({ mode, ...result });
  else {
    print(
      `${mode}: ${mode}ed ${result.input} → ${result.output}: ${formatBytes(result.plaintextBytes)} in ${result.chunks} chunk(s) ` +
        `with AES-${result.keyBits}-GCM, ${formatRate(result.plaintextBytes, result.seconds)}`,
    );
  }
  return 0;
}
