/**
 * doca-ts public API: NVIDIA DOCA (devices, memory maps, buffers, progress engine, DMA, Comch, RDMA) from Deno, Bun and
 * Node. See ffi/README.md. The tasks (DMA Copy, its steps, CLI helpers) have their own entry: tasks/mod.ts.
 * Diagnostics (measureCallOverhead, setNativeEnv, the REPL's unsafeHandle): ffi/diagnostics.ts.
 */
export { describeDevice, type DocaLibraryInfo, liveObjects, loadDoca } from "./ffi/native/library.ts";
export { DocaError, OverflowError, TimeoutError } from "./ffi/native/errors.ts";
export { Access, CtxState, DocaErrorCode, RepFilter } from "./ffi/native/constants.ts";
export { Device, type DeviceCaps, type RdmaCaps, type DeviceInfo, DeviceRep, listDevices, openDevice, type RepInfo } from "./ffi/doca/common/device.ts";
export { NativeMemory } from "./ffi/doca/common/memory.ts";
export { Mmap, type MmapOptions } from "./ffi/doca/common/mmap.ts";
export { Buf, BufInventory } from "./ffi/doca/common/buf.ts";
export { ProgressEngine } from "./ffi/engine/pe.ts";
export { Dma, type DmaOptions, type DmaRange, type DmaRangeCopyOptions } from "./ffi/doca/dma/dma.ts";
export { ComchConnection } from "./ffi/doca/comch/comch-connection.ts";
export { ComchServer, type ComchServerOptions } from "./ffi/doca/comch/comch-server.ts";
export { ComchClient, type ComchClientOptions } from "./ffi/doca/comch/comch-client.ts";
export { ComchConsumer } from "./ffi/doca/comch/comch-consumer.ts";
export { ComchProducer } from "./ffi/doca/comch/comch-producer.ts";
export type { FastPathCreateOptions, FastPathMessage, FastPathOptions } from "./ffi/doca/comch/comch-fastpath-common.ts";

export {
  Rdma,
  RdmaConnection,
  type RdmaMessage,
  RdmaOpcode,
  type RdmaOptions,
  type RdmaReceived,
  RdmaTransport,
} from "./ffi/doca/rdma/rdma.ts";
export {
  Compress,
  type CompressCaps,
  type CompressOptions,
  type DeflateResult,
  type Lz4Result,
  type Lz4StreamOptions,
} from "./ffi/doca/compress/compress.ts";
export { Sha, ShaAlgorithm, type ShaAlgorithmName, type ShaCaps, type ShaOptions, ShaPartial } from "./ffi/doca/sha/sha.ts";
export {
  CodingMatrix,
  EC_BLOCK_ALIGN,
  ErasureCoding,
  type ErasureCodingCaps,
  type ErasureCodingOptions,
  type MatrixRole,
  type MatrixType,
} from "./ffi/doca/erasure_coding/erasure-coding.ts";
export { AesGcm, type AesGcmBatchItem, type AesGcmCaps, AesGcmKey, type AesGcmOptions, type AesGcmParams, type AesGcmTagSize } from "./ffi/doca/aes_gcm/aes-gcm.ts";
