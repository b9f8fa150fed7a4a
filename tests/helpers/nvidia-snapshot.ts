/**
 * A local snapshot of NVIDIA-DOCA/doca-samples for the tests that build NVIDIA's programs unmodified against the
 * software device. Nothing of NVIDIA's is in this repository: the snapshot is named by DOCA_SAMPLES_REPO (a checkout
 * of https://github.com/NVIDIA-DOCA/doca-samples, or its git directory). Without one those tests skip, saying so.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";

/** The snapshot DOCA_SAMPLES_REPO names (a checkout or a git directory); undefined when it names none. */
export function findSnapshot(): string | undefined {
  const dir = process.env.DOCA_SAMPLES_REPO;
  return dir && (existsSync(join(dir, "samples")) || existsSync(join(dir, "HEAD"))) ? dir : undefined;
}

/** Why the NVIDIA tests skip without a snapshot. */
export const NO_SNAPSHOT =
  "no snapshot of NVIDIA-DOCA/doca-samples: set DOCA_SAMPLES_REPO to a checkout of https://github.com/NVIDIA-DOCA/doca-samples (or its git directory)";

/** Copies `parts` (paths inside the repository) of the snapshot into `dest`, keeping their paths. */
export function extractSnapshot(snapshot: string, parts: string[], dest: string): void {
  if (existsSync(join(snapshot, "samples"))) {
    for (const p of parts) cpSync(join(snapshot, p), join(dest, p), { recursive: true });
    return;
  }
  // a git directory: no work tree is needed
  const archive = spawnSync("git", ["--git-dir", snapshot, "archive", "HEAD", ...parts], { maxBuffer: 1 << 28 });
  assert.equal(archive.status, 0, `git archive failed: ${archive.stderr}`);
  const untar = spawnSync("tar", ["-x", "-C", dest], { input: archive.stdout });
  assert.equal(untar.status, 0, `tar failed: ${untar.stderr}`);
}
