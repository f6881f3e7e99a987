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
