/**
 * Every task a user runs as `npx doca-ts TASK`: the one list. tests/pkg-npm.test.ts checks it against deno.json's tasks
 * of tasks/, every tasks/*.ts with a shebang and tsconfig.package.json's files (what `npm pack` builds), so a new
 * task missing from any of them fails there.
 */
export const TASKS = [
  "dma-copy",
  "dma-local-copy",
  "comch-server",
  "comch-client",
  "comch-stream",
  "devices",
  "doctor",
  "demo",
  "rdma-copy",
  "rdma-ping",
  "rdma-demo",
  "compress",
  "decompress",
  "sha",
  "encrypt",
  "decrypt",
  "ec-encode",
  "ec-recover",
  "storage-relay",
];
