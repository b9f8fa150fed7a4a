/**
 * doca-ts public API: NVIDIA DOCA (devices, memory maps, buffers, progress engine, DMA, Comch) from Deno, Bun and
 * Node. See ffi/README.md. The tasks (DMA Copy, its steps, CLI helpers) have their own entry: tasks/mod.ts.
 * Diagnostics (measureCallOverhead, setNativeEnv, the REPL's unsafeHandle): ffi/diagnostics.ts.
 */
export { describeDevice, type DocaLibraryInfo, liveObjects, loadDoca } from "./ffi/library.ts";
export { DocaError, OverflowError, TimeoutError } from "./ffi/errors.ts";
export { Access, CtxState, DocaErrorCode, RepFilter } from "./ffi/constants.ts";
export { Device, type DeviceCaps, type RdmaCaps, type DeviceInfo, DeviceRep, listDevices, openDevice, type RepInfo } from "./ffi/device.ts";
export { NativeMemory } from "./ffi/memory.ts";
export { Mmap, type MmapOptions } from "./ffi/mmap.ts";
export { Buf, BufInventory } from "./ffi/buf.ts";
export { ProgressEngine } from "./ffi/pe.ts";
export { Dma, type DmaOptions, type DmaRange, type DmaRangeCopyOptions } from "./ffi/dma.ts";
export { ComchConnection } from "./ffi/comch-connection.ts";
export { ComchServer, type ComchServerOptions } from "./ffi/comch-server.ts";
export { ComchClient, type ComchClientOptions } from "./ffi/comch-client.ts";
export { ComchConsumer } from "./ffi/comch-consumer.ts";
export { ComchProducer } from "./ffi/comch-producer.ts";
export type { FastPathCreateOptions, FastPathMessage, FastPathOptions } from "./ffi/comch-fastpath-common.ts";

export {
  Rdma,
  RdmaConnection,
  type RdmaMessage,
  RdmaOpcode,
  type RdmaOptions,
  type RdmaReceived,
  RdmaTransport,
} from "./ffi/rdma.ts";
