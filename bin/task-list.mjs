/** Every task a user runs as `npx doca-ts TASK` (tests/pkg-npm.test.ts checks it against deno.json's tasks of tasks/). */
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
  "storage-relay",
];
