/**
 * doca-ts tasks: the DMA Copy application, its steps and the small CLI helpers, for scripts and the REPL. The
 * library itself (devices, memory maps, DMA, Comch) is mod.ts at the repository root; this module builds on it.
 *
 * The DMA Copy steps, in the order of NVIDIA's guide:
 *   host: exportMmap → sendDescriptor                     (steps/export-mmap.ts, steps/exchange-descriptor.ts)
 *   DPU:  receiveDescriptor → importDescriptor → submitDmaCopy → pollUntilComplete   (…, steps/dma-transfer.ts)
 * over a Messenger (wire/messenger.ts) speaking the messages of wire/protocol.ts.
 */
export { dmaCopy, type DmaCopyOptions, formatSummary, parseDmaCopyArgs, type Summary as DmaCopySummary } from "./dma-copy.ts";
export { describeExport, type ExportedMmap, exportMmap } from "./steps/export-mmap.ts";
export { type DescriptorMsg, importDescriptor, receiveDescriptor, sendDescriptor } from "./steps/exchange-descriptor.ts";
export { type DmaCompletion, dmaTransfer, pollUntilComplete, submitDmaCopy, type TransferEnd } from "./steps/dma-transfer.ts";
export { type MessageChannel, Messenger, type MessengerOptions, PeerFailedError, PeerLostError } from "./wire/messenger.ts";
export * as protocol from "./wire/protocol.ts";
export { dmaLocalCopy, type LocalCopyResult } from "./dma-local-copy.ts";
export { compressFile, type CompressFileOptions, type CompressFileResult } from "./compress.ts";
export { CorruptInputError, decompressFile, type DecompressFileOptions, type DecompressFileResult } from "./decompress.ts";
export { type FileDigest, FileHasher, listLine, parseListLine } from "./sha.ts";
export { type CryptOptions, type CryptResult, decryptFile, encryptFile } from "./crypt/stream.ts";
export { ecEncode, type EncodeOptions as EcEncodeOptions, ecRecover, type Manifest as EcManifest, type RecoverOptions as EcRecoverOptions } from "./ec/codec.ts";
export { runComchServer, type ServerRun } from "./comch-server.ts";
export { runComchClient } from "./comch-client.ts";
export { type StreamReport, streamConsumer, streamProducer } from "./comch-stream.ts";
export { type DeviceListing, listDevicesWithReps } from "./devices.ts";
export { parseRdmaCopyArgs, rdmaCopy, type RdmaCopyOptions, type TransferResult as RdmaCopyResult } from "./rdma-copy.ts";
export { parseRdmaPingArgs, type PingResult, rdmaPing, type RdmaPingOptions } from "./rdma-ping.ts";
export { Channel, Link, openRdmaDevice, parseEndpoint } from "./rdma/link.ts";
export { InterruptedError, stopOnSignals } from "./common/interrupt.ts";
export { applySide, openDeviceOf } from "./common/device.ts";
export { userPath } from "./common/user-path.ts";
export { OptionsError } from "./common/options-check.ts";
export { printable, printableJson } from "../ffi/engine/printable.ts";
