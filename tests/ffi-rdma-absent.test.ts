/**
 * RDMA is optional: a DOCA without libdoca_rdma (an install without it, a 2.7 build) still loads and runs DMA;
 * so are Compress and SHA (without libdoca_compress / libdoca_sha they say NOT_SUPPORTED);
 * Rdma then says NOT_SUPPORTED naming the missing function, and devices show no RDMA capabilities. Run in a child process against a
 * folder holding only libdoca_common/dma/comch of the software device.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simDir } from "./helpers/sim-env.ts";
import { loadDoca } from "../mod.ts";
import { spawnRuntime } from "./helpers/spawn-runtime.ts";

test("ffi: DOCA without libdoca_rdma loads, DMA works, RDMA says NOT_SUPPORTED", { timeout: 120_000 }, async () => {
  const info = loadDoca();
  const dir = mkdtempSync(join(tmpdir(), "doca-ts-nordma-"));
  try {
    for (const lib of ["common", "dma", "comch"] as const) copyFileSync(info.files[lib], join(dir, `libdoca_${lib}.so`));
    const child = spawnRuntime(new URL("./helpers/rdma-absent-child.ts", import.meta.url), {
      env: { DOCA_LIB_DIR: dir, DOCA_SIM_DIR: simDir },
    });
    const line = await child.readLine(90_000).catch((e) => {
      throw new Error(`${e.message}; child stderr: ${child.stderr}`);
    });
    assert.equal(await child.exited, 0, child.stderr);
    const r = JSON.parse(line);
    assert.equal(r.rdmaFile, null);
    assert.equal(r.copied, true);
    assert.equal(r.caps, null);
    assert.match(r.rdmaError, /^DOCA_ERROR_NOT_SUPPORTED doca_rdma_/);
    assert.deepEqual(r.accelFiles, [null, null]);
    assert.match(r.accelErrors[0], /^DOCA_ERROR_NOT_SUPPORTED doca_compress_cap_task_/);
    assert.match(r.accelErrors[1], /^DOCA_ERROR_NOT_SUPPORTED doca_sha_cap_task_/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
