import { describe, expect, it } from 'vitest';
import { backoffDelayMs, retryDelayMs, type BackoffSettings } from '../../src/client/backoff';
import { parseRetryAfterMs } from '../../src/protocol/retry-after';

const SETTINGS: BackoffSettings = { baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 30_000 };
const almostOne = () => 1 - Number.EPSILON;

describe('backoffDelayMs', () => {
  it('doubles the ceiling per failed attempt until maxDelayMs', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((n) => backoffDelayMs(n, SETTINGS, almostOne))).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999]);
  });

  it('draws the whole wait from the jitter (full jitter): zero at random 0, half at random 0.5', () => {
    expect(backoffDelayMs(3, SETTINGS, () => 0)).toBe(0);
    expect(backoffDelayMs(3, SETTINGS, () => 0.5)).toBe(1000);
  });
});

describe('parseRetryAfterMs (the one Retry-After parser, shared with delivery)', () => {
  const now = Date.UTC(2026, 10, 21, 9, 30, 0);
  it('reads delay-seconds', () => {
    expect(parseRetryAfterMs('0', now)).toBe(0);
    expect(parseRetryAfterMs(' 120 ', now)).toBe(120_000);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfterMs('Sat, 21 Nov 2026 09:30:45 GMT', now)).toBe(45_000);
  });

  it('treats a date in the past as no wait', () => {
    expect(parseRetryAfterMs('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores an absent or unreadable value', () => {
    expect(parseRetryAfterMs(null, now)).toBeNull();
    expect(parseRetryAfterMs('soon', now)).toBeNull();
    expect(parseRetryAfterMs('-5', now)).toBeNull();
    expect(parseRetryAfterMs('', now)).toBeNull();
  });

  it('refuses fractional seconds: RFC 9110 delay-seconds is whole digits, so `1.5` is not a Retry-After', () => {
    expect(parseRetryAfterMs('1.5', now)).toBeNull();
    expect(parseRetryAfterMs('1e3', now)).toBeNull();
  });
});

describe('retryDelayMs', () => {
  it('waits the backoff when there is no Retry-After', () => {
    expect(retryDelayMs(2, null, SETTINGS, () => 0.5)).toBe(500);
  });

  it('waits at least the Retry-After, but never more than maxRetryAfterMs', () => {
    expect(retryDelayMs(1, 5000, SETTINGS, () => 0)).toBe(5000);
    expect(retryDelayMs(5, 100, SETTINGS, almostOne)).toBe(7999);
    expect(retryDelayMs(1, 3_600_000, SETTINGS, () => 0)).toBe(30_000);
  });
});
