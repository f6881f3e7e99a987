import { describe, expect, it } from 'vitest';
import { hashedUserIdentifiers, normalizeEmail, normalizeName, normalizePhone } from '../../../../src/server/destinations/google-ads/identity';
import { sha256Hex } from '../../../../src/server/destinations/hashing';

// Vectors published by Google with its Data Manager utility (googleads/data-manager-node, util/test/formatter.test.ts).
const ALEXZ_HASH = '509e933019bb285a134a9334b8bb679dff79d0ce023d529af4bd744d47b4fd8a';
const PHONE_HASH = 'fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30';

describe('Google email normalisation', () => {
  it('trims, lower-cases and hashes every variant of an address to the same published hash', () => {
    for (const raw of ['alexz@example.com', '  alexz@example.com', '  ALEXZ@example.com   ', '  alexz@EXAMPLE.com   ']) {
      expect(sha256Hex(normalizeEmail(raw)!)).toBe(ALEXZ_HASH);
    }
  });

  it('removes intermediate whitespace as the formatting guide asks', () => {
    expect(normalizeEmail('alex z@example.com')).toBe('alexz@example.com');
  });

  it('removes the dots before the @ of gmail.com and googlemail.com addresses only', () => {
    expect(normalizeEmail('jefferson.Loves.hiking@gmail.com')).toBe('jeffersonloveshiking@gmail.com');
    expect(normalizeEmail('j.e.f..ferson.Loves.hiking@googlemail.com')).toBe('jeffersonloveshiking@googlemail.com');
    expect(normalizeEmail('user.name@example.com')).toBe('user.name@example.com');
  });

  it('removes the +tag of a gmail.com or googlemail.com address and keeps it elsewhere, the formatting guide’s two examples', () => {
    expect(normalizeEmail('user.name+NYC@Example.com')).toBe('user.name+nyc@example.com');
    expect(normalizeEmail('cloudy.sanfrancisco+shopping@gmail.com')).toBe('cloudysanfrancisco@gmail.com');
    expect(normalizeEmail('Cloudy.San+Fran.cisco+x@GoogleMail.com')).toBe('cloudysan@googlemail.com');
    expect(normalizeEmail('+tagonly@gmail.com')).toBeNull();
  });

  it('refuses what is not one user@domain', () => {
    for (const raw of ['quinn', '@example.com', 'a@b@c', 'quinn@', '', null, undefined]) expect(normalizeEmail(raw)).toBeNull();
  });
});

describe('Google phone normalisation', () => {
  it('formats a number with its country code to E.164 and hashes it to the published hash', () => {
    for (const raw of ['+18005550100', '   +1-800-555-0100', '+1 (800) 555-0100', '0018005550100']) {
      expect(normalizePhone(raw)).toBe('+18005550100');
      expect(sha256Hex(normalizePhone(raw)!)).toBe(PHONE_HASH);
    }
    expect(normalizePhone('+44-113-496-0987')).toBe('+441134960987');
  });

  it('refuses a number without a country code rather than guess one', () => {
    for (const raw of ['(800)555-0100', '0113 496 0987', '+0123456789', '+abc-DEF', '++++', '+1234', '+1234567890123456']) {
      expect(normalizePhone(raw)).toBeNull();
    }
  });
});

describe('hashed user identifiers', () => {
  it('sends the email then the phone, hashed, and never the names', () => {
    const ids = hashedUserIdentifiers({ email: ' ALEXZ@example.com', phone: '+1 800 555 0100', first_name: 'Alex', last_name: 'Z' });
    expect(ids).toEqual([{ emailAddress: ALEXZ_HASH }, { phoneNumber: PHONE_HASH }]);
  });

  it('leaves out what cannot be normalised', () => {
    expect(hashedUserIdentifiers({ email: 'not-an-email', phone: '555-0100' })).toEqual([]);
  });

  it('normalises names as Google does, matching its published hash', () => {
    expect(sha256Hex(normalizeName('  GivenName  ')!)).toBe('128a07bfe2df877c52076e60d7774cf5baaa046c5a6c48daf30ff43ecca2f814');
    expect(normalizeName('   ')).toBeNull();
  });
});
