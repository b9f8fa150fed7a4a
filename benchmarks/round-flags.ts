/**
 * The flags of the benchmarks that alternate rounds of cells between C and the runtimes (bench:accel, bench:rdma):
 * one definition and one check of --rounds, --seconds, --sizes and --runtimes (exit 2 through UsageError), each
 * benchmark giving its own defaults and bounds.
 */
import { positiveInt, UsageError } from "../tasks/common/cli.ts";
import { type RuntimeName, RUNTIMES } from "./runtimes.ts";

export const ROUND_FLAGS = {
  rounds: { type: "string" },
  seconds: { type: "string" },
  sizes: { type: "string" },
  runtimes: { type: "string" },
  json: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export interface RoundSettings {
  rounds: number;
  /** Seconds per cell. */
  seconds: number;
  sizes: number[];
  runtimes: RuntimeName[];
}

/** The settings the flags ask for: 3 rounds of 0.5 s per cell unless given; sizes and runtimes from `d` unless given. */
export function roundSettings(
  values: { rounds?: string; seconds?: string; sizes?: string; runtimes?: string },
  d: { maxRounds: number; sizes: number[]; maxSize: number; runtimes: RuntimeName[] },
): RoundSettings {
  const rounds = values.rounds ? positiveInt(values.rounds, "--rounds", d.maxRounds) : 3;
  const seconds = values.seconds ? Number(values.seconds) : 0.5;
  if (!(seconds > 0 && seconds <= 60)) throw new UsageError(`--seconds: expected 0 < S ≤ 60, got ${values.seconds}`);
  const sizes = values.sizes ? values.sizes.split(",").map((s) => positiveInt(s, "--sizes", d.maxSize)) : d.sizes;
  const runtimes = values.runtimes ? values.runtimes.split(",") as RuntimeName[] : d.runtimes;
  for (const r of runtimes) if (!RUNTIMES.includes(r)) throw new UsageError(`--runtimes: unknown runtime ${r}`);
  return { rounds, seconds, sizes, runtimes };
}
