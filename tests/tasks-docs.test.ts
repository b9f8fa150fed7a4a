/**
 * Docs that work as written (issue 12 §5, issue 18 §6): every ```sh block of README.md, ffi/README.md,
 * tasks/README.md and docs/*.md has a
 * plan here, and the test fails on a block without one (so a new command in the docs needs a test) or a plan
 * without its block (so a removed command takes its plan along). The plans run the blocks as a newcomer would, in a
 * shell from the repository root inside a pseudo-terminal, with the PATH of a shell that has nothing extra on it (no
 * node_modules/.bin, no deno), with scratch folders substituted for the /tmp paths the docs use; the one block
 * that needs a BlueField is checked by parsing its flags. Running the commands is done once, under Deno (the
 * commands start their own runtimes); Bun and Node check the inventory.
 */
import { after, describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../tasks/common/run-pair.ts";
import { parseDmaCopyArgs } from "../tasks/dma-copy/options.ts";
import { noRdma } from "./helpers/rdma-pair.ts";
import { testPort } from "../tools/ports.ts";

const DOCS = [
  "README.md",
  "ffi/README.md",
  "tasks/README.md",
  ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`),
];
const onDeno = typeof (globalThis as Record<string, unknown>).Deno !== "undefined";
const scratch: string[] = [];
after(() => scratch.forEach((d) => rmSync(d, { recursive: true, force: true })));
function folder(tag: string): string {
  const d = mkdtempSync(join(tmpdir(), `doca-ts-docs-${tag}-`));
  scratch.push(d);
  return d;
}

function blocks(file: string, lang: string): string[] {
  const text = readFileSync(join(repoRoot, file), "utf8");
  return [...text.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]);
}

/**
 * PATH as a newcomer's shell has it: without the folders `npm run` and `deno task` add (node_modules/.bin, Deno's
 * own folder), so a bare `deno` or `bun` in a doc fails here as it would for them.
 */
function plainPath(): string {
  return (process.env.PATH ?? "/usr/bin:/bin").split(":").filter((d) => d && !/node_modules|[\\/]\.deno[\\/]|[\\/]deno$/.test(d)).join(":");
}

/**
 * Runs a block in bash from the repository root, inside a pseudo-terminal (`script -qec`, as in an interactive
 * shell: a permission prompt or a TTY-only path shows up) unless it reads stdin, with the plain PATH.
 */
/** Terminal escape sequences (CSI …): built from a string so the pattern has no literal control character. */
const ANSI = new RegExp(String.fromCharCode(27) + "\\[[0-9;?]*[A-Za-z]", "g");
/** CSI n G (cursor to a column: npx's spinner redraws with it): a fresh line, as far as reading the output goes. */
const TO_COLUMN = new RegExp(String.fromCharCode(27) + "\\[[0-9]*G", "g");

function sh(script: string, opts: { env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {}) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const quoted = `bash -c '${script.replace(/'/g, `'\\''`)}'`;
    const [cmd, args] = opts.stdin === undefined ? ["script", ["-qec", quoted, "/dev/null"]] : ["bash", ["-c", script]];
    const env: Record<string, string | undefined> = { ...process.env, PATH: plainPath(), ...opts.env };
    for (const k of Object.keys(env)) if (k.startsWith("npm_") || k === "INIT_CWD" || k === "DENO_EXEC_PATH") delete env[k];
    const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stdin.end(opts.stdin ?? "");
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 240_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      // The terminal's line ends, colours (console.log colours numbers on a TTY) and redrawn lines (npx's spinner,
      // progress bars: a lone \r or a move to column 1) are not the docs' business: one line per redraw, escapes removed.
      const lines = out.replace(TO_COLUMN, "\n").replace(ANSI, "").replaceAll("\r\n", "\n").replaceAll("\r", "\n");
      resolve({ code, out: lines });
    });
  });
}

async function runs(script: string, expect: RegExp[], opts?: Parameters<typeof sh>[1]) {
  const r = await sh(script, opts);
  assert.equal(r.code, 0, `exit ${r.code}:\n${script}\n---\n${r.out}`);
  for (const e of expect) assert.match(r.out, e, r.out);
  return r.out;
}

/** How each block is checked, keyed by the block's first line. */
const plans: Record<string, (block: string, t?: TestContext) => Promise<void>> = {
  // Quick start. `npm test` is the command that runs this very test (CI: .ci/run); the demo runs here.
  "npm run demo   # a host process and a DPU process copy a file both ways over DMA, and check every byte": async (block) => {
    assert.match(block, /^npm test /m);
    assert.match(readFileSync(join(repoRoot, "package.json"), "utf8"), /"test": /);
    await runs("npm run demo", [/demo: every copy verified/]);
  },
  "npm run deno -- task dma-copy --help                     # Deno: `npm run deno --` stands for `deno`": async (block) => {
    const out = await runs(block, [/0000:b1:00\.1/], { env: { DOCA_SIM_DIR: folder("rt") } });
    assert.equal(out.match(/^Usage: dma-copy /gm)?.length, 3, `Deno, Bun and Node each printed dma-copy's help:\n${out}`);
  },
  "/path/to/doca-ts/node_modules/deno/deno run --no-prompt --allow-ffi --allow-env --allow-read my-copy.mts": async (block) => {
    // The API example of README.md, saved outside the repository as the docs describe.
    const dir = folder("own");
    const example = blocks("README.md", "ts")[0].replaceAll(`from "./mod.ts"`, `from "${join(repoRoot, "mod.ts")}"`);
    assert.match(example, /console\.log\(dst\.bytes\[4095\]\); \/\/ 7/);
    writeFileSync(join(dir, "my-copy.mts"), example);
    const lines = block.replaceAll("/path/to/doca-ts", repoRoot).trim().split("\n");
    assert.equal(lines.length, 3);
    for (const line of lines) await runs(`cd ${dir} && ${line}`, [/^7$/m], { env: { DOCA_SIM_DIR: dir } });
    // The other spelling for Node: a .ts file next to a package.json of "type": "module".
    copyFileSync(join(dir, "my-copy.mts"), join(dir, "my-copy.ts"));
    writeFileSync(join(dir, "package.json"), `{"type": "module"}\n`);
    await runs(`cd ${dir} && ${lines[2].replace("my-copy.mts", "my-copy.ts")}`, [/^7$/m], { env: { DOCA_SIM_DIR: dir } });
  },
  // Needs a BlueField: the flags must parse, and -r alone must select the DPU side.
  "npm run deno -- task dma-copy -f /tmp/received.bin -p 03:00.1 -r b1:00.1   # on the DPU: the Comch server, the DMA engine": (block) => {
    const [dpuLine, hostLine] = block.trim().split("\n").map((l) => l.replace(/#.*/, "").trim().split(/\s+/).slice(6));
    const dpu = parseDmaCopyArgs(dpuLine, {});
    const host = parseDmaCopyArgs(hostLine, {});
    assert.ok(dpu.kind === "run" && dpu.options.side === "dpu" && dpu.options.repPci === "b1:00.1");
    assert.ok(host.kind === "run" && host.options.side === "host" && host.options.pciAddr === "b1:00.1");
    return Promise.resolve();
  },
  "mkdir -p /tmp/doca-demo/host /tmp/doca-demo/dpu && head -c 5000000 /dev/urandom > /tmp/doca-demo/host/big.bin": async (block) => {
    const dir = folder("pair");
    await runs(block.replaceAll("/tmp/doca-demo", dir), [/dma-copy: host side: sent .*big\.bin/]);
    assert.deepEqual(readFileSync(join(dir, "dpu", "big.bin")), readFileSync(join(dir, "host", "big.bin")));
  },
  // The two-machine RDMA example, run on one machine: machine A's address becomes 127.0.0.1 (and a free port),
  // the paths scratch files; A's command runs in the background until it says it listens, then B's.
  "# A: receive into /tmp/copy.bin, waiting on port 7471 (RDMA CM)": async (block, t) => {
    if (noRdma) return void t!.skip(noRdma);
    const dir = folder("rdma");
    const port = String(testPort());
    const [a, b] = block.split("\n").filter((l) => l && !l.startsWith("#"));
    assert.match(a, /--receive \/tmp\/copy\.bin --listen 7471$/);
    assert.match(b, /--send \.\/big\.bin --connect 192\.0\.2\.10:7471$/);
    writeFileSync(join(dir, "big.bin"), new Uint8Array(3_000_000).map((_, i) => (i * 7) & 0xff));
    const script = `${a.replace("/tmp/copy.bin", join(dir, "copy.bin")).replace("7471", port)} > ${dir}/a.log 2>&1 & ` +
      `for i in $(seq 600); do grep -q listening ${dir}/a.log && break; sleep 0.1; done; ` +
      `${b.replace("./big.bin", join(dir, "big.bin")).replace("192.0.2.10:7471", `127.0.0.1:${port}`)} && wait $! && cat ${dir}/a.log`;
    await runs(script, [/rdma-copy: sent .*big\.bin.*committed by the receiver/, /rdma-copy: received .*copy\.bin/], { env: { DOCA_SIM_DIR: folder("rdma-sim") } });
    assert.deepEqual(readFileSync(join(dir, "copy.bin")), readFileSync(join(dir, "big.bin")));
  },
  "npm run deno -- task repl      # or, with a deno of your own: deno task repl": async (block) => {
    await runs(block, [/devices: 0000:b1:00\.1/, /a\\\\x1b/], { stdin: `tasks.printable("a\\x1b")\n`, env: { DOCA_SIM_DIR: folder("repl") } });
  },
  "npm run deno -- test -A tests/ffi-dma-local.test.ts": async (block) => {
    for (const line of block.trim().split("\n")) await runs(line, [], { env: { DOCA_SIM_DIR: folder("ffi") } });
  },
  "export DOCA_SIM_DIR=/tmp/doca-steps; mkdir -p $DOCA_SIM_DIR && head -c 10000 /dev/urandom > $DOCA_SIM_DIR/in.bin": async (block) => {
    await runs(block.replaceAll("/tmp/doca-steps", folder("steps")), [/the DPU read the host's bytes/]);
  },
  // "Use it in your own project": pack here, install into a project beside it, import "doca-ts" from Bun and plain Node.
  "npm pack                                   # in this repository: doca-ts-0.1.0.tgz (until it is on npm)": async (block) => {
    const dir = folder("pkg");
    const [pack, install] = block.trim().split("\n").map((l) => l.replace(/#.*/, "").trim());
    await runs(`${pack} --pack-destination ${dir}`, [/doca-ts-\d+\.\d+\.\d+\.tgz/]);
    await runs(`mkdir ${dir}/my-project && ${install.replace("../doca-ts/", `${dir}/`)} --prefer-offline --no-audit --no-fund`.replace("cd my-project", `cd ${dir}/my-project`), []);
    const script = blocks("docs/USAGE.md", "ts").find((b) => b.includes(`from "doca-ts"`));
    assert.ok(script, "docs/USAGE.md shows the import");
    const text = `${script}console.log(loadDoca().version, listDevices().length > 0, typeof Device);\n`;
    writeFileSync(join(dir, "my-project", "my-script.ts"), text);
    writeFileSync(join(dir, "my-project", "my-script.mjs"), text); // the same line is plain JavaScript
    const env = { DOCA_SIM_DIR: dir, XDG_CACHE_HOME: join(dir, "cache") };
    const bun = join(repoRoot, "node_modules", ".bin", "bun");
    await runs(`cd ${dir}/my-project && ${bun} my-script.ts`, [/-sim true function/], { env });
    await runs(`cd ${dir}/my-project && node my-script.mjs`, [/-sim true function/], { env }); // no loader
  },
  // The offline archive: tests/pkg-offline.test.ts builds one (x86-64, for this machine) with the script behind
  // `npm run pack:offline` and runs the launcher the second block names, with no network; here: the names agree.
  "npm run pack:offline                       # build/doca-ts-offline-0.1.0-aarch64.tar.gz  (--arch x86_64 for a host)": (block) => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string; scripts: Record<string, string> };
    assert.match(pkg.scripts["pack:offline"], /scripts\/pack-offline\.ts/);
    assert.ok(block.includes(`build/doca-ts-offline-${pkg.version}-aarch64.tar.gz`), "the archive name has the version");
    assert.match(readFileSync(join(repoRoot, "tests", "pkg-offline.test.ts"), "utf8"), /scripts\/pack-offline\.ts/);
    assert.match(readFileSync(join(repoRoot, "scripts", "pack-offline.ts"), "utf8"), /doca-ts-offline-<arch>\/\n \*\s+doca-ts\s+launcher/);
    return Promise.resolve();
  },
  "tar xzf doca-ts-offline-0.1.0-aarch64.tar.gz": (block) => {
    const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
    assert.ok(block.includes(`tar xzf doca-ts-offline-${version}-aarch64.tar.gz`));
    assert.match(block, /^\.\/doca-ts-offline-aarch64\/doca-ts doctor/m);
    return Promise.resolve();
  },
  // doctor on this machine (the software device); `--peer` is run against a live server by tests/tasks-doctor.test.ts.
  "npm run deno -- task doctor               # or: node_modules/.bin/bun tasks/doctor.ts, node --import tsx tasks/doctor.ts; --json for one document": async (block) => {
    const first = block.split("\n")[0].replace(/#.*/, "").trim();
    const r = await sh(first, { env: { DOCA_SIM_DIR: folder("doctor") } });
    assert.ok(r.code === 0 || r.code === 1, `doctor exits 0, or 1 with problems: ${r.code}\n${r.out}`);
    assert.match(r.out, /software device|3\.\d+\.\d+-sim/, r.out);
    assert.match(readFileSync(join(repoRoot, "tests", "tasks-doctor.test.ts"), "utf8"), /"--peer", name/);
  },
  // A DOCA C program on the software device, built and run as the README says (binary into a scratch folder).
  "npm run deno -- task sim:build            # build/sim/lib/libdoca_{common,dma,comch,rdma,compress,sha,erasure_coding,aes_gcm}.so": async (block) => {
    // the libraries named are those the build makes: one per folder of sim/src
    const named = /libdoca_\{([^}]*)\}\.so/.exec(block)![1].split(",").sort();
    assert.deepEqual(named, simLibraries(), "the comment names every library the build makes");
    const dir = folder("cprog");
    const script = block.replaceAll("-o local_dma", `-o ${dir}/local_dma`).replace("./local_dma", `${dir}/local_dma`);
    const out = await runs(script, [], { env: { DOCA_SIM_DIR: dir } });
    assert.doesNotMatch(out, /strict:/, "the example makes no strict-mode report");
  },
  // docs/FAULTS.md: every line as written, with one small fault file standing for the glob (the whole fault suite
  // is CI's job, not this test's); the DOCA_TS_SLOW line runs the same way with its variable.
  "npm run deno -- task sim:build": async (block) => {
    for (const line of block.trim().split("\n")) {
      const one = line.replace(/#.*/, "").trim().replace("tests/fault-*.test.ts", "tests/fault-permissions.test.ts")
        .replace(/tests\/fault-$/, "tests/fault-permissions");
      assert.ok(one.includes("sim:build") || one.includes("fault-permissions"), one);
      await runs(one, [], { env: { DOCA_SIM_DIR: folder("faults") } });
    }
  },
};

/** The libraries `sim:build` makes: libdoca_<folder>.so for every folder of sim/src (ffi/load/sim-build/builder.ts). */
function simLibraries(): string[] {
  return readdirSync(join(repoRoot, "sim", "src"), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
}

describe("docs/USAGE.md names every library the software device builds", () => {
  test("its list of build/sim/lib/libdoca_{…}.so is the folders of sim/src", () => {
    const usage = readFileSync(join(repoRoot, "docs", "USAGE.md"), "utf8");
    const lists = [...usage.matchAll(/libdoca_\{([^}]*)\}\.so/g)].map((m) => m[1].split(",").sort());
    assert.ok(lists.length > 0, "docs/USAGE.md names the built libraries");
    for (const list of lists) assert.deepEqual(list, simLibraries());
  });
});

describe("README.md's bare deno and bun commands work after the quick start", () => {
  // The quick start installs Deno and Bun into node_modules only: README's `deno task NAME` and `bun my-copy.ts`
  // were "command not found" in a newcomer's shell (and `npx deno` too), with no word on what to type instead.
  test("it says where they are before its first bare use, and its PATH line finds both", { timeout: 30_000 }, () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const says = readme.indexOf("npm run deno -- task");
    const pathLine = /`(export PATH=\$PWD\/node_modules\/deno:[^`]*)`/.exec(readme);
    assert.ok(says > 0 && pathLine, "README.md names `npm run deno -- task` and an `export PATH=…` line");
    for (const first of ["`deno task dma-copy", "`deno run -A my-copy.ts`", "`bun my-copy.ts`"]) {
      const at = readme.indexOf(first);
      assert.ok(at > 0, `README.md still shows ${first}`);
      assert.ok(says < at && pathLine.index < at, `README.md says how to run ${first} without deno or bun on PATH before it shows it`);
    }
    const r = spawnSync("bash", ["-c", `${pathLine[1]} && command -v deno && command -v bun`], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: process.env.HOME ?? "/" },
      timeout: 20_000,
    });
    assert.equal(r.status, 0, `${pathLine[1]}: ${r.stderr}`);
    assert.deepEqual(r.stdout.trim().split("\n"), [join(repoRoot, "node_modules", "deno", "deno"), join(repoRoot, "node_modules", ".bin", "bun")]);
  });
});

describe("what the docs' commands leave in the repository is not shown as new work", () => {
  // docs/USAGE.md has you run `npm pack` here; its tarball showed up in `git status`, one `git add -A` from a commit
  test("git ignores npm pack's tarball", { skip: !existsSync(join(repoRoot, ".git")) && "not a git checkout", timeout: 30_000 }, () => {
    const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
    const r = spawnSync("git", ["check-ignore", "-q", `doca-ts-${version}.tgz`], { cwd: repoRoot, timeout: 20_000 });
    assert.equal(r.status, 0, `git does not ignore doca-ts-${version}.tgz (${r.error?.message ?? r.stderr})`);
  });
});

describe("every table of the docs renders", () => {
  test("each run of table rows begins with a header and its |---| line (a blank line inside a table splits it)", () => {
    const docs = [...DOCS, ...readdirSync(join(repoRoot, "sim")).filter((f) => f.endsWith(".md")).map((f) => `sim/${f}`)];
    for (const file of new Set(docs)) {
      const lines = readFileSync(join(repoRoot, file), "utf8").split("\n");
      let fenced = false;
      lines.forEach((line, i) => {
        if (line.startsWith("```")) fenced = !fenced;
        const row = (l: string | undefined) => l !== undefined && l.startsWith("|");
        if (fenced || !row(line) || row(lines[i - 1])) return;
        assert.match(lines[i + 1] ?? "", /^\|\s*:?-+/, `${file}:${i + 1}: a table row without a header above it`);
      });
    }
  });
});

const inventory = DOCS.flatMap((file) => blocks(file, "sh").map((block) => ({ file, block, key: block.split("\n")[0] })));

describe("package-lock.json is current: a fresh clone's `npm ci` leaves it as committed", () => {
  test("the lock's root package says what package.json says (bin, dependencies, engines, ...)", () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as Record<string, unknown>;
    const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, Record<string, unknown>>;
    };
    const root = lock.packages[""];
    assert.ok(root, "package-lock.json has a root package entry");
    // The fields npm copies into the lock's root entry: any one out of date and `npm install` rewrites the file
    for (const field of ["name", "version", "license", "bin", "dependencies", "devDependencies", "optionalDependencies", "engines"]) {
      assert.deepEqual(root[field], pkg[field], `package-lock.json's root "${field}" differs from package.json's: run npm install --package-lock-only`);
    }
  });
});

describe("every command block of the docs has a test", () => {
  test("no block without a plan, no plan without its block", () => {
    for (const { file, key } of inventory) assert.ok(key in plans, `${file}: no test runs the block starting "${key}"`);
    for (const key of Object.keys(plans)) assert.ok(inventory.some((b) => b.key === key), `a plan for a block no doc has: "${key}"`);
  });
});

describe("npm install says nothing a newcomer must decide", () => {
  test("every installed package with an install script has a recorded allowScripts decision", () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path.startsWith("node_modules/") && p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + 13));
    assert.ok(withScripts.length > 0, "the lock file lists the packages with install scripts");
    for (const name of withScripts) assert.ok(name in (pkg.allowScripts ?? {}), `${name} has an install script and no allowScripts entry`);
    // Bun's postinstall links its per-platform binary: refused, `bun` is a stub that only prints an error.
    assert.equal(pkg.allowScripts?.bun, true, "Bun's install script must run");
  });
});

describe("the docs' commands run as written", { skip: onDeno ? false : "run once, under Deno" }, () => {
  for (const { file, block, key } of inventory) {
    test(`${file}: ${key.slice(0, 70)}`, { timeout: 300_000 }, async (t) => {
      const plan = plans[key];
      assert.ok(plan, `no plan for "${key}"`);
      await plan(block, t);
    });
  }
});
