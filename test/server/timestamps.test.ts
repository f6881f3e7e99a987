import { describe, expect, it } from 'vitest';
import { isIsoTimestamp, isStorableTimestamp } from '../../src/server/http/timestamps';

describe('isIsoTimestamp (an ISO 8601 date-time with a zone, naming a real calendar instant)', () => {
  it.each([
    '2026-11-21T09:30:00.000Z',
    '2026-11-21T09:30:00Z',
    '2026-11-21T09:30Z',
    '2026-11-21T09:30:00.1Z',
    '2026-11-21T09:30:00.123456789Z',
    '2026-11-21T09:30:00+02:00',
    '2026-11-21T09:30:00.5-05:30',
    '2026-11-21T23:59:59+23:59',
    '2024-02-29T00:00:00Z', // a leap year
    '2000-02-29T00:00:00Z', // divisible by 400: a leap year
    '0000-02-29T00:00:00Z', // year 0 of the proleptic Gregorian calendar is a leap year
    '2026-04-30T00:00:00Z',
    '2026-12-31T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
  ])('accepts %s', (value) => {
    expect(isIsoTimestamp(value)).toBe(true);
  });

  it.each([
    '2026-02-29T00:00:00Z', // not a leap year
    '2100-02-29T00:00:00Z', // divisible by 100, not 400
    '2026-02-31T10:00:00Z', // Date.parse would roll it into March
    '2026-04-31T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-13-10T00:00:00Z',
    '2026-11-00T00:00:00Z',
    '2026-11-32T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T09:60:00Z',
    '2026-11-21T09:30:60Z',
    '2026-11-21T09:30:00+24:00',
    '2026-11-21T09:30:00+02:60',
    '2026-11-21T09:30:00', // no zone
    '2026-11-21t09:30:00z',
    '2026-11-21T09:30:00.1234567890Z', // more than nine fraction digits
    '2026-11-21T09:30:00+0200',
    '2026-11-21 09:30:00Z',
    '26-11-21T09:30:00Z',
    ' 2026-11-21T09:30:00Z',
    '2026-11-21T09:30:00Z ',
    '',
  ])('refuses %j', (value) => {
    expect(isIsoTimestamp(value)).toBe(false);
  });

  it('refuses what is not a string', () => {
    for (const value of [null, undefined, 0, 1_700_000_000_000, {}, [], new Date()]) expect(isIsoTimestamp(value)).toBe(false);
  });
});

describe('isStorableTimestamp (what PostgreSQL stores too)', () => {
  it('accepts offsets up to 15:59 either way', () => {
    expect(isStorableTimestamp('2026-11-21T09:30:00+15:59')).toBe(true);
    expect(isStorableTimestamp('2026-11-21T09:30:00-15:59')).toBe(true);
    expect(isStorableTimestamp('2026-11-21T09:30:00Z')).toBe(true);
  });

  it('refuses larger offsets, year 0000, and whatever is not an ISO timestamp', () => {
    expect(isStorableTimestamp('2026-11-21T09:30:00+16:00')).toBe(false);
    expect(isStorableTimestamp('2026-11-21T09:30:00-23:00')).toBe(false);
    expect(isStorableTimestamp('0000-01-01T00:00:00Z')).toBe(false);
    expect(isStorableTimestamp('0000-02-29T00:00:00Z')).toBe(false);
    expect(isStorableTimestamp('2026-02-31T10:00:00Z')).toBe(false);
    expect(isStorableTimestamp(42)).toBe(false);
  });
});
