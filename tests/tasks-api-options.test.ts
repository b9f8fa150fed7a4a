/**
 * The task functions check their options object at run time (issue 32 item 6): from plain JavaScript a key given as
 * a path string was taken as key bytes, and the CLI's flag name (ecRecover's `input` for `inputDir`) failed deep in
 * node:fs naming no option. Each check comes before any work: nothing is created, no device is opened.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  compressFile,
  decompressFile,
  decryptFile,
  dmaCopy,
  dmaTransfer,
  ecEncode,
  ecRecover,
  encryptFile,
  exportMmap,
  OptionsError,
  rdmaCopy,
  runComchClient,
  runComchServer,
  streamProducer,
} from "../tasks/mod.ts";

const dir = mkdtempSync(join(tmpdir(), "doca-ts-api-options-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);
writeFileSync(at("in"), "some bytes");

/** Calls `fn` with options TypeScript would refuse (as plain JavaScript may), expecting an OptionsError matching `why`. */
async function refused(fn: (options: never) => Promise<unknown>, options: unknown, why: RegExp): Promise<void> {
  await assert.rejects(async () => await fn(options as never), (e: Error) => {
    assert.ok(e instanceof OptionsError, `${e.name}: ${e.message}`);
    assert.ok(e instanceof TypeError);
    assert.match(e.message, why);
    return true;
  });
}

describe("the task functions check their options at run time", () => {
  test("a key given as a string (a path) is refused, never read as key bytes", { timeout: 30_000 }, async () => {
    for (const [name, fn] of [["decryptFile", decryptFile], ["encryptFile", encryptFile]] as const) {
      await refused(fn, { input: at("in"), output: at(`${name}.out`), key: "/some/key/file" }, new RegExp(
        `^${name}: option "key" must be a Uint8Array, got a string of 14 characters \\(the key itself, 16 or 32 bytes; a string`,
      ));
      await refused(fn, { input: at("in"), output: at(`${name}.out`) }, new RegExp(`^${name}: option "key" is missing: it must be a Uint8Array`));
    }
  });

  test("a CLI flag's name is named with the option it sets; another unknown key lists the options", { timeout: 30_000 }, async () => {
    await refused(ecRecover, { input: at("blocks"), output: at("r.out") }, /^ecRecover: unknown option "input": the CLI's -i\/--input is the option "inputDir" here$/);
    await refused(ecEncode, { input: at("in"), output: at("blocks"), dataBlocks: 3, redundancyBlocks: 2 }, /^ecEncode: unknown option "output": the CLI's -o\/--output is the option "outputDir" here$/);
    await refused(compressFile, { input: at("in"), output: at("c.gz"), "pci-addr": "03:00.0" }, /^compressFile: unknown option "pci-addr": the CLI's -p\/--pci-addr is the option "pciAddr" here$/);
    await refused(decompressFile, { input: at("in"), output: at("d.out"), overwrite: true }, /^decompressFile: unknown option "overwrite" \(its options: input, output, force, /);
    await refused(dmaCopy, { f: at("in") }, /^dmaCopy: unknown option "f": the CLI's -f\/--file is the option "file" here$/);
  });

  test("wrong types name the option and the type expected; a missing options object is said", { timeout: 30_000 }, async () => {
    await refused(compressFile, { input: 5, output: at("c.gz") }, /^compressFile: option "input" must be a string, got number 5$/);
    await refused(compressFile, { input: at("in"), output: at("c.gz"), chunkSize: "64k" }, /^compressFile: option "chunkSize" must be a whole number \(0 or more\), got a string/);
    await refused(ecEncode, { input: at("in"), outputDir: at("blocks"), dataBlocks: 3, redundancyBlocks: 2, matrix: "identity" }, /^ecEncode: option "matrix" must be one of "cauchy", "vandermonde"/);
    await refused(ecEncode, { input: at("in"), outputDir: at("blocks"), dataBlocks: 3 }, /^ecEncode: option "redundancyBlocks" is missing/);
    await refused(decompressFile, { input: at("in"), output: at("d.out"), signal: true }, /^decompressFile: option "signal" must be an AbortSignal, got boolean true/);
    await refused(decompressFile, undefined, /^decompressFile: expects an options object, got undefined$/);
    await refused(runComchClient, { timeoutMs: "10" }, /^runComchClient: option "timeoutMs" must be a finite number/);
    await refused(runComchServer, { name: "x" }, /^runComchServer: option "repPci" is missing/);
    await refused(streamProducer, { count: 1, size: 8, inflight: 1, timeoutMs: 1000, pciAddr: 3 }, /^streamProducer: option "pciAddr" must be a string/);
    await refused(rdmaCopy, { role: "copy" }, /^rdmaCopy: option "role" must be one of "send", "receive"/);
    // the steps too (synchronous ones throw at once)
    await refused((o) => Promise.resolve(exportMmap(o)), { device: {}, mem: {} }, /^exportMmap: unknown option "mem" \(its options: device, memory, writable, length\)$/);
    await refused(dmaTransfer, { dma: {}, pe: {}, inventory: {}, from: {}, to: {}, length: -1 }, /^dmaTransfer: option "length" must be a whole number/);
  });

  test("nothing was created by the refused calls", { timeout: 30_000 }, () => {
    assert.deepEqual(readdirSync(dir), ["in"]);
  });
});
