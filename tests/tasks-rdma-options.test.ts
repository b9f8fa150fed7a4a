/** rdma-copy / rdma-ping flags: what they accept, and the flag each refusal names (no device needed). */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { parseRdmaCopyArgs } from "../tasks/rdma-copy/options.ts";
import { parseRdmaPingArgs } from "../tasks/rdma-ping.ts";
import { parseEndpoint } from "../tasks/rdma/link.ts";

const run = (argv: string[]) => {
  const parsed = parseRdmaCopyArgs(argv, { INIT_CWD: "/work" });
  assert.equal(parsed.kind, "run");
  return (parsed as Extract<typeof parsed, { kind: "run" }>).options;
};

describe("tasks: rdma-copy options", () => {
  test("sender with RDMA CM defaults", () => {
    const o = run(["--send", "big.bin", "--connect", "10.0.0.2:7471"]);
    assert.equal(o.role, "send");
    assert.equal(o.file, "/work/big.bin");
    assert.deepEqual(o.endpoint, { listen: false, host: "10.0.0.2", port: 7471 });
    assert.equal(o.exchange, "cm");
    assert.equal(o.mode, "write");
    assert.equal(o.chunk, 1024 * 1024);
    assert.equal(o.slots, 8);
  });

  test("receiver listening, IPv6 and read mode on the sender", () => {
    assert.deepEqual(run(["--receive", "/tmp/x", "--listen", "7471"]).endpoint, { listen: true, host: undefined, port: 7471 });
    assert.deepEqual(run(["--receive", "/tmp/x", "--listen", "127.0.0.1:9"]).endpoint, { listen: true, host: "127.0.0.1", port: 9 });
    assert.deepEqual(run(["--send", "/tmp/x", "--connect", "[::1]:7471", "--mode", "read"]).endpoint, { listen: false, host: "::1", port: 7471 });
    assert.equal(run(["--send", "/tmp/x", "--connect", "[::1]:7471", "--mode", "read", "--exchange", "tcp"]).exchange, "tcp");
  });

  const refusals: [string[], RegExp][] = [
    [["--connect", "1.2.3.4:5"], /--send FILE and --receive FILE/],
    [["--send", "a", "--receive", "b", "--listen", "1"], /exactly one of --send/],
    [["--send", "a"], /--listen \[ADDR:\]PORT and --connect/],
    [["--send", "a", "--listen", "1", "--connect", "1.2.3.4:5"], /exactly one of --listen/],
    [["--send", "a", "--listen", "0"], /--listen: .*1 to 65535/],
    [["--send", "a", "--listen", "65536"], /--listen/],
    [["--send", "a", "--connect", "7471"], /--connect: expected HOST:PORT/],
    [["--send", "a", "--connect", "example.com:7471"], /--connect: HOST must be an IPv4 or IPv6 address/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--mode", "copy"], /--mode: expected write or read/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--exchange", "udp"], /--exchange: expected cm or tcp/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--chunk", "0"], /--chunk/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--chunk", "1e6"], /--chunk/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--chunk", String(128 * 1024 * 1024)], /--chunk/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--slots", "33"], /--slots/],
    [["--send", "a", "--connect", "1.2.3.4:5", "--timeout", "-1"], /--timeout/],
    [["--receive", "a", "--listen", "5", "--mode", "read"], /--mode: only the sender/],
    [["--receive", "a", "--listen", "5", "--slots", "2"], /--slots: only the sender/],
    [["--send", "", "--listen", "5"], /--send: expected a file path/],
    [["--send", "a", "--listen", "5", "--bogus"], /bogus/],
  ];
  for (const [argv, message] of refusals) {
    test(`refuses ${argv.join(" ")}`, () => {
      assert.throws(() => parseRdmaCopyArgs(argv, {}), (e: Error) => e.name === "UsageError" && message.test(e.message));
    });
  }

  test("--help", () => assert.deepEqual(parseRdmaCopyArgs(["--help"], {}), { kind: "help" }));
});

describe("tasks: rdma-ping options", () => {
  test("defaults and limits", () => {
    const p = parseRdmaPingArgs(["--connect", "127.0.0.1:7472"]);
    assert.equal(p.kind, "run");
    const o = (p as Extract<typeof p, { kind: "run" }>).options;
    assert.equal(o.count, 1000);
    assert.equal(o.size, 64);
    assert.throws(() => parseRdmaPingArgs(["--connect", "127.0.0.1:7472", "--size", "4097"]), /--size/);
    assert.throws(() => parseRdmaPingArgs(["--listen", "7472", "--count", "5"]), /--count: only the connecting side/);
    assert.throws(() => parseRdmaPingArgs(["--listen", "7472", "--exchange", "x"]), /--exchange/);
  });

  test("endpoints", () => {
    assert.deepEqual(parseEndpoint("[::]:80", undefined), { listen: true, host: "::", port: 80 });
    assert.throws(() => parseEndpoint(undefined, undefined), /exactly one/);
  });
});
