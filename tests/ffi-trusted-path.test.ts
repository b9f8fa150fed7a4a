/**
 * Code is loaded only from folders the user controls (issue 17 class 3): DOCA library folders and files, and the
 * folders the software device is built into, are refused when someone else owns them or could write them or
 * anything on the way to them, or planted a symbolic link on the way; the cache never falls back to a shared /tmp
 * path. Ownership attacks need root (only root can give a file away): they are skipped otherwise.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { preparePrivateFolder, probeCandidates, softwareDeviceCacheDir } from "../ffi/load/discover.ts";
import { buildSoftwareDevice } from "../ffi/load/sim-build/builder.ts";
import { checkTrustedPath, effectiveUid, untrustedReason } from "../ffi/load/trusted-path.ts";
import { runtimeCommand } from "./helpers/spawn-runtime.ts";
import { OPTIONAL_DOCA_LIBRARIES } from "../ffi/load/types.ts";

const NOBODY = 65534;
const isRoot = effectiveUid() === 0;
const repoLib = fileURLToPath(new URL("../build/sim/lib", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "doca-ts-trust-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let n = 0;
/** A private copy of the software device's libraries in <scratch>/<k>/lib (folders 0755). */
function libCopy(): { parent: string; lib: string } {
  const parent = join(scratch, String(++n));
  mkdirSync(parent, { mode: 0o755 });
  const lib = join(parent, "lib");
  cpSync(repoLib, lib, { recursive: true, verbatimSymlinks: true });
  chmodSync(lib, 0o755);
  return { parent, lib };
}

function rejection(dir: string): string | undefined {
  const [report] = probeCandidates(dir);
  return report.rejected;
}

describe("library folders and files are checked before they are loaded", () => {
  test("a folder of our own is accepted, and each check is reported", () => {
    const { lib } = libCopy();
    const [report] = probeCandidates(lib);
    assert.equal(report.rejected, undefined);
    // the folder, three libraries, and the optional ones this build has (RDMA and the accelerators: loaded too)
    const optional = OPTIONAL_DOCA_LIBRARIES.filter((name) => existsSync(join(lib, `libdoca_${name}.so.3`))).length;
    assert.equal(report.trust.length, 4 + optional, JSON.stringify(report.trust));
    assert.ok(report.trust.every((t) => t.trusted));
  });

  const attacks: [string, (c: { parent: string; lib: string }) => void, RegExp, boolean][] = [
    ["the folder is group-writable", (c) => chmodSync(c.lib, 0o775), /may be written by its group \(mode 0775\).*chmod go-w/, false],
    ["the folder is world-writable, even with the sticky bit", (c) => chmodSync(c.lib, 0o1777), /may be written by every user \(mode 01777\)/, false],
    ["a folder above it is world-writable", (c) => chmodSync(c.parent, 0o777), /may be changed by every user \(mode 0777, no sticky bit\)/, false],
    ["a library file is group-writable", (c) => chmodSync(join(c.lib, "libdoca_dma.so.3"), 0o664), /libdoca_dma\.so\.3 may be written by its group/, false],
    ["the optional libdoca_rdma is writable by others", (c) => chmodSync(join(c.lib, "libdoca_rdma.so.3"), 0o666), /libdoca_rdma\.so\.3 may be written by/, false],
    ["the optional libdoca_sha is writable by others", (c) => chmodSync(join(c.lib, "libdoca_sha.so.3"), 0o666), /libdoca_sha\.so\.3 may be written by/, false],
    ["the folder belongs to another user", (c) => lchownSync(c.lib, NOBODY, NOBODY), /is owned by uid 65534, not by this user/, true],
    ["a folder above it belongs to another user", (c) => lchownSync(c.parent, NOBODY, NOBODY), /is owned by uid 65534/, true],
    ["a library file belongs to another user", (c) => lchownSync(join(c.lib, "libdoca_comch.so.3"), NOBODY, NOBODY), /libdoca_comch\.so\.3 is owned by uid 65534/, true],
    ["the development link of a library was planted by another user", (c) => lchownSync(join(c.lib, "libdoca_common.so"), NOBODY, NOBODY), /libdoca_common\.so is not trusted: it is owned by uid 65534.*symbolic link someone else planted/, true],
  ];
  for (const [what, attack, expected, needsRoot] of attacks) {
    const optional = /libdoca_(rdma|sha)/.exec(what)?.[0];
    const notHere = optional !== undefined && !existsSync(join(repoLib, `${optional}.so.3`));
    test(`refused: ${what}`, { skip: needsRoot && !isRoot ? "only root can give a file away" : notHere ? `this build has no ${optional}` : false }, () => {
      const c = libCopy();
      attack(c);
      const reason = rejection(c.lib);
      assert.ok(reason, `${what}: accepted`);
      assert.match(reason, expected);
      const [report] = probeCandidates(c.lib);
      assert.equal(report.untrusted, true);
      assert.ok(report.trust.some((t) => !t.trusted && t.reason === reason));
    });
  }

  test("a link planted in a sticky shared folder by another user is refused; our own link there is followed", { skip: isRoot ? false : "needs root" }, () => {
    const { lib } = libCopy();
    const shared = join(scratch, `shared-${++n}`);
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const planted = join(shared, "planted");
    symlinkSync(lib, planted);
    assert.equal(rejection(planted), undefined, "our own link in a sticky folder");
    lchownSync(planted, NOBODY, NOBODY);
    assert.match(rejection(planted) ?? "accepted", /planted is not trusted: it is owned by uid 65534.*symbolic link someone else planted/);
  });

  test("\"link/..\" is checked where the kernel goes (the link target's parent), not where the text points", () => {
    const mine = libCopy();
    const theirs = libCopy();
    chmodSync(theirs.parent, 0o777); // someone else's playground, holding a "lib" that looks fine by itself
    mkdirSync(join(theirs.parent, "sub"));
    symlinkSync(join(theirs.parent, "sub"), join(mine.parent, "link"));
    // Text says <mine>/lib; the kernel opens <theirs>/lib.
    const tricky = `${mine.parent}/link/../lib`;
    assert.match(untrustedReason(tricky, "folder") ?? "accepted", /may be changed by every user \(mode 0777/);
    assert.match(untrustedReason(`${tricky}/libdoca_dma.so.3`, "file") ?? "accepted", /may be changed by every user/);
  });

  test("a link to a folder that is not ours is refused through the link; a loop of links is refused", () => {
    const c = libCopy();
    chmodSync(c.lib, 0o777);
    const via = join(c.parent, "via");
    symlinkSync("lib", via);
    assert.match(untrustedReason(via, "folder") ?? "accepted", /may be written by every user/);
    const a = join(c.parent, "a");
    symlinkSync("b", a);
    symlinkSync("a", join(c.parent, "b"));
    assert.match(untrustedReason(a, "folder") ?? "accepted", /more than 40 symbolic links/);
    assert.match(untrustedReason(join(c.parent, "missing"), "folder") ?? "accepted", /does not exist/);
    const good = libCopy();
    assert.match(untrustedReason(join(good.lib, "libdoca_dma.so.3"), "folder") ?? "accepted", /is not a folder/);
    symlinkSync("lib", join(good.parent, "via"));
    assert.doesNotThrow(() => checkTrustedPath(join(good.parent, "via", "..", "lib", "libdoca_dma.so"), "file"));
  });
});

describe("the software device is built only into folders of our own", () => {
  test("a world-writable output folder is refused before anything is compiled", () => {
    const out = join(scratch, `out-${++n}`);
    mkdirSync(join(out, "lib"), { recursive: true });
    chmodSync(join(out, "lib"), 0o777);
    assert.throws(() => buildSoftwareDevice({ outDir: out, tests: false }), /refusing to build into .*lib: .*may be written by every user/);
    assert.deepEqual(spawnSync("ls", [join(out, "lib")], { encoding: "utf8" }).stdout, "");
  });

  test("without $HOME and $XDG_CACHE_HOME the cache is a private per-user folder, never a shared /tmp/.cache", () => {
    const saved = { HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
    try {
      delete process.env.HOME;
      delete process.env.XDG_CACHE_HOME;
      assert.match(softwareDeviceCacheDir(), new RegExp(`^/tmp/doca-ts-${effectiveUid()}/doca-ts/sim-`));
      process.env.XDG_CACHE_HOME = "relative/cache"; // the XDG spec says to ignore relative paths
      process.env.HOME = "/home/someone";
      assert.match(softwareDeviceCacheDir(), /^\/home\/someone\/\.cache\/doca-ts\//);
    } finally {
      for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    }
  });

  test("the private folder is created with mode 0700; an existing one is used only when it is ours alone", () => {
    const fresh = join(scratch, `private-${++n}`);
    preparePrivateFolder(fresh);
    assert.equal(statSync(fresh).mode & 0o777, 0o700);
    preparePrivateFolder(fresh); // ours: reused
    const open = join(scratch, `private-${++n}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    assert.throws(() => preparePrivateFolder(open), /is not ours alone: .*may be written by every user.*Set XDG_CACHE_HOME/);
    if (isRoot) {
      const theirs = join(scratch, `private-${++n}`);
      mkdirSync(theirs, { mode: 0o700 });
      lchownSync(theirs, NOBODY, NOBODY);
      assert.throws(() => preparePrivateFolder(theirs), /owned by uid 65534/);
      const link = join(scratch, `private-${++n}`);
      symlinkSync(fresh, link);
      lchownSync(link, NOBODY, NOBODY);
      assert.throws(() => preparePrivateFolder(link), /symbolic link someone else planted/);
      assert.ok(lstatSync(link).isSymbolicLink());
    }
  });
});

describe("a task refuses an untrusted DOCA_LIB_DIR with one clear line", () => {
  test("devices and doctor name the folder and the reason; doctor reports each check", () => {
    const c = libCopy();
    chmodSync(c.lib, 0o777);
    const env = { ...process.env, DOCA_LIB_DIR: c.lib };
    const cmd = runtimeCommand(fileURLToPath(new URL("../tasks/devices.ts", import.meta.url)), []);
    const devices = spawnSync(cmd.command, cmd.args, { env, encoding: "utf8", cwd: fileURLToPath(new URL("..", import.meta.url)), timeout: 60_000 });
    assert.equal(devices.status, 1, devices.stderr);
    assert.match(devices.stderr, /^devices: error: DOCA libraries not found/);
    assert.match(devices.stderr, new RegExp(`Refused ${c.lib}: ${c.lib} is not trusted: it may be written by every user \\(mode 0777\\)`));
    assert.doesNotMatch(devices.stderr, /Uncaught| {4}at /);
    const d = runtimeCommand(fileURLToPath(new URL("../tasks/doctor.ts", import.meta.url)), []);
    const doctor = spawnSync(d.command, d.args, { env, encoding: "utf8", cwd: fileURLToPath(new URL("..", import.meta.url)), timeout: 60_000 });
    assert.equal(doctor.status, 1, doctor.stderr);
    assert.match(doctor.stdout, /trust REFUSED .*may be written by every user \(mode 0777\)/);
    assert.match(doctor.stdout, /PROBLEM DOCA in .* is not loaded: .*mode 0777/);
  });
});
