import { describe, expect, it } from 'vitest';
import { formatConversionDateTime, utcOffsetMinutes } from '../../../src/server/destinations/google-ads/conversion-time';

describe("conversion date-time in the site's timezone", () => {
  it.each([
    ['2026-07-04T16:30:15Z', 'America/New_York', '2026-07-04 12:30:15-04:00'], // summer: EDT
    ['2026-01-15T16:30:15Z', 'America/New_York', '2026-01-15 11:30:15-05:00'], // winter: EST
    ['2026-01-15T03:00:00Z', 'America/New_York', '2026-01-14 22:00:00-05:00'], // the local date is the day before
    ['2026-07-04T16:30:15Z', 'Asia/Kolkata', '2026-07-04 22:00:15+05:30'],
    ['2026-07-04T16:30:15Z', 'UTC', '2026-07-04 16:30:15+00:00'],
    ['2026-07-04T16:30:15Z', 'Asia/Kathmandu', '2026-07-04 22:15:15+05:45'],
    ['2026-07-04T16:30:15Z', 'America/St_Johns', '2026-07-04 14:00:15-02:30'],
    ['2026-12-31T23:59:59.999Z', 'Pacific/Kiritimati', '2027-01-01 13:59:59+14:00'],
  ])('formats %s in %s as %s', (iso, zone, expected) => {
    expect(formatConversionDateTime(new Date(iso), zone)).toBe(expected);
  });

  it('changes offset exactly at the New York daylight saving transitions', () => {
    // 2026-03-08 02:00 EST becomes 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT becomes 01:00 EST (06:00Z).
    expect(formatConversionDateTime(new Date('2026-03-08T06:59:59Z'), 'America/New_York')).toBe('2026-03-08 01:59:59-05:00');
    expect(formatConversionDateTime(new Date('2026-03-08T07:00:00Z'), 'America/New_York')).toBe('2026-03-08 03:00:00-04:00');
    expect(formatConversionDateTime(new Date('2026-11-01T05:59:59Z'), 'America/New_York')).toBe('2026-11-01 01:59:59-04:00');
    expect(formatConversionDateTime(new Date('2026-11-01T06:00:00Z'), 'America/New_York')).toBe('2026-11-01 01:00:00-05:00');
  });

  it('reports offsets in minutes east of UTC', () => {
    expect(utcOffsetMinutes(new Date('2026-07-04T00:00:00Z'), 'America/Los_Angeles')).toBe(-420);
    expect(utcOffsetMinutes(new Date('2026-07-04T00:00:00Z'), 'Asia/Kolkata')).toBe(330);
  });

  it('throws for an unknown timezone and an invalid date', () => {
    expect(() => formatConversionDateTime(new Date(), 'Mars/Olympus_Mons')).toThrow(RangeError);
    expect(() => formatConversionDateTime(new Date(Number.NaN), 'UTC')).toThrow(RangeError);
  });
});
