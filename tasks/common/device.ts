/**
 * Device choices every task makes the same way: which side this process is (on the software device the library
 * learns it from DOCA_SIM_SIDE), the device to open (-p, else the first one, with a clear error when there is none),
 * and a Comch server whose failures say what the user must change (wrong side, name already served).
 */
import process from "node:process";
import { ComchServer, type ComchServerOptions } from "../../ffi/doca/comch/comch-server.ts";
import { ComchClient, type ComchClientOptions } from "../../ffi/doca/comch/comch-client.ts";
import { loadDoca } from "../../ffi/native/library.ts";
import { softwareDeviceFolderError } from "./environment.ts";
import { type Device, openDevice } from "../../ffi/doca/common/device.ts";
import { DocaError } from "../../ffi/native/errors.ts";
import { setNativeEnv } from "../../ffi/diagnostics.ts";

/**
 * Tells the software device which side this process is, before it lists devices. Bun does not forward
 * process.env writes to C's getenv, hence setNativeEnv too. Harmless with real DOCA (it ignores the variable).
 */
export function applySide(side: "host" | "dpu"): void {
  if (process.env.DOCA_SIM_SIDE === side) return;
  process.env.DOCA_SIM_SIDE = side;
  setNativeEnv("DOCA_SIM_SIDE", side);
}

/**
 * The side a role implies (a Comch server or consumer runs on the DPU, a client or producer on the host), applied
 * when nothing chose one: a program calling runComchServer() needs no DOCA_SIM_SIDE, as one calling dmaCopy() needs
 * none. An explicit DOCA_SIM_SIDE (or --side) wins, and a wrong one still fails with the words of requireServerSide.
 */
export function applyRoleSide(side: "host" | "dpu"): void {
  if (process.env.DOCA_SIM_SIDE === undefined || process.env.DOCA_SIM_SIDE === "") applySide(side);
}

/** openDevice (-p/--pci-addr's device, or the first one listed), with the flag to use when there is none. */
export function openDeviceOf(pciAddr: string | undefined): Device {
  try {
    return openDevice(pciAddr || undefined);
  } catch (e) {
    if (pciAddr || !(e instanceof DocaError) || e.docaName !== "DOCA_ERROR_NOT_FOUND") throw e;
    throw new Error("no DOCA device found on this side; give one with -p/--pci-addr (see the devices task)", { cause: e });
  }
}

/** The device must be able to run a Comch server: only a DPU can. */
export function requireServerSide(device: Device, task: string): void {
  if (!device.info.caps.comchServer) {
    // The software device reads DOCA_SIM_SIDE once, at its first device listing: a side set after that is too late
    if (loadDoca().isSoftwareDevice && process.env.DOCA_SIM_SIDE === "dpu") {
      throw new Error(
        `${task} must run on the DPU side: device ${device.info.pciAddr} cannot run a Comch server (it is a host ` +
          `function). This process's software device chose the host side at its first DOCA call, before ` +
          `DOCA_SIM_SIDE=dpu was set: set DOCA_SIM_SIDE=dpu (or applySide("dpu")) before any other DOCA call.`,
      );
    }
    throw new Error(
      `${task} must run on the DPU side: device ${device.info.pciAddr} cannot run a Comch server (it is a host ` +
        `function). On the software device run it with --side dpu (or DOCA_SIM_SIDE=dpu).`,
    );
  }
}

/**
 * On the software device, fails naming DOCA_SIM_DIR when the device would refuse its folder (Comch lives there):
 * the device itself only logs it and answers NOT_PERMITTED, and a client would wait out its whole --timeout.
 */
export function requireUsableSoftwareDeviceFolder(): void {
  if (!loadDoca().isSoftwareDevice) return;
  const problem = softwareDeviceFolderError();
  if (problem) throw new Error(problem);
}

/**
 * ComchClient.connect, after requireUsableSoftwareDeviceFolder. A refused folder throws at once rather than
 * rejecting: the callers' rejection handlers reword a failed connect as "the server did not answer", which this is not.
 */
export function connectClient(opts: ComchClientOptions): Promise<ComchClient> {
  requireUsableSoftwareDeviceFolder();
  // A DPU device answers doca_comch_client_create with a bare NOT_SUPPORTED: say which side this is and what sets it
  if (!opts.device.info.caps.comchClient) {
    throw new Error(
      `a Comch client must run on the host side: device ${opts.device.info.pciAddr} cannot run a Comch client (it is ` +
        `a DPU device). On the software device run it with --side host (or DOCA_SIM_SIDE=host, or DOCA_SIM_SIDE unset).`,
    );
  }
  return ComchClient.connect(opts);
}

/** ComchServer.start, with "already served" in words (and the software device's folder checked first). */
export function startServer(opts: ComchServerOptions): ComchServer {
  requireUsableSoftwareDeviceFolder();
  try {
    return ComchServer.start(opts);
  } catch (e) {
    if (e instanceof DocaError && e.docaName === "DOCA_ERROR_IN_USE") {
      throw new Error(
        `a Comch server named "${opts.name}" is already running for this host function (another process serves ` +
          `it): stop it or pick another name (${e.message})`,
        { cause: e },
      );
    }
    throw e;
  }
}
