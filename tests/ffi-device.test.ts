import { describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { HOST_PCI } from "./helpers/sim-env.ts";
import { noLiveCounter } from "./helpers/live-objects.ts";
import { Device, DocaError, listDevices, liveObjects, loadDoca } from "../mod.ts";
import { candidateDirs, discoverLibraries } from "../ffi/load/discover.ts";
import { runningFromPackage } from "../ffi/load/install-kind.ts";

describe("ffi: library and devices", () => {
  test("loadDoca reports where DOCA came from and its version", () => {
    const info = loadDoca();
    assert.match(info.files.common, /libdoca_common\.so/);
    assert.match(info.files.dma, /libdoca_dma\.so/);
    assert.match(info.files.comch, /libdoca_comch\.so/);
    assert.match(info.version, /^\d+\.\d+/);
    assert.equal(typeof info.isSoftwareDevice, "boolean");
    assert.equal(loadDoca(), info, "a lazy singleton");
  });

  test("discovery failure lists every path tried and how to fix it", () => {
    assert.throws(() => discoverLibraries("/nonexistent/doca"), (e: unknown) => {
      const message = String(e);
      for (const suffix of [".so", ".so.3", ".so.2"]) assert.ok(message.includes(`/nonexistent/doca/libdoca_common${suffix}`), message);
      assert.match(message, /DOCA_LIB_DIR/);
      // The fix that applies to this kind of install: a clone builds with the task, a package user needs a compiler
      assert.match(message, runningFromPackage() ? /install a C compiler/ : /deno task sim:build/);
      return true;
    });
    const defaults = candidateDirs();
    if (!process.env.DOCA_LIB_DIR) {
      assert.match(defaults[0], /^\/opt\/mellanox\/doca\/lib\/(x86_64|aarch64)-linux-gnu$/);
      assert.equal(defaults[1], "/opt/mellanox/doca/lib64");
      assert.match(defaults[2], /build\/sim\/lib$/);
    }
  });

  test("listDevices shows the host function with DMA and Comch client capabilities", () => {
    const devices = listDevices();
    const host = devices.find((d) => d.pciAddr === HOST_PCI);
    assert.ok(host, `expected ${HOST_PCI} in ${JSON.stringify(devices.map((d) => d.pciAddr))}`);
    assert.equal(host.caps.dmaMemcpy, true);
    assert.equal(host.caps.dmaMaxBufSize, 2 * 1024 * 1024);
    assert.ok(host.caps.dmaMaxBufListLen >= 1);
    assert.ok(host.ibdevName.length > 0);
  });

  test("Device.open accepts both PCI spellings", { skip: noLiveCounter }, () => {
    const before = liveObjects();
    for (const spelling of [HOST_PCI, HOST_PCI.slice(5)]) {
      const dev = Device.open(spelling);
      assert.equal(dev.info.pciAddr, HOST_PCI);
      assert.match(String(dev), new RegExp(HOST_PCI));
      dev.close();
      assert.match(String(dev), /closed/);
    }
    assert.equal(liveObjects(), before, "every device handle was released");
  });

  test("Device.open() with no address opens the first device, as openDevice() does; a non-string says what it wants", () => {
    const first = listDevices()[0];
    const dev = Device.open();
    try {
      assert.equal(dev.info.pciAddr, first.pciAddr);
    } finally {
      dev.close();
    }
    for (const bad of [42, "", null]) {
      assert.throws(() => Device.open(bad as unknown as string), (e: unknown) => e instanceof TypeError && /PCI address such as "03:00\.0"/.test((e as Error).message));
    }
  });

  test("a bad PCI address is a DocaError listing the available ones", () => {
    for (const bad of ["ff:1f.7", "0000:ff:1f.7", "nonsense"]) {
      assert.throws(() => Device.open(bad), (e: unknown) => {
        assert.ok(e instanceof DocaError);
        assert.equal(e.docaName, "DOCA_ERROR_NOT_FOUND");
        assert.equal(e.code, 16);
        assert.match(e.message, new RegExp(HOST_PCI));
        return true;
      });
    }
  });

  test("use after close throws a clear Error, double close is harmless", () => {
    const dev = Device.open(HOST_PCI);
    dev.close();
    dev.close();
    assert.throws(() => dev.openRepresentor("0000:b1:00.1"), /Device 0000:b1:00.1 is closed/);
    assert.equal(Object.keys(dev).includes("handle"), false, "no pointer on the public surface");
    assert.equal("handle" in dev, false, "no pointer getter either");
    assert.throws(() => dev.listRepresentors(), /is closed/);
  });
});
