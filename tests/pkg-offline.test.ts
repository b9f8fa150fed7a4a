/**
 * The offline archive (scripts/pack-offline.ts) for x86-64: built from this repository, unpacked in an empty folder
 * and run there with no network — a fresh network namespace (`unshare -rn`) when the machine allows one, otherwise
 * npm/registry/proxy variables pointed at an unreachable address — and with PATH holding only sh, tar, gzip,
 * dirname and sed (no node, npm, deno or bun). `devices`, `dma-local-copy` and a user script importing "doca-ts"
 * must work. The archive's runtime is Deno whichever runner runs this file, so it is built and exercised once,
 * under the Deno runner.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { currentRuntime } from "./helpers/spawn-runtime.ts";
import { repoRoot } from "./helpers/pkg/scratch.ts";

const work = mkdtempSync(join(tmpdir(), "doca-ts-offline-test-"));
after(() => rmSync(work, { recursive: true, force: true }));

function which(tool: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  return undefined;
}

const USER_SCRIPT = `import { Access, BufInventory, Device, Dma, listDevices, Mmap, NativeMemory, ProgressEngine } from "doca-ts";
using dev = Device.open(listDevices()[0].pciAddr);
using pe = new ProgressEngine();
using src = NativeMemory.alloc(4096), dst = NativeMemory.alloc(4096);
src.bytes.fill(42);
using a = Mmap.create({ memory: src, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using b = Mmap.create({ memory: dst, permissions: Access.LOCAL_READ_WRITE, devices: [dev] });
using inv = new BufInventory(2);
using dma = new Dma(dev, pe);
await dma.memcpy(inv.bufByData(a, src.address, 4096), inv.bufByAddr(b, dst.address, 4096));
console.log(dst.bytes.every((x) => x === 42) ? "user script: copy verified" : "user script: MISMATCH");
`;

describe("offline archive", () => {
  // It printed Deno's uncaught TypeError with a stack trace and exited 1
  test("npm run pack:offline -- --bogus: one line naming the flag, exit 2", { timeout: 60_000 }, () => {
    const deno = join(repoRoot, "node_modules", "deno", "deno");
    const r = spawnSync(deno, ["run", "-A", "scripts/pack-offline.ts", "--bogus"], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 50_000,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr, "pack-offline: Unknown option '--bogus' (see --help)\n");
  });

  test("x86-64 archive: unpacked in an empty folder, runs devices, a local copy and a user script offline", {
    skip: currentRuntime() !== "deno" && "the archive runs Deno; built and tested once, under the Deno runner",
    timeout: 600_000,
  }, () => {
    const archive = join(work, "offline.tar.gz");
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    const built = spawnSync(deno, ["run", "-A", "scripts/pack-offline.ts", "--arch", "x86_64", "--out", archive], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 300_000,
    });
    assert.equal(built.status, 0, `${built.stdout}\n${built.stderr}`);
    assert.match(built.stdout, /software device prebuilt for x86_64/);

    // An empty folder, a PATH with nothing but the unpacking tools, no network.
    const empty = join(work, "target");
    const tools = join(work, "tools");
    mkdirSync(empty);
    mkdirSync(tools);
    for (const tool of ["sh", "tar", "gzip", "dirname", "sed"]) {
      const path = which(tool);
      assert.ok(path, `${tool} is needed to unpack`);
      symlinkSync(path, join(tools, tool));
    }
    writeFileSync(join(empty, "copy.ts"), USER_SCRIPT);
    const unshare = which("unshare");
    const isolated = !!unshare && spawnSync(unshare, ["-rn", "true"]).status === 0;
    const unreachable = "http://127.0.0.1:9";
    const env = {
      PATH: tools,
      HOME: empty,
      ...(isolated ? {} : { npm_config_registry: unreachable, HTTP_PROXY: unreachable, HTTPS_PROXY: unreachable, NPM_CONFIG_OFFLINE: "true" }),
    };
    const script = `tar xzf ${archive} && ./doca-ts-offline-x86_64/doca-ts devices && ` +
      `./doca-ts-offline-x86_64/doca-ts dma-local-copy && ./doca-ts-offline-x86_64/doca-ts run copy.ts`;
    const command = isolated ? [unshare!, "-rn", join(tools, "sh"), "-c", script] : [join(tools, "sh"), "-c", script];
    const ran = spawnSync(command[0], command.slice(1), { cwd: empty, env, encoding: "utf8", timeout: 180_000 });
    const how = isolated ? "unshare -rn (an empty network namespace)" : "registry/proxy at an unreachable address";
    assert.equal(ran.status, 0, `[${how}] ${ran.error ?? ""}\n${ran.stdout}\n${ran.stderr}`);
    assert.match(ran.stdout, /0000:b1:00\.1\s+mlx5_0/);
    assert.match(ran.stdout, /buffers are equal/);
    assert.match(ran.stdout, /user script: copy verified/);
    assert.match(ran.stdout, /DOCA 3\.\d+\.\d+-sim from .*doca-ts-offline-x86_64\/lib\/doca-ts\/build\/sim\/lib/);
    process.stderr.write(`offline archive test: network cut with ${how}\n`);
  });
});
