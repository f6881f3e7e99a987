import { describe, expect, it } from 'vitest';
import { backoffDelayMs, parseDuration, parseRetryAfter, RETRY_AFTER_MAX_MS } from '../../../src/server/delivery/backoff';

const policy = { baseMs: 1000, capMs: 600_000, maxAttempts: 12 };

describe('retry backoff', () => {
  it('draws a full-jitter delay below base * 2^(attempts-1)', () => {
    expect(backoffDelayMs(1, policy, () => 0.999)).toBe(999);
    expect(backoffDelayMs(4, policy, () => 0.5)).toBe(4000);
    expect(backoffDelayMs(4, policy, () => 0)).toBe(0);
  });

  it('never waits longer than the cap, however many attempts', () => {
    expect(backoffDelayMs(11, policy, () => 0.999)).toBe(599_400);
    expect(backoffDelayMs(500, policy, () => 0.999)).toBe(599_400);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter(String(10 * 24 * 3600), now)).toBe(RETRY_AFTER_MAX_MS);
  });

  it('refuses fractional seconds, like the client: RFC 9110 delay-seconds is whole digits, so `1.5` is not a Retry-After', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(parseRetryAfter('1.5', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
  });

  it('reads protobuf durations such as a RetryInfo retryDelay', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('30')).toBeNull();
  });
});
