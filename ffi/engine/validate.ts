/**
 * Option checks run before any native object exists, identically on Deno, Bun and Node (their FFI layers would
 * otherwise truncate, wrap or reject differently: Bun and Node pass `2**32 + 1` to a uint32_t as 1, NaN as 0).
 */
import { Access } from "../native/constants.ts";

/** Every access flag DOCA defines, or-ed: anything outside is not a permission mask. */
export const ACCESS_MASK: number = Object.values(Access).reduce<number>((all, flag) => all | flag, 0);

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** An integer from `min` to `max`; `undefined` passes (the caller's default applies). */
export function integerIn(where: string, name: string, value: unknown, min: number, max: number): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${where}: ${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
}

/** A timeout in milliseconds (fractions allowed): 0 .. 2^31-1, the range every runtime's timers honour. */
export function duration(where: string, name: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !(value >= 0) || value > 2 ** 31 - 1) {
    throw new RangeError(`${where}: ${name} must be a number of milliseconds from 0 to 2147483647, got ${describe(value)}`);
  }
}

/** A length or address: a safe non-negative integer. */
export function nonNegative(where: string, name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${where}: ${name} must be a non-negative safe integer, got ${describe(value)}`);
  }
}

/** An mmap permission mask: an integer made only of Access flags. */
export function permissionMask(where: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || (value & ~ACCESS_MASK) !== 0 || value > ACCESS_MASK) {
    throw new RangeError(
      `${where}: permissions must combine Access flags (an integer within 0x${ACCESS_MASK.toString(16)}), got ${describe(value)}`,
    );
  }
}

/** Tasks a context preallocates: DOCA allocates them all at start, so a huge number costs gigabytes before failing. */
export const MAX_TASKS = 65_536;
