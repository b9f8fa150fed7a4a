/** DOCA constants doca-ts uses; values are DOCA 3.x's (doca_types.h, doca_mmap.h, doca_ctx.h, doca_dev.h). */

/** enum doca_access_flag: mmap permissions (combine with |). */
export const Access = {
  LOCAL_READ_ONLY: 0,
  LOCAL_READ_WRITE: 1,
  RDMA_READ: 2,
  RDMA_WRITE: 4,
  RDMA_ATOMIC: 8,
  PCI_READ_ONLY: 16,
  PCI_READ_WRITE: 32,
  PCI_RELAXED_ORDERING: 64,
} as const;

/** enum doca_ctx_states. */
export const CtxState = { IDLE: 0, STARTING: 1, RUNNING: 2, STOPPING: 3 } as const;
export const CTX_STATE_NAMES = ["idle", "starting", "running", "stopping"] as const;

/** enum doca_devinfo_rep_filter. */
export const RepFilter = { ALL: 0, NET: 2, EMULATED: 4 } as const;

/** String buffer sizes from doca_dev.h (include the NUL). */
export const DEVINFO_PCI_ADDR_SIZE = 13;
export const DEVINFO_IBDEV_NAME_SIZE = 64;
export const DEVINFO_IFACE_NAME_SIZE = 256;
export const DEVINFO_REP_VUID_SIZE = 128;

/** doca_error_t values (DOCA 2.x/3.x; 28-30 arrived in 3.0). */
export const DocaErrorCode = {
  SUCCESS: 0,
  UNKNOWN: 1,
  NOT_PERMITTED: 2,
  IN_USE: 3,
  NOT_SUPPORTED: 4,
  AGAIN: 5,
  INVALID_VALUE: 6,
  NO_MEMORY: 7,
  INITIALIZATION: 8,
  TIME_OUT: 9,
  SHUTDOWN: 10,
  CONNECTION_RESET: 11,
  CONNECTION_ABORTED: 12,
  CONNECTION_INPROGRESS: 13,
  NOT_CONNECTED: 14,
  NO_LOCK: 15,
  NOT_FOUND: 16,
  IO_FAILED: 17,
  BAD_STATE: 18,
  UNSUPPORTED_VERSION: 19,
  OPERATING_SYSTEM: 20,
  DRIVER: 21,
  UNEXPECTED: 22,
  ALREADY_EXIST: 23,
  FULL: 24,
  EMPTY: 25,
  IN_PROGRESS: 26,
  TOO_BIG: 27,
  AUTHENTICATION: 28,
  BAD_CONFIG: 29,
  SKIPPED: 30,
} as const;

/** "DOCA_SUCCESS" / "DOCA_ERROR_<NAME>" for a code, from our table (used when the library cannot tell us). */
export function fallbackErrorName(code: number): string {
  if (code === 0) return "DOCA_SUCCESS";
  const entry = Object.entries(DocaErrorCode).find(([, v]) => v === code);
  return entry ? `DOCA_ERROR_${entry[0]}` : `DOCA_ERROR_${code}`;
}
