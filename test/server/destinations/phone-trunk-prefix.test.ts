/**
 * A phone written with its national trunk prefix in parentheses (`+44 (0)20 7946 0958`, as UK, German, Swiss, Dutch and
 * Australian numbers often are) is the number without it on every platform: hashed with the 0, it matches nobody (and
 * erasure, which reads it without the 0, would not find what was sent). Parentheses around other digits stay digits.
 */
import { describe, expect, it } from 'vitest';
import { normalizePhone as google } from '../../../src/server/destinations/google-ads/identity';
import { normalizePhone as meta } from '../../../src/server/destinations/meta/identity';
import { normalizePhone as microsoft } from '../../../src/server/destinations/microsoft-ads/identity';
import { canonicalizePhone as reddit } from '../../../src/server/destinations/reddit/identity';
import { normalizePhone as tiktok } from '../../../src/server/destinations/tiktok/identity';
import { normalizePhoneE164 } from '../../../src/protocol/identity';

const platforms = { google, meta, microsoft, reddit, tiktok } as const;

describe('a phone with a trunk prefix in parentheses, on every platform', () => {
  for (const [platform, normalize] of Object.entries(platforms)) {
    it(`${platform}: +44 (0)20 7946 0958 is +44 20 7946 0958, as erasure reads it`, () => {
      const plain = normalize('+44 20 7946 0958');
      expect(plain).not.toBeNull();
      expect(normalize('+44 (0)20 7946 0958')).toBe(plain);
      expect(normalize('+44 ( 0 ) 20 7946 0958')).toBe(plain);
      expect(normalize('0044 (0)20 7946 0958')).toBe(plain);
      // The same digits as the shared reader's E.164 (Meta's form has no `+`).
      expect(`+${plain!.replace(/^\+/, '')}`).toBe(normalizePhoneE164('+44 (0)20 7946 0958'));
    });

    it(`${platform}: parentheses around other digits are grouping, kept`, () => {
      expect(normalize('+1 (800) 555-0100')!.replace(/^\+/, '')).toBe('18005550100');
      expect(normalize('+31 (10) 123 4567')!.replace(/^\+/, '')).toBe('31101234567');
    });
  }
});
