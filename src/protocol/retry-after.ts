/** HTTP `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. One parser for the client and the service. */

/**
 * A Retry-After value as milliseconds from `nowMs`; null when absent or not one of the two forms RFC 9110 allows
 * (delay-seconds is whole digits only, so `1.5` is null). A date in the past is 0.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with a day name; without this check Date.parse would read '-5' as a year.
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
