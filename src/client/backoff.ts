/** How long to wait before the next attempt: exponential backoff with full jitter, and the server's Retry-After. */

export interface BackoffSettings {
  /** Ceiling of the first wait, in ms; doubled per failed attempt. */
  baseDelayMs: number;
  /** Largest backoff ceiling, in ms. */
  maxDelayMs: number;
  /** Largest Retry-After honoured, in ms: a longer one is shortened to this, so a report never stalls for hours. */
  maxRetryAfterMs: number;
}

/** Full-jitter backoff after the n-th failed attempt (1-based): uniform in [0, min(max, base * 2^(n-1))). */
export function backoffDelayMs(failedAttempts: number, settings: BackoffSettings, random: () => number): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.floor(random() * ceiling);
}

/** A Retry-After header (delay-seconds or HTTP-date) as milliseconds from now; null when absent or unreadable. */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with a day name; without this check Date.parse would read '-5' as a year.
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** The wait before the next attempt: the jittered backoff, but never less than the (capped) Retry-After. */
export function retryDelayMs(
  failedAttempts: number,
  retryAfterMs: number | null,
  settings: BackoffSettings,
  random: () => number,
): number {
  const backoff = backoffDelayMs(failedAttempts, settings, random);
  if (retryAfterMs === null) return backoff;
  return Math.max(backoff, Math.min(retryAfterMs, settings.maxRetryAfterMs));
}
