/**
 * A local snapshot of NVIDIA-DOCA/doca-samples for the tests that build NVIDIA's programs unmodified against the
 * software device. Nothing of NVIDIA's is in this repository: DOCA_SAMPLES_REPO names the snapshot (a clone's git
 * directory, e.g. doca-samples/.git or a bare clone, or a checkout). Without it those tests skip, saying so.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";

/** The snapshot DOCA_SAMPLES_REPO names: a git directory or a checkout; undefined when unset or not a snapshot. */
export function findSnapshot(): string | undefined {
  const named = process.env.DOCA_SAMPLES_REPO;
  if (!named) return undefined;
  if (existsSync(join(named, "samples")) || existsSync(join(named, "HEAD"))) return named;
  return undefined;
}

/** Why the NVIDIA tests skip without a snapshot. */
export const NO_SNAPSHOT = process.env.DOCA_SAMPLES_REPO
  ? `DOCA_SAMPLES_REPO=${process.env.DOCA_SAMPLES_REPO} is not a snapshot of NVIDIA-DOCA/doca-samples (a git directory or a checkout with samples/)`
  : "no snapshot of NVIDIA-DOCA/doca-samples: set DOCA_SAMPLES_REPO to a clone of it (its git directory or checkout)";

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
