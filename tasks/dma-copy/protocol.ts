/** The DMA Copy wire messages moved to tasks/wire/protocol.ts (shared by the steps and the application). */
export * from "../wire/protocol.ts";
