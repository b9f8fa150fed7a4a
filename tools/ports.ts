/**
 * A port for a test's (or benchmarks/end-to-end.ts's) server to listen on: random from 20000 up to the kernel's
 * ephemeral range. Outgoing connections take their local ports from that range, so a listener inside it can find its
 * port taken at any moment (DOCA_ERROR_IN_USE: seen once in CI at 47994); below it, only another listener can collide.
 */
import { readFileSync } from "node:fs";
import { DocaError } from "../mod.ts";

export function testPort(): number {
  let ephemeral = 32_768;
  try {
    ephemeral = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || ephemeral;
  } catch { /* not Linux: the usual start */ }
  const top = ephemeral > 21_000 ? ephemeral : 32_768;
  return 20_000 + Math.floor(Math.random() * (top - 20_000));
}

/** Listens `rdma` on a testPort(), trying another when that one is taken (DOCA_ERROR_IN_USE); returns the port. */
export function listenOnTestPort(rdma: { listen(port: number): void }): number {
  for (let tries = 0; ; tries++) {
    const candidate = testPort();
    try {
      rdma.listen(candidate);
      return candidate;
    } catch (e) {
      if (tries >= 20 || !(e instanceof DocaError && e.docaName === "DOCA_ERROR_IN_USE")) throw e;
    }
  }
}
