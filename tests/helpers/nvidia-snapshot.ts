/**
 * A local snapshot of NVIDIA-DOCA/doca-samples for the tests that build NVIDIA's programs unmodified against the
 * software device. Nothing of NVIDIA's is in this repository: the snapshot is the `fetch` tool's mirror (a git
 * directory), or DOCA_SAMPLES_REPO (a git directory or a checkout). Without one those tests skip, saying so.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "./spawn-runtime.ts";

/** Where a snapshot may be: a git directory (the mirror) or a checkout; undefined when there is none. */
export function findSnapshot(): string | undefined {
  const candidates = [
    process.env.DOCA_SAMPLES_REPO,
    join(repoRoot, "..", ".mirror", "NVIDIA-DOCA+doca-samples", "repo"),
    "/work/.mirror/NVIDIA-DOCA+doca-samples/repo",
  ].filter((c): c is string => !!c);
  return candidates.find((c) => existsSync(join(c, "samples")) || existsSync(join(c, "HEAD")));
}

/** Why the NVIDIA tests skip without a snapshot. */
export const NO_SNAPSHOT = "no snapshot of NVIDIA-DOCA/doca-samples (set DOCA_SAMPLES_REPO, or fetch github:NVIDIA-DOCA/doca-samples)";

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
