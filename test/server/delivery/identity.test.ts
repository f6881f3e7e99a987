import { describe, expect, it } from 'vitest';
import {
  hashIdentityForGoogleAds,
  normalizeEmail,
  normalizePhone,
  sha256Hex,
} from '../../../src/server/destinations/google-ads/legacy-identity';

describe('identity normalisation for Google Ads', () => {
  it.each([
    ['  Jane.Doe@Gmail.com ', 'janedoe@gmail.com'],
    ['j.a.n.e@googlemail.com', 'jane@googlemail.com'],
    // Google's own sample: a period outside gmail.com/googlemail.com stays.
    ['alex.2@example.com', 'alex.2@example.com'],
    ['First.Last@Company.CO.UK', 'first.last@company.co.uk'],
    // Google documents no +suffix removal: the tag is kept.
    ['jane.doe+ads@gmail.com', 'janedoe+ads@gmail.com'],
    ['john@gmail.com.evil.example', 'john@gmail.com.evil.example'],
  ])('normalises the email %j to %j', (raw, expected) => {
    expect(normalizeEmail(raw)).toBe(expected);
  });

  it.each(['', 'no-at-sign', '@example.com', 'jane@', 'a@b@c', 'jane doe@example.com'])('refuses %j as an email address', (raw) => {
    expect(normalizeEmail(raw)).toBeNull();
  });

  it.each([
    // Google's sample phone, with spaces.
    ['+1 800 5550102', '+18005550102'],
    ['+1 (800) 555-0102', '+18005550102'],
    ['+44 20 7946 0958', '+442079460958'],
    ['+91.98765.43210', '+919876543210'],
  ])('puts the phone %j in E.164 as %j', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
  });

  it.each([
    ['(800) 555-0102', 'a national number says no country'],
    ['0044 20 7946 0958', 'an international dialling prefix is not E.164'],
    ['+0 123 4567', 'no country code starts with 0'],
    ['+1 800 CALL NOW', 'letters'],
    ['+1234567890123456', 'more than 15 digits'],
  ])('cannot normalise the phone %j (%s)', (raw) => {
    expect(normalizePhone(raw)).toBeNull();
  });

  it('hashes normalised values as lower-case hex SHA-256 (values checked with sha256sum)', () => {
    const hashed = hashIdentityForGoogleAds({ email: ' Jane.Doe@Gmail.com', phone: '+1 800 5550102', first_name: ' Jane ', last_name: "O'Brien" });
    expect(hashed).toEqual({
      email: 'd6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69',
      phone: 'c5383c2eeada28210d27f011bc127d4f9562cf38ff0c9bba33dd45ae79b9fe7c',
      skipped: [],
    });
    expect(sha256Hex('alex.2@example.com')).toBe('97a24240e3c76dfc0abdb63a3d73468ff8d94b81fd3dc084cc32994ba4fad7fe');
  });

  it('skips a national phone number with a note that says why and does not contain the number', () => {
    const hashed = hashIdentityForGoogleAds({ email: null, phone: '(800) 555-0102' });
    expect(hashed.phone).toBeNull();
    expect(hashed.skipped).toHaveLength(1);
    expect(hashed.skipped[0]).toMatch(/phone skipped: .*country code/);
    expect(hashed.skipped[0]).not.toContain('555');
  });

  it('ignores absent and blank fields without a note', () => {
    expect(hashIdentityForGoogleAds({ email: '  ', phone: null })).toEqual({ email: null, phone: null, skipped: [] });
  });
});
