import { describe, expect, it } from 'vitest';
import { hashIdentityForGoogleAds } from '../../../src/server/destinations/google-ads/legacy-identity';
import { sha256Hex } from '../../../src/server/destinations/hashing';

// Google's normalisation rules themselves are tested against Google's published vectors in
// test/server/destinations/google-ads/identity.test.ts; here, what the legacy upload makes of them.
describe('identity for the legacy Google Ads upload', () => {
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
