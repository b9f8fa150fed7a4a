/** The flags every accelerator task (compress, decompress, sha, encrypt, decrypt, ec-encode, ec-recover) ends with. */
export const DEVICE_FLAGS = {
  "pci-addr": { type: "string", short: "p" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;
