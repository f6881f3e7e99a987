/** When to try a delivery again: exponential backoff with full jitter, and the destination's own Retry-After. */
import { parseRetryAfterMs } from '../../protocol/retry-after';

export interface BackoffPolicy {
  /** Delay ceiling of the first retry, in milliseconds. */
  baseMs: number;
  /** No retry waits longer than this (before a destination's Retry-After, which wins). */
  capMs: number;
  /** Sends of one action before it is failed for good. */
  maxAttempts: number;
}

/** 1 s, doubling, at most 10 minutes; twelve sends span roughly 27 minutes at worst before an action fails. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 10 * 60_000, maxAttempts: 12 };

/** A destination may ask for at most this long a pause (a larger Retry-After is clamped, not obeyed blindly). */
export const RETRY_AFTER_MAX_MS = 6 * 60 * 60_000;

/**
 * Delay before the next send after `attempts` failed sends (1 for the first failure): "full jitter", a uniform
 * random delay between 0 and min(cap, base * 2^(attempts-1)), so many rows failing together do not retry together.
 */
export function backoffDelayMs(attempts: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 30));
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}

/**
 * A destination's Retry-After header as milliseconds from `now`, clamped to [0, RETRY_AFTER_MAX_MS]; null when absent or
 * not a Retry-After (whole seconds or an HTTP-date, read by the one parser in src/protocol/retry-after.ts: `1.5` is null).
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  const ms = parseRetryAfterMs(value, now.getTime());
  return ms === null ? null : Math.min(RETRY_AFTER_MAX_MS, ms);
}

/** Parses a protobuf Duration as JSON-mapped ("30s", "1.5s") into milliseconds; null when it is not one. */
export function parseDuration(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Math.min(RETRY_AFTER_MAX_MS, Math.round(Number(match[1]) * 1000)) : null;
}
